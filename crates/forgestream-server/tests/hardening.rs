//! Hostile requests to the emulator (issue 18, items 11 and 12): a foreign `Host` (DNS
//! rebinding), JSON sent without `application/json` (no CORS preflight), a `Host` planted in a
//! stored `auth_url`, the bearer scheme's case, clickjacking, absurd fault statuses.

mod common;

use common::*;
use serde_json::{json, Value};

fn session_body() -> String {
    json!({"agent": {"name": "support"}}).to_string()
}

#[tokio::test]
async fn a_foreign_host_header_is_refused_everywhere() {
    let server = start().await;
    let base = server.url();
    let port = server.addr.port();
    for path in ["/healthz", "/api/v1/sessions", "/v1/agents/sessions"] {
        let reply = send(
            http()
                .get(format!("{base}{path}"))
                .header("host", "evil.example:666"),
        )
        .await;
        assert_eq!(reply.status, 403, "{path}");
        assert!(reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allowed-host"));
    }
    let create = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .header("host", "evil.example")
            .header("content-type", "application/json")
            .body(session_body()),
    )
    .await;
    assert_eq!(
        create.status, 403,
        "nothing is created for a rebinding page"
    );
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        "127.0.0.2".to_owned(),
    ] {
        let reply = send(http().get(format!("{base}/healthz")).header("host", &host)).await;
        assert_eq!(reply.status, 200, "{host}");
    }
    let userinfo = send(
        http()
            .get(format!("{base}/healthz"))
            .header("host", "evil@127.0.0.1"),
    )
    .await;
    assert_eq!(userinfo.status, 403);
}

#[tokio::test]
async fn allowed_hosts_pass_and_auth_urls_never_take_the_host_header() {
    let server = start_with(|c| c.allowed_hosts = vec!["dev.example".into(), "lan:9".into()]).await;
    let base = server.url();
    for (host, status) in [
        ("dev.example:666", 200),
        ("DEV.example", 200),
        ("lan:9", 200),
        ("lan:10", 403),
        ("other.example", 403),
    ] {
        let reply = send(http().get(format!("{base}/healthz")).header("host", host)).await;
        assert_eq!(reply.status, status, "{host}");
    }
    let sid = create_session(&base, "github").await;
    let reply = send(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .header("host", "dev.example:666")
            .json(&message("List the open issues")),
    )
    .await;
    assert_eq!(reply.status, 200);
    let frames = reply.frames();
    let auth = frames
        .iter()
        .find(|(_, e)| e["type"] == "mcp.auth_required")
        .map(|(_, e)| e.clone())
        .unwrap();
    let url = auth["mcp_servers"][0]["auth_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{base}/fake-oauth/authorize?")),
        "built from the configured address, not the Host header: {url}"
    );
    let tid = turn_id(&frames);
    let stored = get_json(&format!("{base}/api/v1/sessions/{sid}/turns/{tid}")).await;
    let stored_url = stored["data"]["state"]["required_actions"][0]["mcp_servers"][0]["auth_url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(stored_url, url);
}

#[tokio::test]
async fn the_public_url_sets_the_origin_of_auth_urls() {
    let server = start_with(|c| c.public_url = Some("https://emulator.test/".into())).await;
    let base = server.url();
    let sid = create_session(&base, "github").await;
    let reply = post_turn(&base, &sid, &message("List the open issues")).await;
    let auth: Value = reply
        .frames()
        .into_iter()
        .find(|(_, e)| e["type"] == "mcp.auth_required")
        .map(|(_, e)| e)
        .unwrap();
    let url = auth["mcp_servers"][0]["auth_url"].as_str().unwrap();
    assert!(
        url.starts_with("https://emulator.test/fake-oauth/authorize?"),
        "{url}"
    );
}

#[tokio::test]
async fn json_routes_refuse_bodies_that_are_not_application_json() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let routes = [
        format!("{base}/api/v1/sessions"),
        format!("{base}/api/v1/sessions/{sid}/turns"),
        format!("{base}/api/v1/sessions/{sid}/cancel"),
    ];
    for url in &routes {
        for content_type in [
            Some("text/plain;charset=UTF-8"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            None,
        ] {
            let mut req = http().post(url).body(session_body());
            if let Some(ct) = content_type {
                req = req.header("content-type", ct);
            }
            let reply = send(req).await;
            assert_eq!(reply.status, 415, "{url} {content_type:?}");
            assert!(reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("application/json"));
        }
    }
    let turns = send(
        http()
            .get(format!("{base}/api/v1/sessions/{sid}/turns"))
            .header("x-forgestream-fault", ""),
    )
    .await;
    assert_eq!(
        turns.json()["data"],
        json!([]),
        "the refused turn was not created"
    );
    let sessions = send(http().get(format!("{base}/api/v1/sessions"))).await;
    assert_eq!(sessions.json()["data"].as_array().unwrap().len(), 1);
    let with_charset = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .header("content-type", "Application/JSON; charset=utf-8")
            .body(session_body()),
    )
    .await;
    assert_eq!(with_charset.status, 201);
    let bodiless = send(http().post(format!("{base}/api/v1/sessions/{sid}/cancel"))).await;
    assert_eq!(
        bodiless.status, 200,
        "a cancel without a body needs no type"
    );
    let gateway = send(
        http()
            .post(format!("{base}/v1/agents/sessions"))
            .header("content-type", "text/plain")
            .body(json!({"agent_name": "support"}).to_string()),
    )
    .await;
    assert_eq!(gateway.status, 415);
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_and_the_token_exact() {
    let server = start_with(|c| c.token = Some("s3cret".into())).await;
    let url = format!("{}/api/v1/sessions", server.url());
    for (value, status) in [
        ("Bearer s3cret", 200),
        ("bearer s3cret", 200),
        ("BEARER s3cret", 200),
        ("bEaReR  s3cret", 200),
        ("Bearer s3cre", 401),
        ("Bearer s3cretx", 401),
        ("Basic s3cret", 401),
        ("s3cret", 401),
    ] {
        let reply = send(http().get(&url).header("authorization", value)).await;
        assert_eq!(reply.status, status, "{value}");
    }
}

#[tokio::test]
async fn fault_statuses_outside_400_to_599_are_refused() {
    let server = start().await;
    let base = server.url();
    for spec in ["status=999", "status=600", "status=302", "status=200"] {
        let reply = send(
            http()
                .get(format!("{base}/api/v1/sessions"))
                .header("x-forgestream-fault", format!("{spec},on=all")),
        )
        .await;
        assert_eq!(reply.status, 400, "{spec}");
        assert!(reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Invalid fault spec"));
    }
    let ok = send(
        http()
            .get(format!("{base}/api/v1/sessions"))
            .header("x-forgestream-fault", "status=599,on=all"),
    )
    .await;
    assert_eq!(ok.status, 599);
}

#[tokio::test]
async fn html_pages_may_not_be_framed() {
    let www = std::env::temp_dir().join(format!("forgestream-www-{}", std::process::id()));
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("index.html"), "<!doctype html><p>demo</p>").unwrap();
    let dir = www.clone();
    let server = start_with(move |c| c.www = Some(dir)).await;
    let base = server.url();
    for path in [
        "/",
        "/some/app/route",
        "/fake-oauth/authorize?server=github",
    ] {
        let reply = send(http().get(format!("{base}{path}"))).await;
        assert_eq!(reply.status, 200, "{path}");
        let csp = reply.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
    }
    let _ = std::fs::remove_dir_all(&www);
}
