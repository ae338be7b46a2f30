//! rmcp 3.11's own client against the example server (`rmcp_example_server`, the team's rmcp
//! server with two `#[mcp_tool]` tools mounted), over Streamable HTTP and over stdio.
//!
//! rmcp connects with `server/discover`, lists the tools (the native `ratings` and our two)
//! and drives the mounted tools' rounds with its own `call_tool` loop, answering the
//! elicitation and sampling requests through a `ClientHandler` that records what it was
//! asked (rmcp passes the `inputRequests` key as the request id). Single rounds go through
//! `call_tool_once`: a tampered `requestState` is -32602, a missing answer is asked again, a
//! client that does not declare sampling is refused with -32021 before any tool code runs, and
//! with `--bearer-demo-auth` a state sealed for one principal does not open for another. A
//! client in a legacy session (`ClientLifecycleMode::Initialize`) gets the same tools in
//! direct mode, its handler asked through real requests during the call.
#![allow(deprecated)] // rmcp 3.11 marks sampling deprecated (SEP-2577); it is in 2026-07-28

mod support;

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, GetPromptRequestParams, Implementation, InputResponses,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde_json::{Value, json};

/// A host that answers forms by their message, samples "Lovely.", and records what it was
/// asked as `(kind, key)`. `sampling: false` declares elicitation only.
#[derive(Clone)]
struct Host {
    asked: Arc<Mutex<Vec<(&'static str, String)>>>,
    progress: Arc<Mutex<Vec<Value>>>,
    sampling: bool,
}

impl Host {
    fn new() -> Self {
        Self {
            asked: Arc::default(),
            progress: Arc::default(),
            sampling: true,
        }
    }

    fn record(&self, kind: &'static str, cx: &RequestContext<RoleClient>) {
        let key = match serde_json::to_value(&cx.id) {
            Ok(Value::String(s)) => s,
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push((kind, key));
    }

    fn asked(&self) -> Vec<(&'static str, String)> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.sampling {
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .build()
        } else {
            ClientCapabilities::builder().enable_elicitation().build()
        };
        ClientConfig::new(caps, Implementation::new("rmcp-adapter-test", "0.1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record("elicitation", &cx);
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let content = if message.contains("stars") {
            json!({"stars": 4})
        } else if message.contains("briefing") {
            json!({"audience": "pilots"})
        } else {
            json!({"name": "Ferris"})
        };
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _cx: NotificationContext<RoleClient>,
    ) {
        let seen = serde_json::to_value(&params).unwrap_or_default();
        self.progress.lock().unwrap().push(seen);
    }

    async fn create_message(
        &self,
        _request: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.record("sampling", &cx);
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("Lovely."),
            "rmcp-test-model".into(),
        ))
    }
}

type Client = RunningService<RoleClient, Host>;

const DISCOVER: fn() -> ClientLifecycleMode = || ClientLifecycleMode::Discover {
    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
};

async fn over_http(url: &str, host: Host, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(t) = token {
        config = config.auth_header(t);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    host.serve_with_lifecycle(transport, DISCOVER())
        .await
        .expect("rmcp connects over HTTP with server/discover")
}

async fn over_stdio(host: Host) -> Client {
    let mut cmd = tokio::process::Command::new(support::example_bin());
    cmd.env("RUST_LOG", "warn");
    let transport = TokioChildProcess::new(cmd).expect("spawn the example server");
    host.serve_with_lifecycle(transport, DISCOVER())
        .await
        .expect("rmcp connects over stdio with server/discover")
}

fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    let p = CallToolRequestParams::new(name);
    match args {
        Value::Object(m) => p.with_arguments(m),
        _ => p,
    }
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(r).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn rpc_error(err: ServiceError) -> ErrorData {
    match err {
        ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Discover, list, both mounted tools through their rounds, the native tool reading what a
/// mounted tool stored, and the one-round checks; the same over both transports.
async fn scenario(client: &Client, host: &Host) {
    let info = serde_json::to_value(client.peer_info().expect("peer info")).unwrap();
    for cap in ["tools", "prompts", "resources", "completions"] {
        assert!(info["capabilities"][cap].is_object(), "{cap}: {info}");
    }

    let tools = client.list_tools(None).await.expect("tools/list");
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["ratings", "forecast", "rate_city"]);
    let forecast = &tools.tools[1];
    assert_eq!(
        forecast.input_schema["properties"]["city"]["type"], "string",
        "our schema in rmcp's tools/list"
    );
    assert_eq!(forecast.input_schema["required"], json!(["city"]));

    // The native tool, untouched.
    let r = client.call_tool(call("ratings", json!({}))).await.unwrap();
    assert_eq!(text(&r), "no ratings yet");

    // forecast: an elicitation round, then a sampling round, driven by rmcp.
    let r = client
        .call_tool(call("forecast", json!({"city": "Paris"})))
        .await
        .expect("forecast completes");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(
        text(&r),
        "Ferris: rain, 17°C in Paris; the model says: Lovely."
    );
    assert_eq!(
        host.asked(),
        [
            ("elicitation", "who".to_owned()),
            ("sampling", "verdict".to_owned())
        ]
    );

    // rate_city stores in the team's database; the native tool reads it back.
    let r = client
        .call_tool(call("rate_city", json!({"city": "Paris"})))
        .await
        .expect("rate_city completes");
    assert_eq!(text(&r), "Paris rated 4 stars");
    assert_eq!(host.asked(), [("elicitation", "rating".to_owned())]);
    let r = client.call_tool(call("ratings", json!({}))).await.unwrap();
    assert_eq!(
        text(&r),
        "Paris: 4 stars",
        "state shared with the team's tool"
    );

    one_round_checks(client).await;
    prompts_resources_completion(client, host).await;
    progress(client, host).await;
}

/// rmcp's client puts a `progressToken` (the request id) on every request: the tool's
/// `cx.progress(..)` of its first round reaches the client's `on_progress` (forwarded through
/// rmcp's peer, on the request's own stream).
async fn progress(client: &Client, host: &Host) {
    host.progress.lock().unwrap().clear();
    let r = client
        .call_tool(call("rate_city", json!({"city": "Bern"})))
        .await
        .expect("rate_city completes");
    assert_eq!(text(&r), "Bern rated 4 stars");
    host.asked();
    let seen = std::mem::take(&mut *host.progress.lock().unwrap());
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["message"], "asking for a rating");
    assert_eq!(
        (seen[0]["progress"].as_f64(), seen[0]["total"].as_f64()),
        (Some(1.0), Some(2.0))
    );
    assert!(seen[0]["progressToken"].is_number(), "{seen:?}");
}

/// `briefing` for `city` (its elicitation round driven by rmcp's `get_prompt`): the message
/// names `conditions`, and the handler was asked one form.
async fn briefing(client: &Client, host: &Host, city: &str, conditions: &str) {
    let mut args = serde_json::Map::new();
    args.insert("city".into(), city.into());
    let r = client
        .get_prompt(GetPromptRequestParams::new("briefing").with_arguments(args))
        .await
        .expect("the prompt completes");
    assert_eq!(
        serde_json::to_value(&r.messages).unwrap()[0]["content"]["text"],
        format!("Brief pilots on the weather in {city}: {conditions}.")
    );
    let kinds: Vec<&str> = host.asked().into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, ["elicitation"]);
}

/// The mounted prompt (through its elicitation round, driven by rmcp's `get_prompt`), the
/// resource template and the completion of the prompt's argument.
async fn prompts_resources_completion(client: &Client, host: &Host) {
    let prompts = client.list_prompts(None).await.expect("prompts/list");
    let names: Vec<&str> = prompts.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["briefing"]);
    briefing(client, host, "London", "cloudy, 14°C").await;

    let templates = client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list");
    let uris: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(uris, ["weather://{city}/today"]);
    let read = client
        .read_resource(ReadResourceRequestParams::new("weather://Paris/today"))
        .await
        .expect("resources/read");
    let contents = serde_json::to_value(&read.contents).unwrap();
    assert_eq!(contents[0]["text"], "rain, 17°C", "{contents}");
    assert_eq!(contents[0]["mimeType"], "text/plain");

    let e = rpc_error(
        client
            .read_resource(ReadResourceRequestParams::new("nowhere://x"))
            .await
            .expect_err("not ours, not the team's"),
    );
    assert_eq!(
        e.code.0, -32601,
        "the team handler serves no resources: {e:?}"
    );

    let completion = client
        .complete_prompt_argument("briefing", "city", "Li", None)
        .await
        .expect("completion/complete");
    assert_eq!(completion.values, ["Lima", "Lisbon"]);
}

/// One round at a time: a missing answer is asked again, an answer of the wrong shape and
/// a tampered state are -32602, the right answer completes.
async fn one_round_checks(client: &Client) {
    let args = json!({"city": "Oslo"});
    let first = client
        .call_tool_once(call("rate_city", args.clone()))
        .await
        .expect("round 1");
    let CallToolResponse::InputRequired(ir) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = ir.request_state.expect("a requestState");
    let asked = serde_json::to_value(ir.input_requests.expect("inputRequests")).unwrap();
    assert_eq!(asked["rating"]["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["rating"]["params"]["message"],
        "How many stars for Oslo?"
    );

    let with = |answer: Value, state: String| {
        let answers: InputResponses = [("rating".to_owned(), answer)].into_iter().collect();
        call("rate_city", args.clone())
            .with_input_responses(answers)
            .with_request_state(state)
    };
    let good = json!({"action": "accept", "content": {"stars": 5}});

    // No answer: the same request again, with the same state.
    let again = client
        .call_tool_once(
            call("rate_city", args.clone())
                .with_input_responses(InputResponses::new())
                .with_request_state(state.clone()),
        )
        .await
        .expect("re-ask");
    let CallToolResponse::InputRequired(again) = again else {
        panic!("expected input_required again, got {again:?}");
    };
    assert_eq!(again.request_state.as_deref(), Some(state.as_str()));
    assert_eq!(
        serde_json::to_value(again.input_requests.unwrap()).unwrap(),
        asked
    );

    // An answer of the wrong shape: -32602.
    let bad = json!({"action": "accept", "content": {"stars": "many"}});
    let e = rpc_error(
        client
            .call_tool_once(with(bad, state.clone()))
            .await
            .expect_err("a malformed answer is refused"),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");

    // A tampered state: -32602, the one fixed message.
    let e = rpc_error(
        client
            .call_tool_once(with(good.clone(), format!("{state}x")))
            .await
            .expect_err("a tampered requestState is refused"),
    );
    assert_eq!(
        (e.code.0, e.message.as_ref()),
        (-32602, "invalid requestState")
    );

    // The state with other arguments: refused too (bound to the argument digest).
    let e = rpc_error(
        client
            .call_tool_once(
                call("rate_city", json!({"city": "Rome"}))
                    .with_input_responses(
                        [("rating".to_owned(), good.clone())].into_iter().collect(),
                    )
                    .with_request_state(state.clone()),
            )
            .await
            .expect_err("a state replayed with other arguments is refused"),
    );
    assert_eq!(e.code.0, -32602, "{e:?}");

    let done = client
        .call_tool_once(with(good, state))
        .await
        .expect("round 2");
    let CallToolResponse::Complete(r) = done else {
        panic!("expected complete, got {done:?}");
    };
    assert_eq!(text(&r), "Oslo rated 5 stars");
}

/// A client that does not declare sampling: -32021 naming it, before the tool runs.
async fn missing_capability(client: &Client, host: &Host) {
    let e = rpc_error(
        client
            .call_tool(call("forecast", json!({"city": "Paris"})))
            .await
            .expect_err("forecast needs sampling"),
    );
    assert_eq!(e.code.0, -32021, "{e:?}");
    let data = e.data.expect("data");
    assert!(
        data["requiredCapabilities"]["sampling"].is_object(),
        "{data}"
    );
    assert!(host.asked().is_empty(), "nothing was asked");
    // The tools that need what it has still work.
    let r = client
        .call_tool(call("rate_city", json!({"city": "Lyon"})))
        .await
        .expect("rate_city needs elicitation only");
    assert_eq!(text(&r), "Lyon rated 4 stars");
}

#[tokio::test]
async fn mounted_tools_over_http() {
    let server = support::http(&[]);
    let host = Host::new();
    let client = over_http(server.url(), host.clone(), None).await;
    scenario(&client, &host).await;
    client.cancel().await.expect("cancel");

    let host = Host {
        sampling: false,
        ..Host::new()
    };
    let client = over_http(server.url(), host.clone(), None).await;
    missing_capability(&client, &host).await;
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn mounted_tools_over_stdio() {
    let host = Host::new();
    let client = over_stdio(host.clone()).await;
    scenario(&client, &host).await;
    client.cancel().await.expect("cancel");

    let host = Host {
        sampling: false,
        ..Host::new()
    };
    let client = over_stdio(host.clone()).await;
    missing_capability(&client, &host).await;
    client.cancel().await.expect("cancel");
}

#[tokio::test]
async fn states_are_bound_to_the_bearer_principal() {
    let server = support::http(&["--bearer-demo-auth"]);
    let alice = over_http(server.url(), Host::new(), Some("alice")).await;
    let bob = over_http(server.url(), Host::new(), Some("bob")).await;
    let args = json!({"city": "Paris"});

    let first = alice
        .call_tool_once(call("rate_city", args.clone()))
        .await
        .expect("round 1 for alice");
    let CallToolResponse::InputRequired(ir) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = ir.request_state.expect("a requestState");
    let retry = || {
        let answers: InputResponses = [(
            "rating".to_owned(),
            json!({"action": "accept", "content": {"stars": 3}}),
        )]
        .into_iter()
        .collect();
        call("rate_city", args.clone())
            .with_input_responses(answers)
            .with_request_state(state.clone())
    };

    let e = rpc_error(
        bob.call_tool_once(retry())
            .await
            .expect_err("alice's state does not open for bob"),
    );
    assert_eq!(
        (e.code.0, e.message.as_ref()),
        (-32602, "invalid requestState")
    );

    let done = alice
        .call_tool_once(retry())
        .await
        .expect("alice's round 2");
    assert!(
        matches!(&done, CallToolResponse::Complete(r) if text(r) == "Paris rated 3 stars"),
        "{done:?}"
    );

    // The native tool does not need the principal; it still works for both.
    let r = bob.call_tool(call("ratings", json!({}))).await.unwrap();
    assert_eq!(text(&r), "Paris: 3 stars");

    alice.cancel().await.expect("cancel");
    bob.cancel().await.expect("cancel");
}

#[tokio::test]
async fn without_a_token_the_mounted_tools_refuse() {
    let server = support::http(&["--bearer-demo-auth"]);
    let client = over_http(server.url(), Host::new(), None).await;
    let e = rpc_error(
        client
            .call_tool_once(call("rate_city", json!({"city": "Paris"})))
            .await
            .expect_err("no token"),
    );
    assert_eq!(e.code.0, mcp_tool_rmcp::UNAUTHORIZED, "{e:?}");
    assert_eq!(
        e.data,
        Some(json!({"wwwAuthenticate": "Bearer realm=\"mcp\""}))
    );
    client.cancel().await.expect("cancel");
}

/// A client in a legacy session (`initialize`, 2025-11-25): the mounted tools run in direct
/// mode, their questions sent to the client as real requests during the call.
async fn legacy_scenario(client: &Client, host: &Host) {
    let info = serde_json::to_value(client.peer_info().expect("peer info")).unwrap();
    assert_eq!(info["protocolVersion"], "2025-11-25", "{info}");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");
    let tools = client.list_tools(None).await.expect("tools/list");
    assert_eq!(tools.tools.len(), 3);

    let r = client
        .call_tool(call("forecast", json!({"city": "Paris"})))
        .await
        .expect("forecast completes in a legacy session");
    assert_eq!(
        text(&r),
        "Ferris: rain, 17°C in Paris; the model says: Lovely."
    );
    let kinds: Vec<&str> = host.asked().into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        ["elicitation", "sampling"],
        "real requests, in order"
    );

    let r = client
        .call_tool(call("rate_city", json!({"city": "Nice"})))
        .await
        .expect("rate_city completes");
    assert_eq!(text(&r), "Nice rated 4 stars");
    let kinds: Vec<&str> = host.asked().into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, ["elicitation"]);
    let seen = std::mem::take(&mut *host.progress.lock().unwrap());
    assert_eq!(seen.len(), 1, "progress in a legacy session: {seen:?}");
    assert_eq!(seen[0]["message"], "asking for a rating");
    let r = client.call_tool(call("ratings", json!({}))).await.unwrap();
    assert!(text(&r).contains("Nice: 4 stars"), "{r:?}");

    briefing(client, host, "Lima", "sunny, 21°C").await;
}

#[tokio::test]
async fn legacy_sessions_over_http_and_stdio() {
    let server = support::http(&[]);
    let host = Host::new();
    let transport = StreamableHttpClientTransport::from_uri(server.url().to_owned());
    let client = host
        .clone()
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .expect("rmcp opens a legacy session over HTTP");
    legacy_scenario(&client, &host).await;
    client.cancel().await.expect("cancel");

    let mut cmd = tokio::process::Command::new(support::example_bin());
    cmd.env("RUST_LOG", "warn");
    let transport = TokioChildProcess::new(cmd).expect("spawn the example server");
    let host = Host::new();
    let client = host
        .clone()
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .expect("rmcp opens a legacy session over stdio");
    legacy_scenario(&client, &host).await;
    client.cancel().await.expect("cancel");
}
