//! Plain (whole-body) requests through gloo-net: history pages, turn reads, lookups, cancels.
//! The live stream is not read here: its body is piped chunk by chunk into the engine by
//! [`super::fetch`] (web-sys `pipeTo` into a `WritableStream`), which gloo-net does not offer —
//! its `Response` reads bodies whole (`binary()`, `text()`) or hands out the raw stream.
use forgestream_core::session::{HttpRequest, Method};
use gloo_net::http::{Request, RequestBuilder};
use web_sys::{AbortSignal, RequestCache, RequestCredentials};

use super::failure;
use super::fetch::FetchError;

/// A whole response: status, the raw `Retry-After`, the body bytes.
pub struct Whole {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// `send()` failed: no response at all (engine texts differ; `failure` says it in our words).
fn request_error(e: gloo_net::Error) -> FetchError {
    failure::gloo(e, failure::REQUEST_FAILED)
}

/// Sends `request` with `headers` (the provider's pairs) and reads the whole body.
pub async fn send(
    request: &HttpRequest,
    headers: &[(String, String)],
    credentials: &str,
    signal: &AbortSignal,
) -> Result<Whole, FetchError> {
    let mut builder: RequestBuilder = match request.method {
        Method::Get => Request::get(&request.url),
        Method::Post => Request::post(&request.url),
    };
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder = builder
        .credentials(match credentials {
            "include" => RequestCredentials::Include,
            "omit" => RequestCredentials::Omit,
            _ => RequestCredentials::SameOrigin,
        })
        .abort_signal(Some(signal))
        // Never the HTTP cache: turn states and listings must be fresh (and see `fetch::send`
        // for how Firefox queues a second request behind a cached one).
        .cache(RequestCache::NoStore);
    let response = match &request.json_body {
        Some(body) => {
            builder
                .header("content-type", "application/json")
                .body(body.as_str())
                .map_err(request_error)?
                .send()
                .await
        }
        None => builder.send().await,
    }
    .map_err(request_error)?;
    let status = response.status();
    let retry_after = response.headers().get("retry-after");
    let body = response
        .binary()
        .await
        .map_err(|e| failure::gloo(e, failure::BODY_FAILED))?;
    Ok(Whole {
        status,
        retry_after,
        body,
    })
}
