//! Shared helpers: a server with the tools under test, a scripted host, answer builders.
#![allow(dead_code)]

use mcp_tool_runtime::client::{CallOutcome, Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{
    ClientCapabilities, CreateMessageResult, ElicitResult, Implementation, JsonObject,
    ListRootsResult, Root,
};
use mcp_tool_runtime::{Server, Tool};
use serde_json::{Value, json};

/// A server with `tools`.
pub fn server(
    tools: Vec<Box<dyn FnOnce(mcp_tool_runtime::ServerBuilder) -> mcp_tool_runtime::ServerBuilder>>,
) -> Server {
    let mut b = Server::builder(Implementation::new("macro-tests", "0"));
    for t in tools {
        b = t(b);
    }
    b.build().expect("server builds")
}

/// Registers one tool (for [`server`]).
pub fn tool<T: Tool>(
    t: T,
) -> Box<dyn FnOnce(mcp_tool_runtime::ServerBuilder) -> mcp_tool_runtime::ServerBuilder> {
    Box::new(move |b| b.tool(t))
}

/// A host with every capability and no answers yet.
pub fn host() -> ScriptedHost {
    ScriptedHost::new(ClientCapabilities::all())
}

/// An accepted form elicitation with `content`.
pub fn accept(content: Value) -> ElicitResult {
    match content {
        Value::Object(m) => ElicitResult::accept(m),
        other => {
            let mut m = JsonObject::new();
            m.insert("value".into(), other);
            ElicitResult::accept(m)
        }
    }
}

/// A sampling answer with text.
pub fn said(text: &str) -> CreateMessageResult {
    CreateMessageResult::text("test-model", text)
}

/// A roots answer.
pub fn roots(uris: &[&str]) -> ListRootsResult {
    serde_json::from_value(json!({
        "roots": uris.iter().map(|u| json!({"uri": u})).collect::<Vec<_>>()
    }))
    .expect("roots")
}

/// Drives one call of `name` through every round.
pub async fn call(
    server: Server,
    host: ScriptedHost,
    name: &str,
    args: Value,
) -> (CallOutcome, ScriptedHost) {
    let mut d = Driver::new(InProcessTransport::new(server), host);
    let out = d.call_tool(name, args).await.expect("call completes");
    let (_, host) = d.into_parts();
    (out, host)
}

/// The `inputRequests` keys of each `input_required` result in a transcript, in order.
pub fn rounds(out: &CallOutcome) -> Vec<Vec<String>> {
    out.transcript
        .iter()
        .filter_map(|e| e.message.get("result"))
        .filter(|r| {
            r.get("resultType").and_then(Value::as_str) == Some("input_required")
                || r.get("inputRequests").is_some()
        })
        .map(|r| {
            let mut keys: Vec<String> = r["inputRequests"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            keys.sort();
            keys
        })
        .collect()
}

/// Unused import guard.
pub fn _root(r: Root) -> Root {
    r
}

/// One `tools/call` of `name` through `Server::handle` as `principal`, with the elicitation
/// and sampling capabilities, and `inputResponses` / `requestState` when given: the result,
/// or the JSON-RPC error object as `Err`.
pub async fn raw_round(
    server: &Server,
    principal: &mcp_tool_runtime::Principal,
    name: &str,
    args: Value,
    responses: Option<Value>,
    state: Option<&str>,
) -> Result<Value, Value> {
    let mut params = json!({
        "name": name,
        "arguments": args,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        }
    });
    if let Some(r) = responses {
        params["inputResponses"] = r;
    }
    if let Some(st) = state {
        params["requestState"] = json!(st);
    }
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let resp = server.handle(msg, principal).await.expect("a response");
    let v = serde_json::to_value(&resp).expect("serializes");
    match v.get("error") {
        Some(e) => Err(e.clone()),
        None => Ok(v["result"].clone()),
    }
}
