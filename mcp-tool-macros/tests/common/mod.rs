//! Shared helpers: a server with the tools under test, a scripted host, answer builders.
#![allow(dead_code)]

use mcp_tool_client::{CallOutcome, Driver, InProcessTransport, ScriptedHost};
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

// The differential harness: a tool's original function run in direct mode, its state
// machine driven round by round, and its generated `Tool::direct`, compared.

use mcp_tool_runtime::ToolError;
use mcp_tool_runtime::protocol::{InputResponse, StructuredContent};
use mcp_tool_runtime::testing::HostError;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The effects each tool logged, by tool name, in the run going on.
static EFFECTS: Mutex<Option<HashMap<String, Vec<String>>>> = Mutex::new(None);

/// Logs the effect `what` of the tool `tool` and returns `value` (for use inside expressions).
pub fn effect<T>(tool: &str, what: &str, value: T) -> T {
    EFFECTS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(tool.to_owned())
        .or_default()
        .push(what.to_owned());
    value
}

/// Takes the effects `tool` logged so far.
pub fn take_effects(tool: &str) -> Vec<String> {
    EFFECTS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .remove(tool)
        .unwrap_or_default()
}

/// A host answering requests in order, whatever their keys, recording the keys asked.
pub fn sequential(answers: Vec<InputResponse>, asked: Arc<Mutex<Vec<String>>>) -> ScriptedHost {
    let q = Arc::new(Mutex::new(VecDeque::from(answers)));
    ScriptedHost::from_fn(ClientCapabilities::all(), move |key, _req| {
        asked.lock().unwrap().push(key.to_string());
        q.lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| HostError::NoAnswer {
                key: key.to_string(),
            })
    })
}

/// An accepted elicitation as an input response.
pub fn ans(v: Value) -> InputResponse {
    accept(v).into()
}

/// A direct-mode result as JSON (an error as `{"error": …}`).
pub async fn direct_value<T: serde::Serialize>(
    fut: impl Future<Output = Result<T, ToolError>>,
) -> Value {
    match fut.await {
        Ok(v) => serde_json::to_value(&v).unwrap(),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// A driven call's result as JSON (an error as `{"error": …}`).
pub fn macro_value(out: &CallOutcome) -> Value {
    if out.is_error() {
        return json!({ "error": out.text() });
    }
    out.structured()
        .cloned()
        .unwrap_or_else(|| Value::String(out.text()))
}

/// `Tool::direct`'s result as `macro_value` shows the driver's.
pub fn result_value(r: Result<mcp_tool_runtime::protocol::CallToolResult, ToolError>) -> Value {
    match r {
        Ok(r) if r.is_error == Some(true) => json!({ "error": text_of(&r) }),
        Ok(r) => r
            .structured_content
            .as_ref()
            .map(StructuredContent::to_value)
            .unwrap_or_else(|| Value::String(text_of(&r))),
        Err(e) => match e {
            // the server maps these to `isError` results
            ToolError::Failed(m) => json!({ "error": m }),
            other => json!({ "error": other.to_string() }),
        },
    }
}

/// The text content of a result.
pub fn text_of(r: &mcp_tool_runtime::protocol::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| match c {
            mcp_tool_runtime::protocol::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// What one differential run saw.
pub struct Differential {
    /// The result (the same in every mode).
    pub value: Value,
    /// The keys asked (the same in every mode), in order.
    pub keys: Vec<String>,
    /// The rounds of the driven call: the `inputRequests` keys of each.
    pub rounds: Vec<Vec<String>>,
    /// The effects the tool logged with [`effect`] (the same in every mode), in order.
    pub effects: Vec<String>,
}

/// Runs `$tool` with `$args` and the answers `$answers` (given in order, whatever their
/// keys) three ways: its original function in direct mode, its state machine driven round by
/// round through a server (sealed and opened every round), and its generated `Tool::direct`.
/// Asserts they agree on the result, the keys asked, and the effects logged under the tool's
/// name; and that the driven call took one round per request asked (each request once).
/// Returns the [`Differential`].
#[macro_export]
macro_rules! differential {
    ($tool:ident, $args:expr, $answers:expr) => {{
        let name = stringify!($tool);
        let answers: Vec<InputResponse> = $answers;
        let args: Value = $args;
        let (answers_again, args_again) = (answers.clone(), args.clone());
        take_effects(name);
        let direct_keys = Arc::new(Mutex::new(Vec::new()));
        let mut cx =
            mcp_tool_runtime::testing::direct(sequential(answers.clone(), direct_keys.clone()));
        let direct = direct_value($tool(
            &mut cx,
            serde_json::from_value(args.clone()).unwrap(),
        ))
        .await;
        let direct_effects = take_effects(name);
        let macro_keys = Arc::new(Mutex::new(Vec::new()));
        let s = server(vec![tool($tool::tool())]);
        let (out, _) = call(s, sequential(answers, macro_keys.clone()), name, args).await;
        let macro_effects = take_effects(name);
        let transformed = macro_value(&out);
        assert_eq!(direct, transformed, "{name} differs");
        assert_eq!(
            direct_effects, macro_effects,
            "{name}: other effects in rounds"
        );
        // the generated `Tool::direct` (what a legacy session runs): the same function, its
        // arguments parsed and its result finished as the machine does
        let generated_keys = Arc::new(Mutex::new(Vec::new()));
        let mut cx =
            mcp_tool_runtime::testing::direct(sequential(answers_again, generated_keys.clone()));
        let generated = {
            use mcp_tool_runtime::Tool as _;
            let t = $tool::tool();
            let args_again = serde_json::value::to_raw_value(&args_again).unwrap();
            let fut = t.direct(&mut cx, &args_again).expect("a direct mode");
            result_value(fut.await)
        };
        assert_eq!(
            generated, transformed,
            "{name} differs through Tool::direct"
        );
        assert_eq!(
            direct_effects,
            take_effects(name),
            "{name}: other effects through Tool::direct"
        );
        let keys = macro_keys.lock().unwrap().clone();
        assert_eq!(
            *generated_keys.lock().unwrap(),
            keys,
            "{name} asks with other keys through Tool::direct"
        );
        assert_eq!(
            *direct_keys.lock().unwrap(),
            keys,
            "{name} asks with other keys in direct mode"
        );
        let rounds = rounds(&out);
        assert_eq!(
            rounds.len(),
            keys.len(),
            "{name}: one round per request: {rounds:?}"
        );
        Differential {
            value: transformed,
            keys,
            rounds,
            effects: direct_effects,
        }
    }};
}
