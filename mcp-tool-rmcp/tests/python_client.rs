//! The official MCP Python SDK 2.3 (`mcp==2.3.0`, protocol 2026-07-28) against the example
//! server (`rmcp_example_server`: an rmcp server with two `#[mcp_tool]` tools mounted), over
//! Streamable HTTP and as the Python client's stdio child.
//!
//! The harness is `mcp-tool-tests`' (`tests/tests/python_peer/`, through `support`): it
//! installs the SDK into a venv under `target/peers/python/` (once, then reused) and drives
//! `tests/python/sdk2_client.py`, whose callbacks answer each input request by its key and
//! record what they were asked. A callback called with a key proves that a round went
//! through the SDK's own `input_required` loop.

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::python_peer::{self, PyClient, PythonSdk, SdkSpec};

const SDK_VERSION: &str = "2.3.0";

fn sdk() -> Arc<PythonSdk> {
    python_peer::sdk(&SdkSpec::pinned(SDK_VERSION)).unwrap_or_else(|e| panic!("{e}"))
}

fn script() -> std::path::PathBuf {
    python_peer::python_dir().join("sdk2_client.py")
}

/// The scripted answers, by input-request key.
fn answers() -> Value {
    json!({
        "who": {"elicitation": {"action": "accept", "content": {"name": "Ada"}}},
        "verdict": {"sampling": {"role": "assistant", "content": {"type": "text", "text": "Grand."},
                                 "model": "python-peer-model", "stopReason": "endTurn"}},
        "rating": {"elicitation": {"action": "accept", "content": {"stars": 2}}},
        "reader": {"elicitation": {"action": "accept", "content": {"audience": "sailors"}}},
    })
}

fn stdio() -> Value {
    json!({"stdio": {"command": support::example_bin(), "args": [], "env": {"RUST_LOG": "warn"}}})
}

/// A client on `transport` declaring `capabilities` (a subset of elicitation, sampling,
/// roots); returns it with what it learned from `server/discover`.
fn connect(transport: &Value, capabilities: &[&str]) -> (PyClient, Value) {
    let mut client = PyClient::start(&sdk(), script());
    let reply = client.start_op(json!({"op": "connect", "transport": transport,
        "answers": answers(), "capabilities": capabilities}));
    let info = reply.result().clone();
    assert_eq!(info["sdkVersion"], SDK_VERSION, "{info}");
    assert_eq!(info["protocolVersion"], "2026-07-28", "{info}");
    assert_eq!(info["discovered"], true, "server/discover: {info}");
    assert_eq!(
        info["serverInfo"]["name"], "weather-desk",
        "the team's server: {info}"
    );
    (client, info)
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
}

fn kinds_and_keys(asked: &[Value]) -> Vec<(String, String)> {
    asked
        .iter()
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap_or_default().to_owned();
            (s("kind"), s("key"))
        })
        .collect()
}

fn pair(kind: &str, key: &str) -> (String, String) {
    (kind.to_owned(), key.to_owned())
}

/// Lists, both mounted tools through their rounds, the native tool reading what one stored,
/// one round at a time with a tampered state, and the -32021 of a client without sampling.
fn scenario(transport: Value) {
    let (mut client, info) = connect(&transport, &["elicitation", "sampling"]);
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    let tools = client.op(json!({"op": "list_tools"}));
    let tools = tools.result();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["ratings", "forecast", "rate_city"]);
    assert_eq!(
        tools["tools"][2]["inputSchema"]["properties"]["city"]["type"],
        "string"
    );

    let r =
        client.op(json!({"op": "call_tool", "name": "forecast", "arguments": {"city": "London"}}));
    assert_eq!(
        text(r.result()),
        "Ada: cloudy, 14°C in London; the model says: Grand."
    );
    assert_eq!(
        kinds_and_keys(r.asked()),
        [pair("elicitation", "who"), pair("sampling", "verdict")]
    );
    let who = &r.asked()[0]["params"];
    assert_eq!(who["message"], "What is your name?");
    assert_eq!(
        who["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );

    let r =
        client.op(json!({"op": "call_tool", "name": "rate_city", "arguments": {"city": "London"}}));
    assert_eq!(text(r.result()), "London rated 2 stars");
    assert_eq!(kinds_and_keys(r.asked()), [pair("elicitation", "rating")]);
    let r = client.op(json!({"op": "call_tool", "name": "ratings", "arguments": {}}));
    assert_eq!(text(r.result()), "London: 2 stars");
    assert!(r.asked().is_empty());

    // One round at a time: a tampered state, then the real one.
    let args = json!({"city": "Bergen"});
    let first = client.op(json!({"op": "call_tool_once", "name": "rate_city", "arguments": args}));
    let first = first.result().clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let state = first["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    let answer = json!({"rating": {"action": "accept", "content": {"stars": 5}}});
    let tampered = client.op(
        json!({"op": "call_tool_once", "name": "rate_city", "arguments": args,
        "input_responses": answer, "request_state": format!("{state}x")}),
    );
    let err = tampered.error();
    assert_eq!(err["code"], -32602, "{err}");
    assert_eq!(err["message"], "invalid requestState");
    let done = client.op(
        json!({"op": "call_tool_once", "name": "rate_city", "arguments": args,
        "input_responses": answer, "request_state": state}),
    );
    assert_eq!(text(done.result()), "Bergen rated 5 stars");

    prompts_resources_completion(&mut client);
    client.close();

    // Without sampling: forecast is refused before it runs; rate_city still works.
    let (mut client, _) = connect(&transport, &["elicitation"]);
    let r =
        client.op(json!({"op": "call_tool", "name": "forecast", "arguments": {"city": "Paris"}}));
    let err = r.error();
    assert_eq!(err["code"], -32021, "{err}");
    assert!(
        err["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{err}"
    );
    assert!(r.asked().is_empty(), "nothing asked: {:?}", r.asked());
    let r =
        client.op(json!({"op": "call_tool", "name": "rate_city", "arguments": {"city": "Paris"}}));
    assert_eq!(text(r.result()), "Paris rated 2 stars");
    client.close();
}

/// The mounted prompt through its round, the resource template and a completion.
fn prompts_resources_completion(client: &mut PyClient) {
    let prompts = client.op(json!({"op": "list_prompts"}));
    assert_eq!(
        prompts.result()["prompts"][0]["name"],
        "briefing",
        "{}",
        prompts.raw
    );
    let r =
        client.op(json!({"op": "get_prompt", "name": "briefing", "arguments": {"city": "Paris"}}));
    assert_eq!(
        r.result()["messages"][0]["content"]["text"],
        "Brief sailors on the weather in Paris: rain, 17°C."
    );
    assert_eq!(kinds_and_keys(r.asked()), [pair("elicitation", "reader")]);

    let templates = client.op(json!({"op": "list_resource_templates"}));
    assert_eq!(
        templates.result()["resourceTemplates"][0]["uriTemplate"],
        "weather://{city}/today"
    );
    let r = client.op(json!({"op": "read_resource", "uri": "weather://London/today"}));
    assert_eq!(r.result()["contents"][0]["text"], "cloudy, 14°C");

    let r = client.op(
        json!({"op": "complete", "ref": {"type": "ref/prompt", "name": "briefing"},
        "argument": {"name": "city", "value": "L"}}),
    );
    assert_eq!(
        r.result()["completion"]["values"],
        json!(["Lagos", "Lima", "Lisbon", "London"])
    );
}

#[test]
fn python_sdk_over_http() {
    let server = support::http(&[]);
    scenario(json!({"http": server.url()}));
}

#[test]
fn python_sdk_over_stdio() {
    scenario(stdio());
}
