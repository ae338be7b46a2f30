//! Helpers for the end-to-end tests: the example server on a loopback port, and a raw
//! JSON-RPC-over-HTTP client that shows statuses and bodies exactly as sent.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_tool_examples::fake_model::FakeModel;
use mcp_tool_examples::serving::{DemoAuth, STATE_KID};
use mcp_tool_runtime::Server;
use mcp_tool_runtime::protocol::{InputRequest, InputResponse};
use mcp_tool_runtime::seal::{Clock, Keyring, SealConfig, Sealer};
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use serde_json::{Map, Value, json};

/// The protocol version under test.
pub const VERSION: &str = "2026-07-28";
/// A fixed 32-byte state key (hex) shared by "replicas" in the tests.
pub const KEY_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// A sealer with the shared test key, `ttl`, and optionally an injected clock.
pub fn sealer(ttl: Duration, clock: Option<Arc<dyn Clock>>) -> Sealer {
    let keyring = Keyring::from_hex(STATE_KID, KEY_HEX).expect("key");
    let s = Sealer::new(keyring, SealConfig::default().with_ttl(ttl));
    match clock {
        Some(c) => s.with_clock(c),
        None => s,
    }
}

/// The example server (every example tool) with `sealer`.
pub fn example_server(sealer: Sealer) -> Server {
    mcp_tool_examples::example_server(
        Some(sealer),
        mcp_tool_examples::repo::Repo::embedded_demo().expect("demo repository"),
        mcp_tool_examples::notes::Notes::temporary().expect("notes store"),
    )
    .expect("example server")
}

/// Serves `server` on 127.0.0.1 (a free port) with the demo authenticator.
pub async fn spawn(server: Server) -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(
        addr,
        server,
        HttpConfig::default().authenticator(DemoAuth::new()),
    )
    .await
    .expect("spawn http")
}

/// A raw HTTP peer: builds JSON-RPC messages with `_meta` and the MCP headers, and returns
/// the HTTP status with the parsed body.
#[derive(Clone)]
pub struct Peer {
    pub url: String,
    pub client: reqwest::Client,
    pub token: Option<String>,
    pub capabilities: Value,
    pub version: String,
}

/// One HTTP exchange.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Option<Value>,
    pub raw: String,
}

impl Reply {
    /// The `result` object (panics with the body otherwise).
    pub fn result(&self) -> &Value {
        self.body
            .as_ref()
            .and_then(|b| b.get("result"))
            .unwrap_or_else(|| panic!("no result: {} {}", self.status, self.raw))
    }

    /// The `error` object (panics with the body otherwise).
    pub fn error(&self) -> &Value {
        self.body
            .as_ref()
            .and_then(|b| b.get("error"))
            .unwrap_or_else(|| panic!("no error: {} {}", self.status, self.raw))
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.error()["code"].as_i64().expect("code")
    }

    /// The `resultType` of the result.
    pub fn result_type(&self) -> &str {
        self.result()["resultType"].as_str().unwrap_or("complete")
    }
}

impl Peer {
    /// A peer declaring `capabilities`, anonymous.
    pub fn new(url: impl Into<String>, capabilities: Value) -> Peer {
        Peer {
            url: url.into(),
            client: reqwest::Client::new(),
            token: None,
            capabilities,
            version: VERSION.to_owned(),
        }
    }

    /// The same peer authenticated as `token` (demo bearer).
    pub fn as_user(&self, token: &str) -> Peer {
        Peer {
            token: Some(token.to_owned()),
            ..self.clone()
        }
    }

    /// `_meta` for a request.
    pub fn meta(&self) -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": self.version,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "e2e-tests", "version": "1.0.0"}
        })
    }

    /// Sends `message` as is, with the MCP headers derived from it.
    pub async fn send(&self, message: &Value) -> Reply {
        let method = message["method"].as_str().unwrap_or("");
        let version = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .unwrap_or(VERSION)
            .to_owned();
        let mut req = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .header("mcp-method", method)
            .timeout(Duration::from_secs(30));
        if let Some(name) = message["params"]["name"].as_str() {
            req = req.header("mcp-name", name);
        }
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.body(message.to_string()).send().await.expect("http");
        let status = resp.status().as_u16();
        let raw = resp.text().await.expect("body");
        let body = parse_body(&raw);
        Reply { status, body, raw }
    }

    /// A request `{jsonrpc, id, method, params + _meta}`.
    pub async fn request(&self, id: u64, method: &str, params: Value) -> Reply {
        let mut params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        params.insert("_meta".into(), self.meta());
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// A `tools/call` with optional answers and state.
    pub async fn call(
        &self,
        id: u64,
        name: &str,
        args: Value,
        answers: Option<Value>,
        state: Option<&str>,
    ) -> Reply {
        let mut params = json!({"name": name, "arguments": args});
        if let Some(a) = answers {
            params["inputResponses"] = a;
        }
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        self.request(id, "tools/call", params).await
    }
}

fn parse_body(raw: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(raw) {
        return Some(v);
    }
    // An SSE stream: the last `data:` event that is a response.
    raw.lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("result").is_some() || v.get("error").is_some())
}

/// Answers every input request of an `input_required` result with the fake model.
pub fn answer_all(model: &FakeModel, result: &Value) -> Value {
    let mut out = Map::new();
    if let Some(Value::Object(reqs)) = result.get("inputRequests") {
        for (key, raw) in reqs {
            let req: InputRequest = serde_json::from_value(raw.clone()).expect("input request");
            let answer: InputResponse = model.answer(key, &req);
            out.insert(key.clone(), serde_json::to_value(answer).unwrap());
        }
    }
    Value::Object(out)
}

/// The `requestState` of an `input_required` result.
pub fn state_of(reply: &Reply) -> String {
    reply.result()["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {}", reply.raw))
        .to_owned()
}

/// A sampling answer with `text`.
pub fn text_answer(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "test", "stopReason": "endTurn"})
}
