//! rmcp 3.11 (the official Rust SDK) as an independent client of our server.
//!
//! Our server runs in-process on a loopback port (Streamable HTTP) with the example tools
//! and the conformance fixture tools; rmcp connects with `ClientLifecycleMode::Discover`
//! (`server/discover`, no `initialize`), lists the tools and drives MRTR calls with its own
//! `call_tool` loop, answering every `input_required` round through a `ClientHandler` that
//! records what it was asked. One more test talks to the fixture binary over stdio through
//! rmcp's `TokioChildProcess`.
//!
//! Prompts, resources and completion run against the whole fixture server
//! (`fixture::server`): rmcp lists them, gets prompts (its `RunningService::get_prompt` drives
//! the `input_required` rounds of `test_input_required_result_prompt` through the same
//! handler as `call_tool`; `Peer::get_prompt` does not, and reports `UnexpectedResponse`),
//! reads the resources and completes a prompt argument.
#![allow(deprecated)] // rmcp 3.11 marks sampling and roots deprecated (SEP-2577); they are in 2026-07-28

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcp_tool_runtime::protocol::Implementation as OurImplementation;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::transport::http::{self, HttpConfig, HttpHandle};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, GetPromptRequestParams, GetPromptResponse, Implementation, ListRootsResult,
    ProtocolVersion, ReadResourceRequestParams, Root, SamplingMessage,
};
use rmcp::service::{RequestContext, RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient};
use serde_json::{Value, json};

/// One input request the handler answered: its kind, its key (rmcp passes the
/// `inputRequests` key as the request id) and its params as JSON.
#[derive(Debug, Clone)]
struct Asked {
    kind: &'static str,
    key: String,
    params: Value,
}

/// A host that answers elicitation forms by their message, samples with a fixed answer,
/// lists one root, and records everything it was asked.
#[derive(Clone, Default)]
struct Host {
    asked: Arc<Mutex<Vec<Asked>>>,
    decline: bool,
}

impl Host {
    fn record(&self, kind: &'static str, cx: &RequestContext<RoleClient>, params: Value) {
        let key = match serde_json::to_value(&cx.id) {
            Ok(Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(e) => format!("<{e}>"),
        };
        self.asked.lock().unwrap().push(Asked { kind, key, params });
    }

    fn asked(&self) -> Vec<Asked> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

fn form_answer(message: &str) -> Value {
    let m = message.to_lowercase();
    if m.contains("github") {
        json!({"name": "octocat"})
    } else if m.contains("google") {
        json!({"email": "octo@gmail.example"})
    } else if m.contains("microsoft") {
        json!({"email": "octo@outlook.example"})
    } else if m.contains("color") {
        json!({"color": "teal"})
    } else if m.contains("confirm") {
        json!({"ok": true})
    } else if m.contains("context") {
        json!({"context": "rmcp"})
    } else {
        json!({"name": "Ferris"})
    }
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation()
                .enable_sampling()
                .enable_roots()
                .build(),
            Implementation::new("rmcp-peer-test", "0.1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record(
            "elicitation",
            &cx,
            serde_json::to_value(&request).unwrap_or_default(),
        );
        if self.decline {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => Ok(ElicitResult::new(
                ElicitationAction::Accept,
            )
            .with_content(form_answer(&message))),
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        cx: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.record(
            "sampling",
            &cx,
            serde_json::to_value(&request).unwrap_or_default(),
        );
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("Paris."),
            "rmcp-test-model".into(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    async fn list_roots(
        &self,
        cx: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record("roots", &cx, Value::Null);
        Ok(ListRootsResult::new(vec![Root::new("file:///workspace")]))
    }
}

/// Our server: the example tools and the conformance fixture tools.
fn our_server() -> Server {
    let mut b = Server::builder(OurImplementation::new("mcp-tool-rmcp-test", "0.1.0"))
        .state(mcp_tool_examples::repo::Repo::embedded_demo().expect("demo repository"))
        .state(mcp_tool_examples::notes::Notes::temporary().expect("notes store"))
        // the notes tools declare scopes; this test's callers carry none
        .ignore_scopes();
    for t in mcp_tool_examples::tools::all()
        .into_iter()
        .chain(mcp_tool_tests::fixture::tools())
    {
        b = b.tool(t);
    }
    b.build().expect("server")
}

async fn spawn_http() -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    http::spawn(addr, our_server(), HttpConfig::default())
        .await
        .expect("spawn http")
}

/// The conformance fixture server (tools, prompts, resources, completion) in-process.
async fn spawn_fixture() -> HttpHandle {
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = mcp_tool_tests::fixture::server(None).expect("fixture server");
    http::spawn(addr, server, HttpConfig::default())
        .await
        .expect("spawn http")
}

async fn connect(url: String, host: Host) -> RunningService<RoleClient, Host> {
    let transport = StreamableHttpClientTransport::from_uri(url);
    host.serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("rmcp connects with server/discover")
}

fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    let p = CallToolRequestParams::new(name);
    match args {
        Value::Object(m) => p.with_arguments(m),
        _ => p,
    }
}

fn result_json(r: &CallToolResult) -> Value {
    serde_json::to_value(r).expect("serialize result")
}

fn first_text(r: &CallToolResult) -> String {
    result_json(r)["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn discover_list_and_multi_round_elicitation_over_http() {
    let handle = spawn_http().await;
    let host = Host::default();
    let client = connect(handle.url(), host.clone()).await;

    // server/discover: what rmcp learned about us.
    let info = serde_json::to_value(client.peer_info().expect("peer info")).unwrap();
    let text = info.to_string();
    assert!(text.contains("2026-07-28"), "{info}");
    assert!(text.contains("mcp-tool-rmcp-test"), "{info}");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    // tools/list
    let tools = client.list_tools(None).await.expect("tools/list");
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_ref()).collect();
    for want in [
        "link_accounts",
        "list_roots",
        "get_weather",
        "test_input_required_result_sampling",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }

    // link_accounts: round 1 asks two forms together, round 2 a third; the first two
    // answers survive in our sealed requestState, which rmcp echoes verbatim.
    let r = client
        .call_tool(call("link_accounts", json!({"purpose": "testing"})))
        .await
        .expect("link_accounts completes");
    assert_ne!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content,
        Some(json!({
            "github": "octocat", "google": "octo@gmail.example",
            "microsoft": "octo@outlook.example", "purpose": "testing"
        }))
    );
    let asked = host.asked();
    let keys: Vec<&str> = asked.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    let mut first_round = keys[..2].to_vec();
    first_round.sort_unstable();
    assert_eq!(first_round, ["github_login", "google_login"]);
    assert_eq!(keys[2], "microsoft_login");
    assert!(asked.iter().all(|a| a.kind == "elicitation"));
    assert_eq!(
        asked[2].params["message"],
        "Please provide your Microsoft account"
    );
    assert_eq!(
        asked[2].params["requestedSchema"]["properties"]["email"]["type"],
        "string"
    );

    // The fixture's two-round tool: the first answer is kept across the second round.
    let r = client
        .call_tool(call("test_input_required_result_multi_round", json!({})))
        .await
        .expect("multi_round completes");
    assert_eq!(first_text(&r), "Ferris's favorite color is teal.");
    let keys: Vec<String> = host.asked().into_iter().map(|a| a.key).collect();
    assert_eq!(keys, ["step1", "step2"]);

    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn sampling_and_roots_rounds_over_http() {
    let handle = spawn_http().await;
    let host = Host::default();
    let client = connect(handle.url(), host.clone()).await;

    let r = client
        .call_tool(call("test_input_required_result_sampling", json!({})))
        .await
        .expect("sampling tool completes");
    assert_eq!(first_text(&r), "The model answered: Paris.");
    let asked = host.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "sampling");
    assert_eq!(asked[0].key, "capital_question");
    assert_eq!(asked[0].params["maxTokens"], 100);
    assert_eq!(
        asked[0].params["messages"][0]["content"]["text"],
        "What is the capital of France?"
    );
    assert_eq!(asked[0].params["messages"][0]["role"], "user");

    // The example roots tool: a structured report of what the handler listed.
    let r = client
        .call_tool(call("list_roots", json!({})))
        .await
        .expect("list_roots completes");
    assert_eq!(
        r.structured_content,
        Some(
            json!({"count": 1, "roots": [{"uri": "file:///workspace", "name": null, "local": true}]})
        )
    );
    let asked = host.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0].kind, asked[0].key.as_str()), ("roots", "roots"));

    // All three kinds in one round, answered concurrently by rmcp.
    let r = client
        .call_tool(call(
            "test_input_required_result_multiple_inputs",
            json!({}),
        ))
        .await
        .expect("multiple_inputs completes");
    assert_eq!(first_text(&r), "Paris. Name: Ferris; roots: 1");
    let mut kinds: Vec<(&str, String)> =
        host.asked().into_iter().map(|a| (a.kind, a.key)).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("elicitation", "user_name".to_owned()),
            ("roots", "client_roots".to_owned()),
            ("sampling", "greeting".to_owned()),
        ]
    );

    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn declined_elicitation_is_a_polite_result() {
    let handle = spawn_http().await;
    let host = Host {
        decline: true,
        ..Host::default()
    };
    let client = connect(handle.url(), host.clone()).await;
    let r = client
        .call_tool(call("get_weather", json!({"location": "Paris"})))
        .await
        .expect("get_weather completes");
    assert_ne!(r.is_error, Some(true));
    assert!(first_text(&r).starts_with("No problem"), "{r:?}");
    let asked = host.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].key, "github_login");
    assert_eq!(
        asked[0].params["message"],
        "Please provide your GitHub username"
    );
    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn single_rounds_and_a_tampered_state_with_call_tool_once() {
    let handle = spawn_http().await;
    let client = connect(handle.url(), Host::default()).await;
    let name = "test_input_required_result_tampered_state";

    let first = client
        .call_tool_once(call(name, json!({})))
        .await
        .expect("round 1");
    let CallToolResponse::InputRequired(ir) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = ir.request_state.expect("a requestState");
    let reqs = serde_json::to_value(ir.input_requests.expect("inputRequests")).unwrap();
    assert_eq!(reqs["confirm"]["method"], "elicitation/create", "{reqs}");

    let answers = [(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"ok": true}}),
    )]
    .into_iter()
    .collect::<rmcp::model::InputResponses>();

    // A modified state is refused with -32602, whatever the answers.
    let err = client
        .call_tool_once(
            call(name, json!({}))
                .with_input_responses(answers.clone())
                .with_request_state(format!("{state}-TAMPERED")),
        )
        .await
        .expect_err("a tampered requestState is an error");
    match err {
        ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert_eq!(e.message, "invalid requestState");
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }

    // The same state with other arguments is refused too (the state is bound to them).
    let err = client
        .call_tool_once(
            call(name, json!({"extra": 1}))
                .with_input_responses(answers.clone())
                .with_request_state(state.clone()),
        )
        .await
        .expect_err("a state replayed with other arguments is an error");
    assert!(
        matches!(err, ServiceError::McpError(ref e) if e.code.0 == -32602),
        "{err:?}"
    );

    // The untouched state completes.
    let done = client
        .call_tool_once(
            call(name, json!({}))
                .with_input_responses(answers)
                .with_request_state(state),
        )
        .await
        .expect("round 2");
    let CallToolResponse::Complete(r) = done else {
        panic!("expected a complete result, got {done:?}");
    };
    assert_eq!(first_text(&r), "confirmed=true");

    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn stdio_child_process() {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_conformance_fixture"));
    cmd.arg("--stdio").env("RUST_LOG", "warn");
    let transport = TokioChildProcess::new(cmd).expect("spawn the fixture");
    let host = Host::default();
    let client = host
        .clone()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("rmcp connects over stdio");
    let tools = client.list_tools(None).await.expect("tools/list");
    assert_eq!(tools.tools.len(), mcp_tool_tests::fixture::TOOL_NAMES.len());

    let r = client
        .call_tool(call("test_input_required_result_elicitation", json!({})))
        .await
        .expect("elicitation tool completes over stdio");
    assert_eq!(first_text(&r), "Hello, Ferris!");
    let asked = host.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].key, "user_name");
    assert_eq!(asked[0].params["message"], "What is your name?");

    let r = client
        .call_tool(call("test_image_content", json!({})))
        .await
        .expect("image tool");
    let v = result_json(&r);
    assert_eq!(v["content"][0]["type"], "image");
    assert_eq!(v["content"][0]["mimeType"], "image/png");
    assert_eq!(
        v["content"][0]["data"],
        mcp_tool_tests::fixture::RED_PIXEL_PNG
    );

    prompts_resources_completion(&client, &host).await;

    client.cancel().await.expect("cancel");
}

/// A list result as rmcp parsed it carries the caching hints (`ttlMs`, `cacheScope`).
fn assert_cacheable(result: &Value) {
    assert!(result["ttlMs"].as_u64().is_some(), "ttlMs: {result}");
    assert!(
        matches!(result["cacheScope"].as_str(), Some("public" | "private")),
        "cacheScope: {result}"
    );
}

fn prompt(name: &str, args: Value) -> GetPromptRequestParams {
    let p = GetPromptRequestParams::new(name);
    match args {
        Value::Object(m) => p.with_arguments(m),
        _ => p,
    }
}

/// Lists, `prompts/get` (with arguments, and through an `input_required` round), the three
/// resources and a completion, as the fixture serves them; shared by the HTTP and stdio tests.
async fn prompts_resources_completion(client: &RunningService<RoleClient, Host>, host: &Host) {
    // prompts/list
    let prompts = client.list_prompts(None).await.expect("prompts/list");
    let prompts = serde_json::to_value(&prompts).unwrap();
    let names: Vec<&str> = prompts["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
        ]
    );
    assert_eq!(
        prompts["prompts"][1]["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true},
        ])
    );

    assert_cacheable(&prompts);

    // prompts/get with arguments: substituted.
    let r = client
        .get_prompt(prompt(
            "test_prompt_with_arguments",
            json!({"arg1": "testValue1", "arg2": "testValue2"}),
        ))
        .await
        .expect("prompts/get with arguments");
    assert_eq!(
        serde_json::to_value(&r.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text",
               "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}])
    );
    assert!(host.asked().is_empty());

    // prompts/get through one input_required round, driven by rmcp's get_prompt.
    let r = client
        .get_prompt(prompt("test_input_required_result_prompt", json!({})))
        .await
        .expect("the input_required prompt completes");
    assert_eq!(
        serde_json::to_value(&r.messages).unwrap()[0]["content"]["text"],
        "Use this context: rmcp"
    );
    let asked = host.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (asked[0].kind, asked[0].key.as_str()),
        ("elicitation", "user_context")
    );
    assert_eq!(
        asked[0].params["message"],
        "What context should the prompt use?"
    );
    assert_eq!(
        asked[0].params["requestedSchema"]["properties"]["context"]["type"],
        "string"
    );

    // resources/list and resources/templates/list
    let resources = serde_json::to_value(client.list_resources(None).await.expect("list")).unwrap();
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        // the fixture's skill files (skill://…) come after; tests/tests/conformance_fixture.rs
        .filter(|u| !u.starts_with("skill://"))
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-text",
            "test://static-binary",
            "test://watched-resource"
        ]
    );
    assert_eq!(resources["resources"][0]["mimeType"], "text/plain");
    assert_eq!(resources["resources"][1]["mimeType"], "image/png");
    assert_cacheable(&resources);
    let templates = serde_json::to_value(
        client
            .list_resource_templates(None)
            .await
            .expect("templates/list"),
    )
    .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
    assert_eq!(templates["resourceTemplates"].as_array().unwrap().len(), 1);
    assert_cacheable(&templates);

    // resources/read: text, binary (the blob decodes to the fixture's PNG), template.
    let read = |uri: &'static str| async move {
        let r = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("read {uri}: {e:?}"));
        serde_json::to_value(&r.contents).unwrap()
    };
    assert_eq!(
        read("test://static-text").await,
        json!([{"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}])
    );
    let binary = read("test://static-binary").await;
    assert_eq!(binary[0]["mimeType"], "image/png");
    assert_eq!(binary[0]["blob"], mcp_tool_tests::fixture::RED_PIXEL_PNG);
    let data = read("test://template/123/data").await;
    assert_eq!(data[0]["mimeType"], "application/json");
    let data: Value = serde_json::from_str(data[0]["text"].as_str().expect("text")).unwrap();
    assert_eq!(
        data,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
    );

    // completion/complete on arg1
    let completion = client
        .complete_prompt_argument("test_prompt_with_arguments", "arg1", "pa", None)
        .await
        .expect("completion/complete");
    assert_eq!(completion.values, ["paris", "park", "party"]);
    assert_eq!(completion.total, Some(3));
    assert_eq!(completion.has_more, Some(false));
}

#[tokio::test]
async fn prompts_resources_and_completion_over_http() {
    let handle = spawn_fixture().await;
    let host = Host::default();
    let client = connect(handle.url(), host.clone()).await;
    let info = serde_json::to_value(client.peer_info().expect("peer info")).unwrap();
    for cap in ["prompts", "resources", "completions"] {
        assert!(info["capabilities"][cap].is_object(), "{cap}: {info}");
    }
    prompts_resources_completion(&client, &host).await;

    // An unknown resource: -32602 with data.uri.
    let err = client
        .read_resource(ReadResourceRequestParams::new("test://nope"))
        .await
        .expect_err("unknown resource");
    match err {
        ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert_eq!(e.data, Some(json!({"uri": "test://nope"})));
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }

    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn prompt_rounds_one_at_a_time() {
    let handle = spawn_fixture().await;
    let host = Host::default();
    let client = connect(handle.url(), host.clone()).await;
    let name = "test_input_required_result_prompt";

    // Peer::get_prompt has no MRTR driver: an input_required answer is "unexpected".
    let err = client
        .peer()
        .get_prompt(prompt(name, json!({})))
        .await
        .expect_err("Peer::get_prompt does not drive rounds");
    assert!(matches!(err, ServiceError::UnexpectedResponse), "{err:?}");

    let first = client
        .get_prompt_once(prompt(name, json!({})))
        .await
        .expect("round 1");
    let GetPromptResponse::InputRequired(ir) = first else {
        panic!("expected input_required, got {first:?}");
    };
    let state = ir.request_state.expect("a requestState");
    let reqs = serde_json::to_value(ir.input_requests.expect("inputRequests")).unwrap();
    assert_eq!(
        reqs.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["user_context"]
    );
    assert_eq!(reqs["user_context"]["method"], "elicitation/create");

    let answers = [(
        "user_context".to_owned(),
        json!({"action": "accept", "content": {"context": "one round"}}),
    )]
    .into_iter()
    .collect::<rmcp::model::InputResponses>();
    let with = |state: String| {
        prompt(name, json!({}))
            .with_input_responses(answers.clone())
            .with_request_state(state)
    };

    let err = client
        .get_prompt_once(with(format!("{state}-TAMPERED")))
        .await
        .expect_err("a tampered requestState is an error");
    assert!(
        matches!(err, ServiceError::McpError(ref e) if e.code.0 == -32602 && e.message == "invalid requestState"),
        "{err:?}"
    );

    let done = client.get_prompt_once(with(state)).await.expect("round 2");
    let GetPromptResponse::Complete(r) = done else {
        panic!("expected a complete result, got {done:?}");
    };
    assert_eq!(
        serde_json::to_value(&r.messages).unwrap()[0]["content"]["text"],
        "Use this context: one round"
    );
    assert!(host.asked().is_empty(), "nothing went through the handler");

    client.cancel().await.expect("cancel");
    handle.shutdown().await.expect("shutdown");
}
