//! Test helpers: start the server in-process on port 0, talk to it over real HTTP.
#![allow(dead_code)]

use forgestream_server::{Server, ServerConfig};
use serde_json::{json, Value};
use std::time::Duration;

pub async fn start_with(edit: impl FnOnce(&mut ServerConfig)) -> Server {
    let mut config = ServerConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        pace_ms: 0,
        ..ServerConfig::default()
    };
    edit(&mut config);
    Server::start(config).await.unwrap()
}

pub async fn start() -> Server {
    start_with(|_| {}).await
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// A whole response: status, headers, body bytes.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn frames(&self) -> Vec<(u64, Value)> {
        parse_sse(&self.body)
    }
}

pub async fn send(req: reqwest::RequestBuilder) -> Reply {
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.bytes().await.unwrap_or_default().to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

/// Reads a body until it ends or fails, keeping what arrived (for drop faults).
pub async fn send_partial(req: reqwest::RequestBuilder) -> (Reply, bool) {
    let mut resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let mut body = Vec::new();
    let mut failed = false;
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    (
        Reply {
            status,
            headers,
            body,
        },
        failed,
    )
}

pub fn parse_sse(body: &[u8]) -> Vec<(u64, Value)> {
    // An unterminated frame at EOF is discarded (WHATWG), and may end inside a character.
    let end = body
        .windows(2)
        .rposition(|w| w == b"\n\n")
        .map(|i| i + 2)
        .unwrap_or(0);
    let text = std::str::from_utf8(&body[..end]).expect("utf-8 body");
    let mut frames = Vec::new();
    for block in text.split("\n\n") {
        let mut data = None;
        let mut id = None;
        for line in block.lines() {
            if let Some(d) = line.strip_prefix("data: ") {
                data = Some(serde_json::from_str::<Value>(d).unwrap());
            } else if let Some(i) = line.strip_prefix("id: ") {
                id = Some(i.parse::<u64>().unwrap());
            }
        }
        if let (Some(d), Some(i)) = (data, id) {
            frames.push((i, d));
        }
    }
    frames
}

pub fn types(frames: &[(u64, Value)]) -> Vec<String> {
    frames
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap().to_owned())
        .collect()
}

pub async fn create_session(base: &str, agent: &str) -> String {
    let reply = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .json(&json!({"agent": {"name": agent}})),
    )
    .await;
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()["data"]["id"].as_str().unwrap().to_owned()
}

pub fn message(text: &str) -> Value {
    json!({"input": [{"type": "user.message", "content": text}]})
}

pub async fn post_turn(base: &str, sid: &str, body: &Value) -> Reply {
    send(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(body),
    )
    .await
}

pub fn turn_id(frames: &[(u64, Value)]) -> String {
    frames[0].1["turn_id"].as_str().unwrap().to_owned()
}

pub fn last_state(frames: &[(u64, Value)]) -> Value {
    let (_, done) = frames.last().unwrap();
    assert_eq!(done["type"], "turn.done");
    done["state"].clone()
}

/// Merges live frames per PROTOCOL.md §5 into the settled events a listing holds: deltas into
/// their placeholder; `created_at` of the placeholder kept.
pub fn merge_live(frames: &[(u64, Value)]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (_, event) in frames {
        if event["type"] == "model.message.delta" {
            let base = out
                .iter_mut()
                .rev()
                .find(|e| e["type"] == "model.message" && e["id"] == event["id"])
                .expect("delta without base");
            if let Some(c) = event["content"].as_str() {
                let prev = base["content"].as_str().unwrap_or("").to_owned();
                base["content"] = json!(prev + c);
            }
            if let Some(calls) = event["tool_calls"].as_array() {
                for frag in calls {
                    let index = frag["index"].as_u64().unwrap() as usize;
                    if base["tool_calls"].is_null() {
                        base["tool_calls"] = json!([]);
                    }
                    let list = base["tool_calls"].as_array_mut().unwrap();
                    if list.len() <= index {
                        list.push(json!({"id": frag["id"], "type": frag["type"], "function": {"name": frag["function"]["name"], "arguments": ""}, "tool_info": frag["tool_info"]}));
                    }
                    let args = frag["function"]["arguments"].as_str().unwrap_or("");
                    let prev = list[index]["function"]["arguments"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned();
                    list[index]["function"]["arguments"] = json!(prev + args);
                }
            }
            for key in ["finish_reason", "usage"] {
                if !event[key].is_null() {
                    base[key] = event[key].clone();
                }
            }
        } else {
            out.push(event.clone());
        }
    }
    out
}

/// The emulator binary run as a child process (restart, crash and signal tests).
pub struct Child {
    pub process: std::process::Child,
    pub base: String,
}

impl Child {
    /// Starts `forgestream-server --addr 127.0.0.1:0 ARGS…` and waits for its
    /// `listening on http://ADDR` line.
    pub fn spawn(args: &[&str]) -> Child {
        use std::io::BufRead;
        let mut process = std::process::Command::new(env!("CARGO_BIN_EXE_forgestream-server"))
            .args(["--addr", "127.0.0.1:0", "--pace-ms", "0"])
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("spawning forgestream-server");
        let stdout = process.stdout.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reading the listening line");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Child { process, base }
    }

    /// Sends a signal (`KILL`, `TERM`, `INT`) with kill(1).
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.process.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (≤ 20 s) for the process to exit; its exit status.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let until = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.process.try_wait().unwrap() {
                return status;
            }
            assert!(std::time::Instant::now() < until, "server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// A fresh database path under the system temp dir (removed with its WAL files on drop).
pub struct TempDb(pub String);

impl TempDb {
    pub fn new(name: &str) -> TempDb {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let path = std::env::temp_dir().join(format!(
            "forgestream-{name}-{}-{nanos}.sqlite",
            std::process::id()
        ));
        TempDb(path.to_string_lossy().into_owned())
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0));
        }
    }
}

/// Opens a streaming request and reads until `n` frames arrived; returns the response (to keep
/// reading) and the bytes read so far.
pub async fn read_frames(req: reqwest::RequestBuilder, n: usize) -> (reqwest::Response, Vec<u8>) {
    let mut resp = req.send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = Vec::new();
    while parse_sse(&body).len() < n {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            other => panic!("stream ended before {n} frames: {other:?}"),
        }
    }
    (resp, body)
}

/// Reads the rest of a body; whether it ended in an error (not EOF).
pub async fn read_rest(resp: &mut reqwest::Response, body: &mut Vec<u8>) -> bool {
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

pub async fn get_json(url: &str) -> Value {
    let reply = send(http().get(url)).await;
    assert_eq!(
        reply.status,
        200,
        "{url}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

/// Every persisted event of a turn (oldest first, all pages).
pub async fn turn_listing(base: &str, sid: &str, tid: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/events?limit=100");
        if let Some(t) = &token {
            url.push_str(&format!("&page_token={t}"));
        }
        let body = get_json(&url).await;
        out.extend(body["data"].as_array().unwrap().iter().cloned());
        match body["pagination"]["next_page_token"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => return out,
        }
    }
}
