//! The stateless server through its transport-independent entry point (`Server::handle`),
//! with small tools written by hand against the `Tool` contract (no macro).

use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::server::NotificationSink;
use std::time::Duration;

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{
    CallToolResult, Capability, Implementation, JsonRpcResponse, ToolAnnotations,
};
use mcp_tool_runtime::requests::{Ask, Elicit, Elicitation, Sample};
use mcp_tool_runtime::seal::Sealer;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Principal, RegistrationError, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step, parse_args, parse_state},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

use support::{request, resume};

// ---------------------------------------------------------------------------------------
// Test tools
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    name: String,
    #[serde(default)]
    times: Option<u8>,
}

/// No input requests: validates arguments, answers text.
struct Greet;

impl Tool for Greet {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("greet")
            .title("Greeter")
            .description("Says hello")
            .input_schema_of::<GreetArgs>()
            .annotations(ToolAnnotations {
                read_only_hint: Some(true),
                ..Default::default()
            })
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let a: GreetArgs = parse_args(args)?;
            let n = a.times.unwrap_or(1);
            Ok(Step::Complete(CallToolResult::text(
                format!("Hello, {}!", a.name).repeat(usize::from(n)),
            )))
        })
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Contact {
    name: String,
    email: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Confirm {
    ok: bool,
}

/// Two elicitation rounds: a contact, then a confirmation that may be declined.
struct Wizard {
    max_rounds: u32,
    layout: &'static str,
    journal: bool,
    early: bool,
}

impl Wizard {
    fn new() -> Self {
        Wizard {
            max_rounds: 4,
            layout: "wizard-v1",
            journal: false,
            early: false,
        }
    }
}

impl Tool for Wizard {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("wizard")
            .needs(Capability::Elicitation)
            .max_rounds(self.max_rounds)
            .layout(self.layout)
            .journal(self.journal)
            .early_answers(self.early)
    }
    fn validate(&self) -> Result<(), RegistrationError> {
        mcp_tool_runtime::requests::check_elicitation::<Contact>("contact")?;
        mcp_tool_runtime::requests::check_elicitation::<Confirm>("confirm")
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let state: Option<Value> = state.map(parse_state).transpose()?;
            let step = state
                .as_ref()
                .and_then(|s| s.get("step"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            match step {
                0 => {
                    cx.request(
                        "contact",
                        Ask::<Contact>::new("Who are you?").into_request()?,
                    )?;
                    if cx.round_ready() {
                        // Journal restart: the answer is already known.
                        let c: Contact = cx.take_ask("contact")?;
                        cx.request("confirm", Elicit::<Confirm>::new("Sure?").into_request()?)?;
                        return Step::suspend(&json!({"step": 2, "name": c.name}));
                    }
                    Step::suspend(&json!({"step": 1}))
                }
                1 => {
                    let c: Contact = cx.take_ask("contact")?;
                    cx.request("confirm", Elicit::<Confirm>::new("Sure?").into_request()?)?;
                    Step::suspend(&json!({"step": 2, "name": c.name}))
                }
                2 => {
                    let name = state
                        .as_ref()
                        .and_then(|s| s.get("name"))
                        .and_then(Value::as_str)
                        .ok_or(ToolError::InvalidState)?
                        .to_owned();
                    match cx.take_elicitation::<Confirm>("confirm")? {
                        Elicitation::Accept(Confirm { ok: true }) => Ok(Step::Complete(
                            CallToolResult::text(format!("Registered {name}")),
                        )),
                        Elicitation::Accept(_) => {
                            Ok(Step::Complete(CallToolResult::text("Not registered")))
                        }
                        Elicitation::Decline => Err(ToolError::Declined {
                            key: "confirm".into(),
                        }),
                        Elicitation::Cancel => Err(ToolError::Cancelled {
                            key: "confirm".into(),
                        }),
                    }
                }
                _ => Err(ToolError::InvalidState),
            }
        })
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Summary {
    title: String,
    words: u32,
}

/// Sampling, parsed as JSON; plus roots in the same round.
struct Summarize;

impl Tool for Summarize {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("summarize")
            .needs(Capability::Sampling)
            .needs(Capability::Roots)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            if state.is_none() {
                cx.request(
                    "summary",
                    Sample::user("Summarize as JSON")
                        .system("Answer with JSON")
                        .max_tokens(200)
                        .into_request()?,
                )?;
                cx.request(
                    "roots",
                    mcp_tool_runtime::requests::Roots::new().into_request()?,
                )?;
                return Step::suspend(&json!(null));
            }
            let roots = cx.take_roots("roots")?;
            let s: Summary = cx.take_sampling("summary")?.json()?;
            Ok(Step::Complete(CallToolResult::structured(json!({
                "title": s.title,
                "words": s.words,
                "roots": roots.len(),
            }))))
        })
    }
}

/// Checkpoints forever (load shedding): no input requests, state only.
struct Looper {
    max_rounds: u32,
}

impl Tool for Looper {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("looper").max_rounds(self.max_rounds)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move { Step::suspend(&json!({"seen": cx.round_number()})) })
    }
}

/// Asks for sampling without declaring it.
struct Sneaky;

impl Tool for Sneaky {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("sneaky")
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        _args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            cx.request("s", Sample::user("hi").into_request()?)?;
            Step::suspend(&json!(1))
        })
    }
}

/// Fails in the way its `kind` argument says.
struct Failing;

impl Tool for Failing {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("failing")
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let args: Value = parse_args(args)?;
            let kind = args.get("kind").and_then(Value::as_str).unwrap_or("");
            Err(match kind {
                "failed" => ToolError::from("disk full"),
                "io" => std::io::Error::other("broken pipe").into(),
                "declined" => ToolError::Declined { key: "k".into() },
                "cancelled" => ToolError::Cancelled { key: "k".into() },
                "input" => ToolError::invalid_input("k", "bad answer"),
                "state" => ToolError::InvalidState,
                _ => ToolError::Internal("boom".into()),
            })
        })
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn sealer() -> Sealer {
    support::sealer("k1", 42)
}

fn server() -> Server {
    Server::builder(Implementation::new("test-server", "0.1.0"))
        .sealer(sealer())
        .instructions("Test tools")
        .tool(Greet)
        .tool(Wizard::new())
        .tool(Summarize)
        .tool(Looper { max_rounds: 2 })
        .tool(Sneaky)
        .tool(Failing)
        .build()
        .expect("server builds")
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1"}
    })
}

async fn send(server: &Server, msg: Value) -> JsonRpcResponse {
    support::send_as(server, &Principal::named("alice"), msg).await
}

async fn send_request(server: &Server, id: i64, method: &str, params: Value) -> JsonRpcResponse {
    send(server, request(id, method, params)).await
}

/// Params holding only a `_meta` that declares no capabilities.
fn meta_only() -> Value {
    json!({"_meta": meta(json!({}))})
}

async fn call(server: &Server, name: &str, args: Value, extra: Value) -> JsonRpcResponse {
    let params = support::call_params(name, args, meta(all_caps()), extra);
    send_request(server, 7, "tools/call", params).await
}

/// `tools/call` of `name` without arguments, declaring only `caps`.
async fn call_declaring(server: &Server, id: i64, name: &str, caps: Value) -> JsonRpcResponse {
    let params = support::call_params(name, json!({}), meta(caps), json!({}));
    send_request(server, id, "tools/call", params).await
}

fn result(r: &JsonRpcResponse) -> &Value {
    match r.result_value() {
        Some(v) => v,
        None => panic!("expected a result, got {r:?}"),
    }
}

fn code(r: &JsonRpcResponse) -> i64 {
    match r.error_code() {
        Some(c) => c,
        None => panic!("expected an error, got {r:?}"),
    }
}

fn state(r: &JsonRpcResponse) -> String {
    result(r)["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned()
}

fn server_info_ok(v: &Value) {
    assert_eq!(
        v["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "test-server", "version": "0.1.0"})
    );
}

// ---------------------------------------------------------------------------------------
// Envelope and _meta errors
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn unparseable_json_is_parse_error() {
    let s = server();
    let r = s
        .handle_text(
            "{\"jsonrpc\": \"2.0\", \"id\": 1,",
            &Principal::anonymous(),
            NotificationSink::none(),
        )
        .await
        .expect("response")
        .into_response();
    assert_eq!(r.error_code(), Some(-32700));
    assert_eq!(r.id(), None);
}

#[tokio::test]
async fn invalid_envelopes_are_invalid_request() {
    let s = server();
    for msg in [
        json!([1, 2]),
        json!("hello"),
        json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}),
        json!({"id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
        json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}),
        json!({}),
    ] {
        let r = send(&s, msg.clone()).await;
        assert_eq!(r.error_code(), Some(-32600), "{msg}");
    }
    // The id is echoed when it could be read.
    let r = send(&s, json!({"jsonrpc": "1.0", "id": "abc", "method": "x"})).await;
    assert_eq!(r.to_value()["id"], json!("abc"));
}

#[tokio::test]
async fn notifications_are_never_answered() {
    let s = server();
    for msg in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "greet"}}),
        json!({"jsonrpc": "2.0", "method": "no/such/method"}),
        json!({"jsonrpc": "2.0", "method": "initialize"}),
    ] {
        assert!(
            s.handle(msg.clone(), &Principal::anonymous())
                .await
                .is_none(),
            "{msg}"
        );
    }
    assert!(
        s.handle_text(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &Principal::anonymous(),
            NotificationSink::none(),
        )
        .await
        .is_none()
    );
}

#[tokio::test]
async fn removed_and_unknown_methods_are_method_not_found() {
    let s = server();
    for m in [
        "initialize",
        "ping",
        "resources/subscribe",
        "logging/setLevel",
        "tasks/get",
        "foo",
    ] {
        let r = send_request(&s, 1, m, meta_only()).await;
        assert_eq!(code(&r), -32601, "{m}");
    }
    // Even without _meta.
    let r = send(&s, json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await;
    assert_eq!(code(&r), -32601);
}

#[tokio::test]
async fn missing_or_bad_meta_is_invalid_params() {
    let s = server();
    let cases = [
        json!(null),
        json!({}),
        json!({"_meta": 3}),
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"sampling": true}}}),
    ];
    for method in ["server/discover", "tools/list", "tools/call"] {
        for params in &cases {
            let mut msg = request(3, method, params.clone());
            if params.is_null()
                && let Some(o) = msg.as_object_mut()
            {
                o.remove("params");
            }
            let r = send(&s, msg).await;
            assert_eq!(code(&r), -32602, "{method} {params}");
        }
    }
}

#[tokio::test]
async fn unsupported_version_is_32022_with_data() {
    let s = server();
    let r = send_request(
        &s,
        4,
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2025-11-25",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    )
    .await;
    assert_eq!(code(&r), -32022);
    assert_eq!(
        r.error_object().and_then(|e| e.data.clone()),
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
    );
}

#[tokio::test]
async fn missing_capability_is_32021_before_tool_code() {
    let s = server();
    let r = call_declaring(&s, 5, "summarize", json!({"roots": {}})).await;
    assert_eq!(code(&r), -32021);
    assert_eq!(
        r.error_object().and_then(|e| e.data.clone()),
        Some(json!({"requiredCapabilities": {"sampling": {}}}))
    );
    let r = send_request(
        &s,
        6,
        "tools/call",
        json!({"name": "wizard", "_meta": meta(json!({}))}),
    )
    .await;
    assert_eq!(code(&r), -32021);
    assert_eq!(
        r.error_object().and_then(|e| e.data.clone()),
        Some(json!({"requiredCapabilities": {"elicitation": {}}}))
    );
}

// ---------------------------------------------------------------------------------------
// discover and list
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn discover_shape() {
    let s = server();
    let r = send_request(&s, 1, "server/discover", meta_only()).await;
    let v = result(&r);
    assert_eq!(v["resultType"], "complete");
    assert_eq!(v["supportedVersions"], json!(["2026-07-28"]));
    assert!(v["capabilities"]["tools"].is_object());
    assert_eq!(v["instructions"], "Test tools");
    assert_eq!(v["ttlMs"], json!(300_000));
    assert_eq!(v["cacheScope"], "public");
    server_info_ok(v);
    assert_eq!(r.to_value()["id"], json!(1));
}

#[tokio::test]
async fn cache_hints_are_configurable() {
    let s = Server::builder(Implementation::new("x", "1"))
        .sealer(sealer())
        .ttl(Duration::from_secs(5))
        .list_ttl(Duration::from_millis(1500))
        .cache_scope(mcp_tool_runtime::protocol::CacheScope::Private)
        .tool(Greet)
        .build()
        .expect("builds");
    let d = send_request(&s, 1, "server/discover", meta_only()).await;
    assert_eq!(result(&d)["ttlMs"], json!(5000));
    assert_eq!(result(&d)["cacheScope"], "private");
    assert!(result(&d).get("instructions").is_none());
    let l = send_request(&s, 2, "tools/list", meta_only()).await;
    assert_eq!(result(&l)["ttlMs"], json!(1500));
    assert_eq!(result(&l)["cacheScope"], "private");
}

#[tokio::test]
async fn tools_list_shape() {
    let s = server();
    let r = send_request(&s, 2, "tools/list", meta_only()).await;
    let v = result(&r);
    assert_eq!(v["resultType"], "complete");
    assert!(v["ttlMs"].is_u64());
    assert_eq!(v["cacheScope"], "public");
    assert!(v.get("nextCursor").is_none());
    server_info_ok(v);
    let tools = v["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "greet",
            "wizard",
            "summarize",
            "looper",
            "sneaky",
            "failing"
        ]
    );
    let greet = &tools[0];
    assert_eq!(greet["title"], "Greeter");
    assert_eq!(greet["description"], "Says hello");
    assert_eq!(greet["inputSchema"]["type"], "object");
    assert_eq!(greet["inputSchema"]["required"], json!(["name"]));
    assert!(greet["inputSchema"]["properties"]["name"].is_object());
    assert_eq!(greet["annotations"], json!({"readOnlyHint": true}));
    // A cursor that was never issued.
    let r = send_request(
        &s,
        3,
        "tools/list",
        json!({"_meta": meta(json!({})), "cursor": "zzz"}),
    )
    .await;
    assert_eq!(code(&r), -32602);
}

// ---------------------------------------------------------------------------------------
// tools/call
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn simple_call_completes_with_server_info() {
    let s = server();
    let r = call(&s, "greet", json!({"name": "Ada"}), json!({})).await;
    let v = result(&r);
    assert_eq!(v["resultType"], "complete");
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}])
    );
    assert!(v.get("isError").is_none());
    server_info_ok(v);
}

#[tokio::test]
async fn unknown_tool_and_bad_arguments_are_invalid_params() {
    let s = server();
    let r = call(&s, "nope", json!({}), json!({})).await;
    assert_eq!(code(&r), -32602);
    assert!(r.error_object().is_some_and(|e| e.message.contains("nope")));
    for args in [json!([1]), json!("x"), json!(3)] {
        let r = call(&s, "greet", args, json!({})).await;
        assert_eq!(code(&r), -32602);
    }
    let r = send_request(
        &s,
        9,
        "tools/call",
        json!({"_meta": meta(json!({})), "name": 3}),
    )
    .await;
    assert_eq!(code(&r), -32602);
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_naming_the_field() {
    let s = server();
    let r = call(&s, "greet", json!({"name": 5}), json!({})).await;
    let v = result(&r);
    assert_eq!(v["isError"], json!(true));
    let text = v["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("name"), "{text}");

    let r = call(&s, "greet", json!({"name": "x", "times": 1000}), json!({})).await;
    let text = result(&r)["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(text.contains("times"), "{text}");

    let r = call(&s, "greet", json!({}), json!({})).await;
    let text = result(&r)["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_owned();
    assert_eq!(result(&r)["isError"], json!(true));
    assert!(text.contains("`name`"), "{text}");
}

#[tokio::test]
async fn tool_errors_map_per_contract() {
    let s = server();
    for (kind, expect_code) in [("input", -32602), ("state", -32602), ("internal", -32603)] {
        let r = call(&s, "failing", json!({"kind": kind}), json!({})).await;
        assert_eq!(code(&r), expect_code, "{kind}");
    }
    let r = call(&s, "failing", json!({"kind": "state"}), json!({})).await;
    assert_eq!(
        r.error_object().map(|e| e.message.as_str()),
        Some("invalid requestState")
    );
    for (kind, needle) in [
        ("failed", "disk full"),
        ("io", "broken pipe"),
        ("declined", "declined"),
        ("cancelled", "cancelled"),
    ] {
        let r = call(&s, "failing", json!({"kind": kind}), json!({})).await;
        let v = result(&r);
        assert_eq!(v["isError"], json!(true), "{kind}");
        assert!(
            v["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains(needle)),
            "{kind}: {v}"
        );
        server_info_ok(v);
    }
}

#[tokio::test]
async fn multi_round_elicitation_flow() {
    let s = server();
    let r1 = call(&s, "wizard", json!({"x": 1}), json!({})).await;
    let v1 = result(&r1);
    assert_eq!(v1["resultType"], "input_required");
    server_info_ok(v1);
    assert!(v1.get("ttlMs").is_none());
    let req = &v1["inputRequests"]["contact"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["mode"], "form");
    assert_eq!(req["params"]["message"], "Who are you?");
    assert_eq!(
        req["params"]["requestedSchema"],
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
            "required": ["name"]
        })
    );
    let st1 = state(&r1);

    let r2 = call(
        &s,
        "wizard",
        json!({"x": 1}),
        resume(
            &st1,
            json!({"contact": {"action": "accept", "content": {"name": "Ada"}}}),
        ),
    )
    .await;
    let v2 = result(&r2);
    assert_eq!(v2["resultType"], "input_required");
    assert!(v2["inputRequests"]["confirm"].is_object());
    let st2 = state(&r2);
    assert_ne!(st1, st2);

    let r3 = call(
        &s,
        "wizard",
        json!({"x": 1}),
        resume(
            &st2,
            json!({"confirm": {"action": "accept", "content": {"ok": true}}}),
        ),
    )
    .await;
    let v3 = result(&r3);
    assert_eq!(v3["resultType"], "complete");
    assert_eq!(v3["content"][0]["text"], "Registered Ada");
    server_info_ok(v3);
}

#[tokio::test]
async fn decline_becomes_polite_tool_error() {
    let s = server();
    let r1 = call(&s, "wizard", json!({}), json!({})).await;
    let r2 = call(
        &s,
        "wizard",
        json!({}),
        resume(
            state(&r1),
            json!({
                "contact": {"action": "accept", "content": {"name": "Bob", "email": "b@example.com"}}
            }),
        ),
    )
    .await;
    let r3 = call(
        &s,
        "wizard",
        json!({}),
        resume(state(&r2), json!({"confirm": {"action": "decline"}})),
    )
    .await;
    let v = result(&r3);
    assert_eq!(v["resultType"], "complete");
    assert_eq!(v["isError"], json!(true));
    assert!(
        v["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("declined"))
    );
}

#[tokio::test]
async fn missing_answers_are_asked_again_with_the_same_state() {
    let s = server();
    let r1 = call(&s, "wizard", json!({}), json!({})).await;
    let st = state(&r1);
    for responses in [json!({}), json!({"other": {"action": "cancel"}})] {
        let r = call(&s, "wizard", json!({}), resume(&st, &responses)).await;
        let v = result(&r);
        assert_eq!(v["resultType"], "input_required");
        assert_eq!(v["requestState"], json!(st), "same state, byte for byte");
        assert_eq!(v["inputRequests"], result(&r1)["inputRequests"]);
    }
    // No inputResponses at all.
    let r = call(&s, "wizard", json!({}), json!({"requestState": st})).await;
    assert_eq!(result(&r)["requestState"], json!(st));
}

#[tokio::test]
async fn unknown_input_response_keys_are_ignored() {
    let s = server();
    let r1 = call(&s, "wizard", json!({}), json!({})).await;
    let r2 = call(
        &s,
        "wizard",
        json!({}),
        resume(
            state(&r1),
            json!({
                "contact": {"action": "accept", "content": {"name": "Ada"}},
                "bogus": {"anything": true},
                "also_bogus": 17
            }),
        ),
    )
    .await;
    assert_eq!(result(&r2)["resultType"], "input_required");
    // And answers without any state are ignored too.
    let r = call(
        &s,
        "greet",
        json!({"name": "Z"}),
        json!({"inputResponses": {"x": {"action": "accept"}}}),
    )
    .await;
    assert_eq!(result(&r)["resultType"], "complete");
}

#[tokio::test]
async fn wrong_answer_shape_is_invalid_params() {
    let s = server();
    let r1 = call(&s, "wizard", json!({}), json!({})).await;
    for bad in [
        json!({"roots": []}),
        json!({"action": "maybe"}),
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}),
        json!("accept"),
    ] {
        let r = call(
            &s,
            "wizard",
            json!({}),
            resume(state(&r1), json!({"contact": bad})),
        )
        .await;
        assert_eq!(code(&r), -32602, "{bad}");
    }
    // Accepted content that does not fit the requested type: -32602 too.
    let r = call(
        &s,
        "wizard",
        json!({}),
        resume(
            state(&r1),
            json!({"contact": {"action": "accept", "content": {"name": 42}}}),
        ),
    )
    .await;
    assert_eq!(code(&r), -32602);
    // inputResponses that is not an object.
    let r = call(&s, "wizard", json!({}), resume(state(&r1), json!([1]))).await;
    assert_eq!(code(&r), -32602);
}

#[tokio::test]
async fn argument_key_order_does_not_matter() {
    let s = server();
    let r1 = call(
        &s,
        "wizard",
        json!({"a": 1, "b": {"y": 2, "z": 3}}),
        json!({}),
    )
    .await;
    let raw = format!(
        r#"{{"jsonrpc":"2.0","id":"r2","method":"tools/call","params":{{"name":"wizard",
        "arguments":{{"b":{{"z":3,"y":2}},"a":1}},"requestState":"{}",
        "inputResponses":{{"contact":{{"action":"accept","content":{{"name":"Ada"}}}}}},
        "_meta":{}}}}}"#,
        state(&r1),
        meta(all_caps())
    );
    let r = s
        .handle_text(&raw, &Principal::named("alice"), NotificationSink::none())
        .await
        .expect("response")
        .into_response();
    assert_eq!(result(&r)["resultType"], "input_required");
    // Changed arguments do not open the state.
    let r = call(
        &s,
        "wizard",
        json!({"a": 2, "b": {"y": 2, "z": 3}}),
        resume(
            state(&r1),
            json!({"contact": {"action": "accept", "content": {"name": "Ada"}}}),
        ),
    )
    .await;
    assert_eq!(code(&r), -32602);
}

#[tokio::test]
async fn answers_on_a_first_call_are_ignored_unless_the_tool_opts_in() {
    let contact = json!({"contact": {"action": "accept", "content": {"name": "Eve"}}});
    // Default: nothing was asked yet, so the answer is unsolicited; the tool asks.
    let s = server();
    let r = call(
        &s,
        "wizard",
        json!({}),
        json!({ "inputResponses": contact }),
    )
    .await;
    assert_eq!(result(&r)["resultType"], "input_required");
    assert!(
        result(&r)["inputRequests"].get("contact").is_some(),
        "{r:?}"
    );
    // Opted in (`early_answers`): the answer is used and the next question comes.
    let s = Server::builder(Implementation::new("early", "1"))
        .sealer(sealer())
        .tool(Wizard {
            early: true,
            ..Wizard::new()
        })
        .build()
        .expect("server builds");
    let r = call(
        &s,
        "wizard",
        json!({}),
        json!({ "inputResponses": contact }),
    )
    .await;
    let res = result(&r);
    assert!(res["inputRequests"].get("confirm").is_some(), "{res}");
    assert!(res["inputRequests"].get("contact").is_none(), "{res}");
}

#[tokio::test]
async fn bad_states_answer_one_fixed_message() {
    let s = server();
    let r1 = call(&s, "wizard", json!({}), json!({})).await;
    let st = state(&r1);
    let answers = json!({"contact": {"action": "accept", "content": {"name": "A"}}});
    let mut tampered = st.clone().into_bytes();
    if let Some(b) = tampered.last_mut() {
        *b = if *b == b'A' { b'B' } else { b'A' };
    }
    let tampered = String::from_utf8(tampered).expect("ascii");
    for bad in [json!("garbage"), json!(tampered), json!(12), json!("")] {
        let r = call(&s, "wizard", json!({}), resume(&bad, &answers)).await;
        assert_eq!(code(&r), -32602, "{bad}");
        assert_eq!(
            r.error_object().map(|e| e.message.as_str()),
            Some("invalid requestState")
        );
    }
    // Another principal.
    let params = support::call_params("wizard", json!({}), meta(all_caps()), resume(&st, &answers));
    let msg = request(8, "tools/call", params);
    let r = s
        .handle(msg, &Principal::named("mallory"))
        .await
        .expect("response");
    assert_eq!(
        r.error_object().map(|e| (e.code, e.message.as_str())),
        Some((-32602, "invalid requestState"))
    );
    // Another tool with the same arguments.
    let r = call(&s, "summarize", json!({}), resume(&st, &answers)).await;
    assert_eq!(code(&r), -32602);
}

#[tokio::test]
async fn checkpoint_rounds_and_max_rounds() {
    let s = server();
    let r1 = call(&s, "looper", json!({}), json!({})).await;
    let v1 = result(&r1);
    assert_eq!(v1["resultType"], "input_required");
    assert!(v1.get("inputRequests").is_none(), "state only: {v1}");
    let r2 = call(&s, "looper", json!({}), json!({"requestState": state(&r1)})).await;
    assert_eq!(result(&r2)["resultType"], "input_required");
    // Third input_required would exceed max_rounds = 2.
    let r3 = call(&s, "looper", json!({}), json!({"requestState": state(&r2)})).await;
    assert_eq!(code(&r3), -32603);
    // The detail ("exceeded its maximum of 2 input rounds") is logged, not sent.
    assert_eq!(
        r3.error_object().map(|e| e.message.as_str()),
        Some("Internal error")
    );
}

#[tokio::test]
async fn undeclared_capability_request_is_internal_error() {
    let s = server();
    let r = call(&s, "sneaky", json!({}), json!({})).await;
    // all_caps() declares sampling: allowed.
    assert_eq!(result(&r)["resultType"], "input_required");
    let r = call_declaring(&s, 1, "sneaky", json!({"elicitation": {}})).await;
    assert_eq!(code(&r), -32603);
}

#[tokio::test]
async fn sampling_and_roots_in_one_round_with_json_answer() {
    let s = server();
    let r1 = call(&s, "summarize", json!({}), json!({})).await;
    let v1 = result(&r1);
    let reqs = v1["inputRequests"].as_object().expect("requests");
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs["summary"]["method"], "sampling/createMessage");
    assert_eq!(reqs["summary"]["params"]["maxTokens"], 200);
    assert_eq!(
        reqs["summary"]["params"]["systemPrompt"],
        "Answer with JSON"
    );
    assert_eq!(reqs["roots"], json!({"method": "roots/list", "params": {}}));
    let answer = |text: &str| {
        json!({
            "summary": {"role": "assistant", "content": {"type": "text", "text": text},
                        "model": "m1", "stopReason": "endTurn"},
            "roots": {"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}]}
        })
    };
    let r2 = call(
        &s,
        "summarize",
        json!({}),
        resume(
            state(&r1),
            answer("```json\n{\"title\": \"T\", \"words\": 12}\n```"),
        ),
    )
    .await;
    let v2 = result(&r2);
    assert_eq!(v2["resultType"], "complete");
    assert_eq!(
        v2["structuredContent"],
        json!({"title": "T", "words": 12, "roots": 2})
    );
    // Invalid model output -> -32602.
    let r3 = call(
        &s,
        "summarize",
        json!({}),
        resume(state(&r1), answer("not json at all")),
    )
    .await;
    assert_eq!(code(&r3), -32602);
}

#[tokio::test]
async fn layout_change_rejects_or_restarts_with_journal() {
    let answers = json!({"contact": {"action": "accept", "content": {"name": "Jo"}}});
    let mk = |layout: &'static str, journal: bool| {
        Server::builder(Implementation::new("test-server", "0.1.0"))
            .sealer(sealer())
            .tool(Wizard {
                max_rounds: 4,
                layout,
                journal,
                early: false,
            })
            .build()
            .expect("builds")
    };
    // Without a journal: a state of another layout is rejected.
    let old = mk("wizard-v1", false);
    let new = mk("wizard-v2", false);
    let r1 = call(&old, "wizard", json!({}), json!({})).await;
    let r = call(&new, "wizard", json!({}), resume(state(&r1), &answers)).await;
    assert_eq!(
        r.error_object().map(|e| (e.code, e.message.as_str())),
        Some((-32602, "invalid requestState"))
    );
    // With a journal: the call restarts from the top and replays the known answer.
    let old = mk("wizard-v1", true);
    let new = mk("wizard-v2", true);
    let r1 = call(&old, "wizard", json!({}), json!({})).await;
    let r2 = call(&new, "wizard", json!({}), resume(state(&r1), &answers)).await;
    let v2 = result(&r2);
    assert_eq!(v2["resultType"], "input_required");
    assert!(v2["inputRequests"]["confirm"].is_object(), "{v2}");
    let r3 = call(
        &new,
        "wizard",
        json!({}),
        resume(
            state(&r2),
            json!({"confirm": {"action": "accept", "content": {"ok": true}}}),
        ),
    )
    .await;
    assert_eq!(result(&r3)["content"][0]["text"], "Registered Jo");
}

#[tokio::test]
async fn registration_errors_surface_at_build() {
    #[derive(Deserialize, JsonSchema)]
    struct Nested {
        #[allow(dead_code)]
        inner: Contact,
    }
    struct BadAsk;
    impl Tool for BadAsk {
        fn info(&self) -> ToolInfo {
            ToolInfo::new("bad_ask")
        }
        fn validate(&self) -> Result<(), RegistrationError> {
            mcp_tool_runtime::requests::check_elicitation::<Nested>("nested")
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async { Ok(Step::Complete(CallToolResult::text(""))) })
        }
    }
    let e = Server::builder(Implementation::new("x", "1"))
        .sealer(sealer())
        .tool(BadAsk)
        .build()
        .expect_err("nested object rejected");
    match e {
        RegistrationError::Schema { tool, key, error } => {
            assert_eq!(tool, "bad_ask");
            assert_eq!(key, "nested");
            assert_eq!(error.path, "inner");
        }
        other => panic!("unexpected {other:?}"),
    }
    let e = Server::builder(Implementation::new("x", "1"))
        .sealer(sealer())
        .tool(Greet)
        .tool(Greet)
        .build()
        .expect_err("duplicate");
    assert_eq!(e, RegistrationError::DuplicateTool("greet".into()));
    struct NotObject;
    impl Tool for NotObject {
        fn info(&self) -> ToolInfo {
            ToolInfo::new("no").input_schema(serde_json::Map::new())
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async { Ok(Step::Complete(CallToolResult::text(""))) })
        }
    }
    assert!(matches!(
        Server::builder(Implementation::new("x", "1"))
            .sealer(sealer())
            .tool(NotObject)
            .build(),
        Err(RegistrationError::InvalidInfo { .. })
    ));
}

#[tokio::test]
async fn ids_are_echoed_and_state_ttl_is_per_tool() {
    struct ShortLived;
    impl Tool for ShortLived {
        fn info(&self) -> ToolInfo {
            ToolInfo::new("short").state_ttl(Duration::from_secs(1))
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            state: Option<&'a RawValue>,
        ) -> BoxFuture<'a, Result<Step, ToolError>> {
            Box::pin(async move {
                match state {
                    None => Step::suspend(&json!(0)),
                    Some(_) => Ok(Step::Complete(CallToolResult::text("done"))),
                }
            })
        }
    }
    let clock = std::sync::Arc::new(mcp_tool_runtime::seal::ManualClock::new(1_000_000));
    let s = Server::builder(Implementation::new("x", "1"))
        .sealer(sealer().with_clock(clock.clone()))
        .tool(ShortLived)
        .build()
        .expect("builds");
    let msg = json!({"jsonrpc": "2.0", "id": "first", "method": "tools/call",
                     "params": {"name": "short", "_meta": meta(json!({}))}});
    let r1 = send(&s, msg).await;
    assert_eq!(r1.to_value()["id"], json!("first"));
    let st = state(&r1);
    let retry = |id: i64| {
        request(
            id,
            "tools/call",
            json!({"name": "short", "requestState": st, "_meta": meta(json!({}))}),
        )
    };
    let r2 = send(&s, retry(2)).await;
    assert_eq!(result(&r2)["content"][0]["text"], "done");
    assert_eq!(r2.to_value()["id"], json!(2));
    clock.advance(Duration::from_secs(1));
    let r3 = send(&s, retry(3)).await;
    assert_eq!(code(&r3), -32602);
}

/// What a transport sends (`Server::handle_reply`, `Reply::to_vec`) is what an in-process
/// caller gets (`Server::handle`): a round's `input_required` and a completed call are
/// written straight from their types, the rest stays a tree, and the bytes parse to the same
/// response.
#[tokio::test]
async fn a_transport_reply_is_the_response_written_once() {
    use mcp_tool_runtime::protocol::Reply;
    let s = server();
    let alice = Principal::named("alice");
    let reply = |msg: Value| {
        let s = s.clone();
        let alice = alice.clone();
        async move {
            s.handle_text(&msg.to_string(), &alice, NotificationSink::none())
                .await
                .expect("a request gets a reply")
        }
    };
    let bytes_of = |r: &Reply| -> Value {
        serde_json::from_slice(&r.to_vec().expect("serializes")).expect("JSON")
    };
    let call_msg = |name: &str, args: Value, extra: Value| {
        request(
            7,
            "tools/call",
            support::call_params(name, args, meta(all_caps()), extra),
        )
    };

    // A first round: written; the same response as the tree but for the sealed state.
    let r1 = reply(call_msg("wizard", json!({}), json!({}))).await;
    assert!(matches!(r1, Reply::Written { .. }), "{r1:?}");
    let written = bytes_of(&r1);
    let tree = send(&s, call_msg("wizard", json!({}), json!({})))
        .await
        .to_value();
    let without_state = |mut v: Value| {
        v["result"]
            .as_object_mut()
            .expect("a result")
            .remove("requestState")
            .expect("a requestState");
        v
    };
    assert_eq!(without_state(written.clone()), without_state(tree));
    assert_eq!(written["result"]["resultType"], "input_required");
    assert_eq!(
        written["result"]["inputRequests"]["contact"]["params"]["requestedSchema"]["required"],
        json!(["name"])
    );

    // The written state resumes: the next round asks again, written too.
    let token = written["result"]["requestState"].clone();
    let r2 = reply(call_msg(
        "wizard",
        json!({}),
        resume(
            &token,
            json!({"contact": {"action": "accept", "content": {"name": "Ada"}}}),
        ),
    ))
    .await;
    assert!(matches!(r2, Reply::Written { .. }), "{r2:?}");
    assert_eq!(bytes_of(&r2)["result"]["resultType"], "input_required");
    assert!(bytes_of(&r2)["result"]["inputRequests"]["confirm"].is_object());

    // A completed call: written, byte for byte the tree's JSON once parsed.
    let done = reply(call_msg("greet", json!({"name": "Ada"}), json!({}))).await;
    assert!(matches!(done, Reply::Written { .. }), "{done:?}");
    let tree = send(&s, call_msg("greet", json!({"name": "Ada"}), json!({}))).await;
    assert_eq!(bytes_of(&done), tree.to_value());
    assert_eq!(
        bytes_of(&done)["result"]["content"][0]["text"],
        "Hello, Ada!"
    );

    // A tool error is a written result with isError; a protocol error stays a tree.
    let failed = reply(call_msg("failing", json!({"kind": "failed"}), json!({}))).await;
    assert!(matches!(failed, Reply::Written { .. }), "{failed:?}");
    assert_eq!(bytes_of(&failed)["result"]["isError"], true);
    let unknown = reply(call_msg("nope", json!({}), json!({}))).await;
    assert_eq!(unknown.error_code(), Some(-32602));
    assert_eq!(bytes_of(&unknown), unknown.into_response().to_value());

    // Other methods answer trees.
    let listed = reply(request(8, "tools/list", meta_only())).await;
    assert!(matches!(listed, Reply::Response(_)), "{listed:?}");
}
