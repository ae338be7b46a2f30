//! Per-tool scopes and subject binding, end to end through the real HTTP transport (an
//! authenticator over `&Parts` that names `Principal::issued(..)` principals with scopes),
//! in a legacy session, and in process through the client driver:
//! - a missing scope is refused before any code runs: HTTP 403 with the
//!   `insufficient_scope` challenge and the -31403 JSON-RPC error (modern requests), the
//!   JSON-RPC error alone (legacy sessions, the driver); on the first round, on every retry,
//!   on task creation and `tasks/update`, for tools, prompts and resources;
//! - `tools/list` (and the other lists) still list everything, naming scopes in `_meta`;
//! - states, legacy sessions and tasks are bound to (issuer, subject), not to scopes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::request::Parts;
use mcp_tool_client::{Driver, DriverError, HttpTransport, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{ClientCapabilities, INSUFFICIENT_SCOPE, Implementation};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::auth::AuthError;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use mcp_tool_runtime::{
    Principal, State, ToolContext, ToolError, manual::BoxFuture, mcp_prompt, mcp_resource, mcp_tool,
};
use mcp_tool_runtime::{
    RegistrationError, Tool, ToolInfo,
    manual::{SCOPES_META_KEY, Step},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

const ISSUER_A: &str = "https://a.example";
const ISSUER_B: &str = "https://b.example";
const ALL: [&str; 5] = [
    "notes:read",
    "notes:write",
    "prompts:read",
    "vault:read",
    "tasks:run",
];

/// How often the code of each tool, prompt and resource ran.
#[derive(Default)]
struct Runs {
    started: AtomicUsize,
    finished: AtomicUsize,
    prompts: AtomicUsize,
    reads: AtomicUsize,
    open: AtomicUsize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Confirm {
    /// Go ahead?
    ok: bool,
}

/// Writes a note after a confirmation.
#[mcp_tool(scopes = "notes:write")]
async fn write_note(cx: &mut ToolContext, runs: State<Runs>) -> Result<String, ToolError> {
    runs.started.fetch_add(1, Ordering::SeqCst);
    let c: Confirm = cx.ask("Write the note?").await?;
    runs.finished.fetch_add(1, Ordering::SeqCst);
    Ok(format!("written: {}", c.ok))
}

/// Reads the notes after a confirmation (the array form of `scopes`).
#[mcp_tool(scopes = ["notes:read"])]
async fn read_notes(cx: &mut ToolContext, runs: State<Runs>) -> Result<String, ToolError> {
    runs.started.fetch_add(1, Ordering::SeqCst);
    let c: Confirm = cx.ask("Read the notes?").await?;
    runs.finished.fetch_add(1, Ordering::SeqCst);
    Ok(format!("read: {}", c.ok))
}

/// Needs no scope.
#[mcp_tool]
async fn open(_cx: &mut ToolContext, runs: State<Runs>) -> Result<String, ToolError> {
    runs.open.fetch_add(1, Ordering::SeqCst);
    Ok("open".into())
}

/// The caller's subject and scopes, as the tool sees them.
#[mcp_tool]
async fn whoami(cx: &mut ToolContext) -> Result<String, ToolError> {
    let p = cx.principal();
    let scopes: Vec<&str> = p.scopes().collect();
    Ok(format!("{}: {}", p.id(), scopes.join(" ")))
}

/// A task that asks before it finishes.
#[mcp_tool(task = "optional", scopes = "tasks:run")]
async fn long_job(cx: &mut ToolContext) -> Result<String, ToolError> {
    let c: Confirm = cx.ask("Go on?").await?;
    Ok(format!("done: {}", c.ok))
}

/// A prompt that needs `prompts:read`.
#[mcp_prompt(scopes = "prompts:read")]
async fn secret(_cx: &mut ToolContext, runs: State<Runs>) -> Result<String, ToolError> {
    runs.prompts.fetch_add(1, Ordering::SeqCst);
    Ok("Tell no one.".into())
}

/// A resource that needs `vault:read`.
#[mcp_resource(uri = "test://vault", scopes = "vault:read")]
async fn vault(_cx: &mut ToolContext, runs: State<Runs>) -> Result<String, ToolError> {
    runs.reads.fetch_add(1, Ordering::SeqCst);
    Ok("gold".into())
}

/// A hand-written tool declaring its scope in [`ToolInfo`].
struct HandWritten {
    runs: Arc<Runs>,
}

impl Tool for HandWritten {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("hand_written").scopes(["admin:all"])
    }

    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        self.runs.open.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Ok(Step::Complete(
                mcp_tool_runtime::protocol::CallToolResult::text("hand"),
            ))
        })
    }
}

fn builder(runs: &Arc<Runs>) -> mcp_tool_runtime::ServerBuilder {
    Server::builder(Implementation::new("scopes", "1.0"))
        .state(runs.clone())
        .tool(write_note::tool())
        .tool(read_notes::tool())
        .tool(open::tool())
        .tool(long_job::tool())
        .tool(HandWritten { runs: runs.clone() })
        .tool(whoami::tool())
        .prompt(secret::prompt())
        .resource(vault::resource())
}

/// The principal a bearer token names (the test's identity provider).
fn principal_for(token: &str) -> Option<Principal> {
    Some(match token {
        "alice-all" => Principal::issued(ISSUER_A, "alice").with_scopes(ALL),
        "alice-read" => Principal::issued(ISSUER_A, "alice").with_scopes(["notes:read"]),
        "alice-none" => Principal::issued(ISSUER_A, "alice"),
        "alice-at-b" => Principal::issued(ISSUER_B, "alice").with_scopes(ALL),
        "bob-all" => Principal::issued(ISSUER_A, "bob").with_scopes(ALL),
        _ => return None,
    })
}

/// The authenticator: a function over the request head.
fn authenticate(parts: &Parts) -> Result<Principal, AuthError> {
    let token = parts
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    token
        .and_then(principal_for)
        .ok_or_else(|| AuthError::bearer("test", Some("invalid_token"), "invalid token"))
}

async fn start(server: Server) -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let config = HttpConfig::default().authenticator(authenticate);
    http::spawn(addr, server, config).await.unwrap()
}

async fn start_enforcing() -> (HttpHandle, Arc<Runs>) {
    let runs = Arc::new(Runs::default());
    (start(builder(&runs).build().unwrap()).await, runs)
}

struct Reply {
    status: u16,
    challenge: Option<String>,
    body: Value,
}

impl Reply {
    fn code(&self) -> Option<i64> {
        self.body["error"]["code"].as_i64()
    }
    fn result(&self) -> &Value {
        &self.body["result"]
    }
    fn state(&self) -> String {
        assert_eq!(
            self.result()["resultType"],
            "input_required",
            "{}",
            self.body
        );
        self.result()["requestState"].as_str().unwrap().to_owned()
    }
    /// The key of the one input request.
    fn key(&self) -> String {
        let requests = self.result()["inputRequests"].as_object().unwrap();
        requests.keys().next().unwrap().clone()
    }
    fn assert_insufficient(&self, required: &[&str]) {
        assert_eq!(self.status, 403, "{}", self.body);
        let challenge = self
            .challenge
            .as_deref()
            .expect("a WWW-Authenticate challenge");
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\""),
            "{challenge}"
        );
        assert!(
            challenge.contains(&format!("scope=\"{}\"", required.join(" "))),
            "{challenge}"
        );
        assert_eq!(self.code(), Some(INSUFFICIENT_SCOPE), "{}", self.body);
        assert_eq!(
            self.body["error"]["data"]["requiredScopes"],
            json!(required),
            "{}",
            self.body
        );
    }
}

fn caps() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps(),
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: u64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

/// A retry of `tool` with `state` and the answer to `key`.
fn retry(id: u64, tool: &str, state: &str, key: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({
            "name": tool,
            "arguments": {},
            "requestState": state,
            "inputResponses": {key: {"action": "accept", "content": {"ok": true}}},
        }),
    )
}

/// POSTs a 2026-07-28 request with its MCP headers and `token`.
async fn post(h: &HttpHandle, token: &str, body: &Value) -> Reply {
    let mut req = reqwest::Client::new()
        .post(h.url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token);
    for (k, v) in HttpTransport::mcp_headers(body) {
        req = req.header(k, v);
    }
    reply(req.json(body).send().await.unwrap()).await
}

async fn reply(resp: reqwest::Response) -> Reply {
    let status = resp.status().as_u16();
    let challenge = resp
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    Reply {
        status,
        challenge,
        body,
    }
}

#[tokio::test]
async fn missing_scope_is_403_with_the_challenge_and_no_code_runs() {
    let (h, runs) = start_enforcing().await;
    let r = post(&h, "alice-read", &call(1, "write_note")).await;
    r.assert_insufficient(&["notes:write"]);
    assert_eq!(
        r.body["error"]["data"]["missingScopes"],
        json!(["notes:write"])
    );
    let r = post(&h, "alice-none", &call(2, "hand_written")).await;
    r.assert_insufficient(&["admin:all"]);
    assert_eq!(runs.started.load(Ordering::SeqCst), 0, "no tool code ran");
    assert_eq!(runs.open.load(Ordering::SeqCst), 0, "no tool code ran");
    // a tool without scopes is open to every authenticated caller
    let r = post(&h, "alice-none", &call(3, "open")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.result()["content"][0]["text"], "open");
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn present_scope_runs_every_round() {
    let (h, runs) = start_enforcing().await;
    let first = post(&h, "alice-all", &call(1, "write_note")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let done = post(
        &h,
        "alice-all",
        &retry(2, "write_note", &first.state(), &first.key()),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.result()["content"][0]["text"], "written: true");
    assert_eq!(runs.started.load(Ordering::SeqCst), 1);
    assert_eq!(runs.finished.load(Ordering::SeqCst), 1);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_retry_without_the_scope_is_refused() {
    let (h, runs) = start_enforcing().await;
    let first = post(&h, "alice-all", &call(1, "write_note")).await;
    // the same subject, now with a token without `notes:write`
    let again = post(
        &h,
        "alice-read",
        &retry(2, "write_note", &first.state(), &first.key()),
    )
    .await;
    again.assert_insufficient(&["notes:write"]);
    assert_eq!(runs.started.load(Ordering::SeqCst), 1);
    assert_eq!(
        runs.finished.load(Ordering::SeqCst),
        0,
        "the second round never ran"
    );
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn stepping_up_keeps_the_state() {
    let (h, runs) = start_enforcing().await;
    // sealed for alice holding only `notes:read`, resumed by alice holding every scope
    let first = post(&h, "alice-read", &call(1, "read_notes")).await;
    let done = post(
        &h,
        "alice-all",
        &retry(2, "read_notes", &first.state(), &first.key()),
    )
    .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.result()["content"][0]["text"], "read: true");
    assert_eq!(runs.finished.load(Ordering::SeqCst), 1);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_state_never_opens_for_another_subject_or_issuer() {
    let (h, runs) = start_enforcing().await;
    let first = post(&h, "alice-all", &call(1, "write_note")).await;
    let (state, key) = (first.state(), first.key());
    // the same subject name at another issuer, and another subject at the same issuer,
    // both holding every scope
    for (id, token) in [(2, "alice-at-b"), (3, "bob-all")] {
        let r = post(&h, token, &retry(id, "write_note", &state, &key)).await;
        assert_eq!(r.status, 400, "{token}: {}", r.body);
        assert_eq!(r.code(), Some(-32602), "{token}: {}", r.body);
        assert_eq!(r.body["error"]["message"], "invalid requestState");
    }
    assert_eq!(runs.finished.load(Ordering::SeqCst), 0);
    // the owner still can
    let r = post(&h, "alice-all", &retry(4, "write_note", &state, &key)).await;
    assert_eq!(
        r.result()["content"][0]["text"],
        "written: true",
        "{}",
        r.body
    );
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn prompts_and_resources_declare_scopes_too() {
    let (h, runs) = start_enforcing().await;
    let get = request(1, "prompts/get", json!({"name": "secret"}));
    let read = request(2, "resources/read", json!({"uri": "test://vault"}));
    post(&h, "alice-read", &get)
        .await
        .assert_insufficient(&["prompts:read"]);
    post(&h, "alice-read", &read)
        .await
        .assert_insufficient(&["vault:read"]);
    assert_eq!(runs.prompts.load(Ordering::SeqCst), 0);
    assert_eq!(runs.reads.load(Ordering::SeqCst), 0);
    let r = post(&h, "alice-all", &get).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.result()["messages"][0]["content"]["text"], "Tell no one.");
    let r = post(&h, "alice-all", &read).await;
    assert_eq!(r.result()["contents"][0]["text"], "gold", "{}", r.body);
    assert_eq!(runs.prompts.load(Ordering::SeqCst), 1);
    assert_eq!(runs.reads.load(Ordering::SeqCst), 1);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn lists_show_everything_and_name_scopes_in_meta() {
    let (h, _runs) = start_enforcing().await;
    let r = post(&h, "alice-none", &request(1, "tools/list", json!({}))).await;
    let tools = r.result()["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "write_note",
            "read_notes",
            "open",
            "long_job",
            "hand_written",
            "whoami"
        ]
    );
    let scopes = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["_meta"][SCOPES_META_KEY].clone()
    };
    assert_eq!(scopes("write_note"), json!(["notes:write"]));
    assert_eq!(scopes("read_notes"), json!(["notes:read"]));
    assert_eq!(scopes("hand_written"), json!(["admin:all"]));
    assert_eq!(scopes("open"), Value::Null);
    let r = post(&h, "alice-none", &request(2, "prompts/list", json!({}))).await;
    assert_eq!(
        r.result()["prompts"][0]["_meta"][SCOPES_META_KEY],
        json!(["prompts:read"])
    );
    let r = post(&h, "alice-none", &request(3, "resources/list", json!({}))).await;
    assert_eq!(
        r.result()["resources"][0]["_meta"][SCOPES_META_KEY],
        json!(["vault:read"])
    );
    h.shutdown().await.unwrap();
}

/// Polls `tasks/get` until the task leaves `working`.
async fn settled(h: &HttpHandle, token: &str, id: &str) -> Reply {
    for n in 0..200 {
        let r = post(
            h,
            token,
            &request(100 + n, "tasks/get", json!({"taskId": id})),
        )
        .await;
        if r.result()["status"] != "working" {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the task never settled");
}

#[tokio::test]
async fn tasks_check_scopes_and_stay_with_their_subject() {
    let (h, _runs) = start_enforcing().await;
    post(&h, "alice-read", &call(1, "long_job"))
        .await
        .assert_insufficient(&["tasks:run"]);
    let created = post(&h, "alice-all", &call(2, "long_job")).await;
    assert_eq!(created.result()["resultType"], "task", "{}", created.body);
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    let mine = settled(&h, "alice-all", &id).await;
    assert_eq!(mine.result()["status"], "input_required", "{}", mine.body);
    // another subject, and the same subject name at another issuer: no such task
    for token in ["bob-all", "alice-at-b"] {
        let r = post(&h, token, &request(3, "tasks/get", json!({"taskId": id}))).await;
        assert_eq!(r.code(), Some(-32602), "{token}: {}", r.body);
    }
    // answers resume the tool's code: its scope is checked again
    let update = request(
        4,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {}}),
    );
    post(&h, "alice-read", &update)
        .await
        .assert_insufficient(&["tasks:run"]);
    let r = post(&h, "alice-all", &update).await;
    assert_eq!(r.status, 200, "{}", r.body);
    h.shutdown().await.unwrap();
}

/// `tasks/get` (which hands out the tool's result and may restart its code) and
/// `tasks/cancel` check the tool's declared scopes with each request's credentials, as
/// `tools/call` and `tasks/update` do: the task's own subject with a token that lost the
/// scope is refused, and the task is left as it was.
#[tokio::test]
async fn tasks_get_and_cancel_check_the_tools_scopes_again() {
    let (h, _runs) = start_enforcing().await;
    let created = post(&h, "alice-all", &call(1, "long_job")).await;
    assert_eq!(created.result()["resultType"], "task", "{}", created.body);
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    settled(&h, "alice-all", &id).await;
    let get = request(2, "tasks/get", json!({"taskId": id}));
    let cancel = request(3, "tasks/cancel", json!({"taskId": id}));
    post(&h, "alice-read", &get)
        .await
        .assert_insufficient(&["tasks:run"]);
    post(&h, "alice-read", &cancel)
        .await
        .assert_insufficient(&["tasks:run"]);
    let r = post(&h, "alice-all", &get).await;
    assert_eq!(r.result()["status"], "input_required", "{}", r.body);
    let r = post(&h, "alice-all", &cancel).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = post(&h, "alice-all", &get).await;
    assert_eq!(r.result()["status"], "cancelled", "{}", r.body);
    h.shutdown().await.unwrap();
}

/// Opens a legacy session with `token`; its id.
async fn open_session(h: &HttpHandle, token: &str) -> String {
    let resp = reqwest::Client::new()
        .post(h.url())
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .json(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "scopes-test", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

async fn in_session(h: &HttpHandle, session: &str, token: &str, body: &Value) -> Reply {
    let resp = reqwest::Client::new()
        .post(h.url())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    reply(resp).await
}

fn legacy_call(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn legacy_sessions_answer_the_json_rpc_error_with_each_requests_scopes() {
    let (h, runs) = start_enforcing().await;
    let session = open_session(&h, "alice-all").await;
    // the session's subject with a token that lacks the scope: the JSON-RPC error
    let r = in_session(
        &h,
        &session,
        "alice-read",
        &legacy_call(1, "tools/call", json!({"name": "write_note"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.code(), Some(INSUFFICIENT_SCOPE), "{}", r.body);
    assert_eq!(
        r.body["error"]["data"]["requiredScopes"],
        json!(["notes:write"])
    );
    assert_eq!(runs.started.load(Ordering::SeqCst), 0);
    let r = in_session(
        &h,
        &session,
        "alice-read",
        &legacy_call(2, "resources/read", json!({"uri": "test://vault"})),
    )
    .await;
    assert_eq!(r.code(), Some(INSUFFICIENT_SCOPE), "{}", r.body);
    // with the scope it runs
    let r = in_session(
        &h,
        &session,
        "alice-all",
        &legacy_call(3, "resources/read", json!({"uri": "test://vault"})),
    )
    .await;
    assert_eq!(r.result()["contents"][0]["text"], "gold", "{}", r.body);
    // tools/list lists every tool
    let r = in_session(
        &h,
        &session,
        "alice-none",
        &legacy_call(4, "tools/list", json!({})),
    )
    .await;
    assert_eq!(
        r.result()["tools"].as_array().unwrap().len(),
        6,
        "{}",
        r.body
    );
    // the code sees the credentials of the request, not those the session was opened with
    let r = in_session(
        &h,
        &session,
        "alice-read",
        &legacy_call(5, "tools/call", json!({"name": "whoami"})),
    )
    .await;
    assert_eq!(
        r.result()["content"][0]["text"],
        "alice: notes:read",
        "{}",
        r.body
    );
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_legacy_session_is_unknown_to_another_subject() {
    let (h, runs) = start_enforcing().await;
    let session = open_session(&h, "alice-all").await;
    for token in ["bob-all", "alice-at-b"] {
        let r = in_session(
            &h,
            &session,
            token,
            &legacy_call(1, "tools/call", json!({"name": "open"})),
        )
        .await;
        assert_eq!(r.status, 404, "{token}: {}", r.body);
    }
    assert_eq!(runs.open.load(Ordering::SeqCst), 0);
    let r = in_session(
        &h,
        &session,
        "alice-none",
        &legacy_call(2, "tools/call", json!({"name": "open"})),
    )
    .await;
    assert_eq!(r.result()["content"][0]["text"], "open", "{}", r.body);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_driver_gets_the_json_rpc_error() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs).build().unwrap();
    let alice = Principal::issued(ISSUER_A, "alice").with_scopes(["notes:read"]);
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let transport = InProcessTransport::new(server).with_principal(alice);
    let mut driver = Driver::new(transport, host);
    match driver.call_tool("write_note", json!({})).await {
        Err(DriverError::Rpc { error, .. }) => {
            assert_eq!(error.code, INSUFFICIENT_SCOPE);
            assert_eq!(
                error.data.unwrap()["requiredScopes"],
                json!(["notes:write"])
            );
        }
        other => panic!("expected the scope error, got {other:?}"),
    }
    match driver.get_prompt("secret", json!({})).await {
        Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, INSUFFICIENT_SCOPE),
        other => panic!("expected the scope error, got {other:?}"),
    }
    assert_eq!(runs.started.load(Ordering::SeqCst), 0);
    assert_eq!(runs.prompts.load(Ordering::SeqCst), 0);

    // over HTTP the driver reads the same error from the 403's body
    let (h, runs) = start_enforcing().await;
    let transport = HttpTransport::new(h.url()).bearer("alice-read");
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let mut driver = Driver::new(transport, host);
    match driver.call_tool("write_note", json!({})).await {
        Err(DriverError::Rpc { error, .. }) => assert_eq!(error.code, INSUFFICIENT_SCOPE),
        other => panic!("expected the scope error, got {other:?}"),
    }
    assert_eq!(runs.started.load(Ordering::SeqCst), 0);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn ignore_scopes_serves_callers_without_scopes() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs).ignore_scopes().build().unwrap();
    assert!(!server.enforces_scopes());
    assert!(server.required_scopes("tools/call", None).is_empty());
    let h = start(server).await;
    let r = post(&h, "alice-none", &call(1, "write_note")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let _ = r.state();
    assert_eq!(runs.started.load(Ordering::SeqCst), 1);
    // still listed
    let r = post(&h, "alice-none", &request(2, "tools/list", json!({}))).await;
    assert_eq!(
        r.result()["tools"][0]["_meta"][SCOPES_META_KEY],
        json!(["notes:write"])
    );
    h.shutdown().await.unwrap();
}

#[test]
fn required_scopes_name_the_target() {
    let runs = Arc::new(Runs::default());
    let server = builder(&runs).build().unwrap();
    assert!(server.enforces_scopes());
    let params = |v: Value| v.as_object().cloned().unwrap();
    let p = params(json!({"name": "write_note"}));
    assert_eq!(
        server.required_scopes("tools/call", Some(&p)),
        ["notes:write"]
    );
    let p = params(json!({"uri": "test://vault"}));
    assert_eq!(
        server.required_scopes("resources/read", Some(&p)),
        ["vault:read"]
    );
    let p = params(json!({"ref": {"type": "ref/prompt", "name": "secret"}}));
    assert_eq!(
        server.required_scopes("completion/complete", Some(&p)),
        ["prompts:read"]
    );
    let p = params(json!({"name": "nope"}));
    assert!(server.required_scopes("tools/call", Some(&p)).is_empty());
    assert!(server.required_scopes("tools/list", None).is_empty());
}

#[test]
fn a_hand_written_tool_with_a_bad_scope_does_not_register() {
    struct Bad;
    impl Tool for Bad {
        fn info(&self) -> ToolInfo {
            let mut info = ToolInfo::new("bad");
            info.scopes.push("notes write\"".into());
            info
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            unreachable!("never registered")
        }
    }
    let err = Server::builder(Implementation::new("bad", "1"))
        .tool(Bad)
        .build()
        .unwrap_err();
    match err {
        RegistrationError::InvalidInfo { tool, message } => {
            assert_eq!(tool, "bad");
            assert!(message.contains("RFC 6749"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // the builder method splits space-separated lists
    let info = ToolInfo::new("t").scopes(["a b", "b c"]);
    assert_eq!(info.scopes, ["a", "b", "c"]);
}
