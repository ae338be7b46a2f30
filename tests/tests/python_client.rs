//! The official MCP Python SDK 2.3 (`mcp==2.3.0`, protocol 2026-07-28) as an independent
//! client of our server.
//!
//! The harness (`python_peer/`) installs the SDK into a venv under `target/peers/python/`
//! (reused across runs), starts the `conformance_fixture` binary (Streamable HTTP on a free
//! loopback port, or as the Python client's stdio child) and drives
//! `tests/python/sdk2_client.py`, which runs each operation with the SDK's high-level
//! `mcp.Client` and answers with the parsed result and what its callbacks were asked.
//!
//! The SDK drives `input_required` rounds itself (`mcp/client/_input_required.py`): it hands
//! each `inputRequests` entry to the elicitation / sampling / roots callback with the entry's
//! key as the callback context's `request_id`, concurrently, then retries the same request
//! with `inputResponses` and the echoed `requestState`, for `tools/call`, `prompts/get` and
//! `resources/read` alike. So a callback called with a key proves a round went through.

mod python_peer;

use std::collections::BTreeSet;
use std::sync::Arc;

use base64::Engine as _;
use mcp_tool_tests::fixture::{RED_PIXEL_PNG, TOOL_NAMES};
use python_peer::{Fixture, PyClient, PythonSdk, SdkSpec, stdio_transport};
use serde_json::{Value, json};

/// The SDK version under test.
const SDK_VERSION: &str = "2.3.0";
/// The client script for the 2.x SDK.
const SCRIPT: &str = "sdk2_client.py";

const PROMPTS: &[&str] = &[
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
];

fn sdk() -> Arc<PythonSdk> {
    python_peer::sdk(&SdkSpec::pinned(SDK_VERSION)).unwrap_or_else(|e| panic!("{e}"))
}

/// What the scripted host answers, by input-request key.
fn answers() -> Value {
    let text = |t: &str| {
        json!({"sampling": {"role": "assistant", "content": {"type": "text", "text": t},
                            "model": "python-peer-model", "stopReason": "endTurn"}})
    };
    let form = |content: Value| json!({"elicitation": {"action": "accept", "content": content}});
    json!({
        "user_context": form(json!({"context": "the Rust MCP framework"})),
        "user_name": form(json!({"name": "Ferris"})),
        "step1": form(json!({"name": "Ferris"})),
        "step2": form(json!({"color": "teal"})),
        "capital_question": text("Paris."),
        "greeting": text("Hello!"),
        "client_roots": {"roots": {"roots": [{"uri": "file:///workspace", "name": "workspace"}]}},
    })
}

/// A client connected to `transport`, after checking what it learned from `server/discover`.
fn connect(transport: Value) -> PyClient {
    let mut client = PyClient::start(&sdk(), SCRIPT);
    let info = client.connect(transport, answers());
    assert_eq!(info["sdkVersion"], SDK_VERSION, "{info}");
    assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
    assert_eq!(
        info["discovered"], true,
        "server/discover, not initialize: {info}"
    );
    assert_eq!(info["initialized"], false, "{info}");
    assert_eq!(
        info["serverInfo"],
        json!({"name": "mcp-tool-conformance-fixture", "version": "0.1.0"})
    );
    for cap in ["tools", "prompts", "resources", "completions"] {
        assert!(info["capabilities"][cap].is_object(), "{cap}: {info}");
    }
    client
}

fn names(list: &Value, field: &str, key: &str) -> BTreeSet<String> {
    list[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field}: {list}"))
        .iter()
        .map(|t| t[key].as_str().expect(key).to_owned())
        .collect()
}

fn find<'a>(list: &'a Value, field: &str, key: &str, value: &str) -> &'a Value {
    list[field]
        .as_array()
        .and_then(|a| a.iter().find(|t| t[key] == value))
        .unwrap_or_else(|| panic!("{value} not in {field}: {list}"))
}

fn assert_cacheable(result: &Value) {
    assert!(result["ttlMs"].as_u64().is_some(), "ttlMs: {result}");
    let scope = result["cacheScope"].as_str().unwrap_or_default();
    assert!(scope == "public" || scope == "private", "{result}");
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
}

// ----------------------------------------------------------------------- scenarios

fn lists(client: &mut PyClient) {
    let tools = client.op(json!({"op": "list_tools"}));
    let tools = tools.result();
    let want: BTreeSet<String> = TOOL_NAMES.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(names(tools, "tools", "name"), want);
    let sampling = find(
        tools,
        "tools",
        "name",
        "test_input_required_result_sampling",
    );
    assert_eq!(sampling["inputSchema"]["type"], "object", "{sampling}");
    assert!(sampling["description"].is_string(), "{sampling}");
    assert_cacheable(tools);

    let prompts = client.op(json!({"op": "list_prompts"}));
    let prompts = prompts.result();
    let want: BTreeSet<String> = PROMPTS.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(names(prompts, "prompts", "name"), want);
    let with_args = find(prompts, "prompts", "name", "test_prompt_with_arguments");
    assert_eq!(
        with_args["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true},
        ])
    );
    assert!(
        prompts["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["description"].is_string()),
        "{prompts}"
    );
    assert_cacheable(prompts);

    let resources = client.op(json!({"op": "list_resources"}));
    let resources = resources.result();
    // (the fixture's skill files, skill://…, are listed too; tests/tests/conformance_fixture.rs)
    let mut uris = names(resources, "resources", "uri");
    uris.retain(|u| !u.starts_with("skill://"));
    assert_eq!(
        uris,
        [
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ]
        .map(str::to_owned)
        .into()
    );
    let text = find(resources, "resources", "uri", "test://static-text");
    assert_eq!(
        (&text["name"], &text["mimeType"]),
        (&json!("static-text"), &json!("text/plain"))
    );
    let binary = find(resources, "resources", "uri", "test://static-binary");
    assert_eq!(binary["mimeType"], "image/png");
    assert_cacheable(resources);

    let templates = client.op(json!({"op": "list_resource_templates"}));
    let templates = templates.result();
    let template = find(
        templates,
        "resourceTemplates",
        "uriTemplate",
        "test://template/{id}/data",
    );
    assert_eq!(template["name"], "template-data");
    assert_eq!(template["mimeType"], "application/json");
    assert_eq!(templates["resourceTemplates"].as_array().unwrap().len(), 1);
    assert_cacheable(templates);
}

fn prompt_with_arguments(client: &mut PyClient) {
    let r = client.op(
        json!({"op": "get_prompt", "name": "test_prompt_with_arguments",
                             "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
    );
    let result = r.result();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["messages"],
        json!([{"role": "user", "content": {"type": "text",
               "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}])
    );
    assert!(r.asked().is_empty());
}

fn prompt_input_required(client: &mut PyClient) {
    let r = client.op(json!({"op": "get_prompt", "name": "test_input_required_result_prompt"}));
    let result = r.result();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["messages"][0]["content"]["text"],
        "Use this context: the Rust MCP framework"
    );
    // One elicitation, through the SDK's input_required driver (keyed by our input key).
    let asked = r.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["kind"], "elicitation");
    assert_eq!(asked[0]["key"], "user_context");
    let params = &asked[0]["params"];
    assert_eq!(params["message"], "What context should the prompt use?");
    assert_eq!(params["requestedSchema"]["type"], "object");
    assert_eq!(
        params["requestedSchema"]["properties"]["context"]["type"],
        "string"
    );
    assert_eq!(params["requestedSchema"]["required"], json!(["context"]));
}

/// The same prompt one round at a time (`ClientSession.get_prompt(...,
/// allow_input_required=True)`): what the first answer looks like to the SDK, a tampered
/// state, a retry without answers, and the right retry.
fn prompt_rounds_by_hand(client: &mut PyClient) {
    let name = "test_input_required_result_prompt";
    let first = client.op(json!({"op": "get_prompt_once", "name": name}));
    let first = first.result().clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let requests = first["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["user_context"]);
    assert_eq!(requests["user_context"]["method"], "elicitation/create");
    let state = first["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    assert!(first.get("messages").is_none());
    assert!(
        first.get("ttlMs").is_none(),
        "input_required is not cacheable: {first}"
    );

    let answer = json!({"user_context": {"action": "accept", "content": {"context": "by hand"}}});
    let tampered = client.op(json!({"op": "get_prompt_once", "name": name,
        "input_responses": answer, "request_state": format!("{state}x")}));
    let err = tampered.error();
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["message"], "invalid requestState");

    // The state alone, without the answer: asked again, not an error.
    let again = client.op(json!({"op": "get_prompt_once", "name": name, "request_state": state}));
    let again = again.result();
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert!(
        again["inputRequests"]["user_context"].is_object(),
        "{again}"
    );

    let done = client.op(json!({"op": "get_prompt_once", "name": name,
        "input_responses": answer, "request_state": state}));
    let done = done.result();
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(
        done["messages"][0]["content"]["text"],
        "Use this context: by hand"
    );
}

fn resources(client: &mut PyClient) {
    let r = client.op(json!({"op": "read_resource", "uri": "test://static-text"}));
    let result = r.result();
    assert_eq!(
        result["contents"],
        json!([{"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}])
    );
    assert_cacheable(result);

    let r = client.op(json!({"op": "read_resource", "uri": "test://static-binary"}));
    let result = r.result();
    let contents = &result["contents"][0];
    assert_eq!(contents["uri"], "test://static-binary");
    assert_eq!(contents["mimeType"], "image/png");
    let blob = base64::engine::general_purpose::STANDARD
        .decode(contents["blob"].as_str().expect("blob"))
        .expect("base64 blob");
    assert!(blob.starts_with(b"\x89PNG\r\n\x1a\n"), "{blob:?}");
    let pixel = base64::engine::general_purpose::STANDARD
        .decode(RED_PIXEL_PNG)
        .unwrap();
    assert_eq!(blob, pixel);

    let r = client.op(json!({"op": "read_resource", "uri": "test://template/123/data"}));
    let result = r.result();
    let contents = &result["contents"][0];
    assert_eq!(contents["uri"], "test://template/123/data");
    assert_eq!(contents["mimeType"], "application/json");
    let data: Value = serde_json::from_str(contents["text"].as_str().expect("text")).unwrap();
    assert_eq!(
        data,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
    );

    // An unknown URI: -32602 with data.uri (SEP-2164), as the SDK reports it.
    let r = client.op(json!({"op": "read_resource", "uri": "test://nope"}));
    let err = r.error();
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["data"]["uri"], "test://nope", "{err}");
}

fn completion(client: &mut PyClient) {
    let r = client.op(json!({"op": "complete",
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "pa"}}));
    let result = r.result();
    assert_eq!(
        result["completion"]["values"],
        json!(["paris", "park", "party"])
    );
    assert_eq!(result["completion"]["total"], 3);
    assert_eq!(result["completion"]["hasMore"], false);
    assert_eq!(result["resultType"], "complete");
}

// ----------------------------------------------------------------------- over HTTP

#[test]
fn http_discover_and_lists() {
    let server = Fixture::http();
    let mut client = connect(server.transport());
    lists(&mut client);
    client.close();
}

#[test]
fn http_prompts_with_arguments_and_input_required() {
    let server = Fixture::http();
    let mut client = connect(server.transport());
    prompt_with_arguments(&mut client);
    prompt_input_required(&mut client);
    prompt_rounds_by_hand(&mut client);
    client.close();
}

#[test]
fn http_resources_and_completion() {
    let server = Fixture::http();
    let mut client = connect(server.transport());
    resources(&mut client);
    completion(&mut client);
    client.close();
}

#[test]
fn http_tools_through_elicitation_and_sampling_rounds() {
    let server = Fixture::http();
    let mut client = connect(server.transport());

    let r = client.op(
        json!({"op": "call_tool", "name": "test_input_required_result_elicitation",
                             "arguments": {}}),
    );
    assert_eq!(first_text(r.result()), "Hello, Ferris!");
    assert_eq!(r.result()["isError"], false);
    let asked = r.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (&asked[0]["kind"], &asked[0]["key"]),
        (&json!("elicitation"), &json!("user_name"))
    );
    assert_eq!(asked[0]["params"]["message"], "What is your name?");
    assert_eq!(
        asked[0]["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );

    let r = client.op(
        json!({"op": "call_tool", "name": "test_input_required_result_sampling",
                             "arguments": {}}),
    );
    assert_eq!(first_text(r.result()), "The model answered: Paris.");
    let asked = r.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (&asked[0]["kind"], &asked[0]["key"]),
        (&json!("sampling"), &json!("capital_question"))
    );
    assert_eq!(asked[0]["params"]["maxTokens"], 100);
    assert_eq!(
        asked[0]["params"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}])
    );

    // Two rounds; the first answer survives in our requestState.
    let r = client.op(
        json!({"op": "call_tool", "name": "test_input_required_result_multi_round",
                             "arguments": {}}),
    );
    assert_eq!(first_text(r.result()), "Ferris's favorite color is teal.");
    let keys: Vec<&Value> = r.asked().iter().map(|a| &a["key"]).collect();
    assert_eq!(keys, [&json!("step1"), &json!("step2")]);

    // Three kinds in one round, which the SDK dispatches concurrently.
    let r = client.op(
        json!({"op": "call_tool", "name": "test_input_required_result_multiple_inputs",
                             "arguments": {}}),
    );
    assert_eq!(first_text(r.result()), "Hello! Name: Ferris; roots: 1");
    let mut kinds: Vec<(String, String)> = r
        .asked()
        .iter()
        .map(|a| {
            (
                a["kind"].as_str().unwrap().to_owned(),
                a["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("elicitation", "user_name"),
            ("roots", "client_roots"),
            ("sampling", "greeting")
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    client.close();
}

// ----------------------------------------------------------------------- over stdio

#[test]
fn stdio_prompts_resources_and_completion() {
    let mut client = connect(stdio_transport());
    lists(&mut client);
    prompt_with_arguments(&mut client);
    prompt_input_required(&mut client);
    prompt_rounds_by_hand(&mut client);
    resources(&mut client);
    completion(&mut client);
    client.close();
}

// ----------------------------------------------------------------------- the harness itself

/// Without a reachable package index the install fails, quickly and saying what it needs
/// (rather than hanging): pip is pointed at a closed local port.
#[test]
fn install_without_an_index_fails_clearly() {
    let dir = python_peer::cache_dir()
        .join("python")
        .join("no-index-probe");
    let _ = std::fs::remove_dir_all(&dir);
    let spec = SdkSpec {
        index_url: Some("http://127.0.0.1:9/simple".to_owned()),
        venv: dir.clone(),
        ..SdkSpec::pinned(SDK_VERSION)
    };
    let start = std::time::Instant::now();
    let err = python_peer::ensure(&spec).expect_err("no index, no install");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(120),
        "{:?}",
        start.elapsed()
    );
    assert!(err.contains("could not install mcp==2.3.0"), "{err}");
    assert!(err.contains("network access to PyPI"), "{err}");
    assert!(!dir.exists(), "no venv is left that looks ready");
    let partial = dir.with_extension(format!("partial-{}", std::process::id()));
    assert!(!partial.exists(), "the half-made venv is removed");
}

/// The SDK's `Client.listen` (`mcp/client/subscriptions.py`) over Streamable HTTP: the
/// acknowledged filter is what the fixture agreed to (an unknown URI left out), then the
/// events raised by tools the client calls meanwhile arrive in order: a resource update
/// (`cx.resource_updated` on a URI of the template `test://template/{id}/data`), not the
/// update of a URI it did not ask for, and a tools list change. (SDK 2.3's `listen` has no
/// `taskIds` and its event vocabulary has no `notifications/tasks`: task status
/// notifications are proved with our own client, `mcp-tool-runtime/tests/listen.rs`.)
#[test]
fn http_listen_hears_resource_updates_and_list_changes() {
    let server = Fixture::http();
    let mut client = connect(server.transport());
    let r = client.op(json!({"op": "listen",
        "filter": {"tools_list_changed": true,
                   "resource_subscriptions": ["test://template/7/data", "nope://x"]},
        "calls": [
            ["test_trigger_resource_update", {"uri": "test://template/8/data"}],
            ["test_trigger_resource_update", {"uri": "test://template/7/data"}],
            ["test_trigger_tool_change", {}],
        ],
        "events": 2}));
    let result = r.result();
    assert_eq!(
        result["honored"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://template/7/data"]}),
        "{result}"
    );
    assert_eq!(
        result["events"],
        json!([
            {"type": "ResourceUpdated", "uri": "test://template/7/data"},
            {"type": "ToolsListChanged"},
        ]),
        "{result}"
    );
    client.close();
}
