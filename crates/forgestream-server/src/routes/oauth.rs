//! A fake OAuth authorization page, so an `mcp.auth_required` (PROTOCOL.md §5, §7) can be
//! walked through offline: the built-in `github` agent's `auth_url` points here instead of a
//! real provider. Nothing is checked or remembered — as with a real provider, the turn only
//! continues when the client sends the empty-input turn afterwards.
//!
//! - `GET /fake-oauth/authorize?server=NAME` — the consent page (a plain form, no script);
//! - `POST /fake-oauth/authorize` (form `server`, `decision=allow|deny`) — the outcome page,
//!   which sends the user back to the app to continue.

use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use std::sync::Arc;

use crate::runtime::Runtime;

/// The pages load nothing and run no script; their only form posts back here. Nor may another origin frame them (clickjacking the *Authorize* button).
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

/// Query of the consent page.
#[derive(Deserialize)]
pub struct AuthorizeQuery {
    server: Option<String>,
}

/// Form of the consent page.
#[derive(Deserialize)]
pub struct Consent {
    server: Option<String>,
    decision: Option<String>,
}

/// The MCP server's name, if it is a plain name: it is written into HTML, and a name of
/// `[A-Za-z0-9_.-]{1,64}` needs no escaping.
fn server_name(server: Option<&str>) -> Option<&str> {
    server.filter(|s| {
        (1..=64).contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    })
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>\
         body{{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}}\
         .card{{border:1px solid #d0d7de;border-radius:12px;padding:1.5rem 2rem}}\
         .note{{color:#57606a;font-size:.9rem}}\
         button{{font:inherit;padding:.5rem 1.2rem;border-radius:8px;border:1px solid #d0d7de;cursor:pointer;margin-right:.5rem}}\
         button.primary{{background:#1f883d;color:#fff;border-color:#1f883d}}\
         </style></head><body><main class=\"card\">{body}</main></body></html>\n"
    );
    let mut response = (status, Html(html)).into_response();
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    response
}

fn bad_server() -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "Unknown server",
        "<h1>Unknown server</h1><p>The link names no MCP server (or not a plain name: letters, \
         digits, <code>_ . -</code>). Go back to the app and use its authorization link.</p>",
    )
}

/// `GET /fake-oauth/authorize?server=NAME`: asks the user to authorize the server.
pub async fn consent(Query(query): Query<AuthorizeQuery>) -> Response {
    let Some(server) = server_name(query.server.as_deref()) else {
        return bad_server();
    };
    page(
        StatusCode::OK,
        &format!("Authorize {server}"),
        &format!(
            "<h1 id=\"title\">Authorize {server}</h1>\
             <p>The agent wants to use the <strong>{server}</strong> MCP server on your behalf.</p>\
             <form method=\"post\" action=\"/fake-oauth/authorize\">\
             <input type=\"hidden\" name=\"server\" value=\"{server}\">\
             <button class=\"primary\" id=\"authorize\" name=\"decision\" value=\"allow\">Authorize</button>\
             <button id=\"deny\" name=\"decision\" value=\"deny\">Cancel</button></form>\
             <p class=\"note\">This is forgestream-server's fake authorization page: nothing leaves \
             this machine and no token is issued.</p>"
        ),
    )
}

/// `POST /fake-oauth/authorize`: the outcome; tells the user how to get back to the app.
pub async fn decide(State(rt): State<Arc<Runtime>>, Form(form): Form<Consent>) -> Response {
    let Some(server) = server_name(form.server.as_deref()) else {
        return bad_server();
    };
    // The demo is served from this origin's `/` when the emulator serves it (`--www`).
    let back = if rt.config.www.is_some() {
        " <a id=\"back\" href=\"/\">Open the demo</a>."
    } else {
        ""
    };
    match form.decision.as_deref() {
        Some("allow") => page(
            StatusCode::OK,
            &format!("{server} authorized"),
            &format!(
                "<h1 id=\"title\">{server} is authorized</h1>\
                 <p id=\"outcome\">You can close this tab. Back in the app (the tab that opened \
                 this page), continue the paused turn — in the forgestream demo: \
                 <strong>“I've authorized — continue”</strong>.{back}</p>"
            ),
        ),
        Some("deny") => page(
            StatusCode::OK,
            &format!("{server} not authorized"),
            &format!(
                "<h1 id=\"title\">{server} was not authorized</h1>\
                 <p id=\"outcome\">You can close this tab. A real provider would leave \
                 {server} unusable; this emulator does not remember the decision, so \
                 continuing the paused turn in the app still runs {server}'s tools.{back}</p>"
            ),
        ),
        _ => page(
            StatusCode::BAD_REQUEST,
            "Bad request",
            "<h1>Bad request</h1><p>The form carries no decision (<code>allow</code> or \
             <code>deny</code>).</p>",
        ),
    }
}
