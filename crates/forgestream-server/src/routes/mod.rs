//! HTTP routes: both flavors' API (PROTOCOL.md §4), `/healthz`, the fake OAuth page, the demo
//! app, CORS and the one-line-per-request log.

mod api;
mod middleware;
mod oauth;
mod params;

use crate::runtime::{Flavor, Runtime};
use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::routing::{get, post};
use axum::{Extension, Router};
use std::sync::Arc;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::services::{ServeDir, ServeFile};

/// The request headers CORS preflights allow: `names` (unusable names skipped), or the default set.
fn allowed_headers(names: &[String]) -> Vec<HeaderName> {
    if names.is_empty() {
        return vec![
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("last-event-id"),
            HeaderName::from_static("x-forgestream-fault"),
        ];
    }
    names
        .iter()
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect()
}

fn api_routes(flavor: Flavor) -> Router<Arc<Runtime>> {
    let subscribe = match flavor {
        Flavor::Trueforge => get(api::subscribe),
        Flavor::Gateway => post(api::subscribe),
    };
    Router::new()
        .route(
            "/sessions",
            post(api::create_session).get(api::list_sessions),
        )
        .route("/sessions/{sid}", get(api::get_session))
        .route(
            "/sessions/{sid}/turns",
            post(api::create_turn).get(api::list_turns),
        )
        .route("/sessions/{sid}/turns/{tid}", get(api::get_turn))
        .route("/sessions/{sid}/turns/{tid}/subscribe", subscribe)
        .route("/sessions/{sid}/turns/{tid}/events", get(api::turn_events))
        .route("/sessions/{sid}/events", get(api::session_events))
        .route("/sessions/{sid}/cancel", post(api::cancel))
        .fallback(api::not_found)
        .layer(Extension(flavor))
}

/// The whole application over a runtime.
pub fn router(rt: Arc<Runtime>) -> Router {
    let auth = axum::middleware::from_fn_with_state(rt.clone(), middleware::require_token);
    let api = Router::new()
        .nest("/api/v1", api_routes(Flavor::Trueforge))
        .nest("/v1/agents", api_routes(Flavor::Gateway))
        .layer(auth)
        .layer(axum::middleware::from_fn(middleware::require_json))
        .layer(DefaultBodyLimit::max(rt.config.max_body_bytes));
    let mut app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        // Test introspection: live connections per session (crate::gauge).
        .route("/_emulator/streams/{sid}", get(stream_counts))
        .route("/_emulator/streams/{sid}/reset", post(reset_stream_counts))
        // Browser pages opened from an `auth_url` link: no bearer token can come with them.
        .route(
            "/fake-oauth/authorize",
            get(oauth::consent).post(oauth::decide),
        )
        .merge(api);
    if let Some(www) = &rt.config.www {
        let index = www.join("index.html");
        let files = ServeDir::new(www).fallback(ServeFile::new(index));
        app = app.fallback_service(files);
    }
    let mut app = app
        .layer(axum::middleware::from_fn(middleware::html_csp))
        .with_state(rt.clone());
    if !rt.config.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = rt
            .config
            .cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        let cors = CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
            .allow_headers(allowed_headers(&rt.config.cors_allow_headers))
            .expose_headers([header::RETRY_AFTER])
            .allow_credentials(true);
        app = app.layer(cors);
    }
    // The host check runs before CORS: a rebinding page's preflight is refused too.
    app.layer(axum::middleware::from_fn_with_state(
        rt.clone(),
        middleware::check_host,
    ))
    .layer(axum::middleware::from_fn(middleware::log_request))
}

/// `GET /_emulator/streams/{sid}`: the session's live-connection counts ([`crate::gauge`]).
async fn stream_counts(
    axum::extract::State(rt): axum::extract::State<Arc<Runtime>>,
    axum::extract::Path(sid): axum::extract::Path<String>,
) -> axum::Json<crate::gauge::StreamCounts> {
    axum::Json(rt.streams.counts(&sid))
}

/// `POST /_emulator/streams/{sid}/reset`: `max` := `open`; answers the counts.
async fn reset_stream_counts(
    axum::extract::State(rt): axum::extract::State<Arc<Runtime>>,
    axum::extract::Path(sid): axum::extract::Path<String>,
) -> axum::Json<crate::gauge::StreamCounts> {
    axum::Json(rt.streams.reset(&sid))
}
