//! The conformance fixture tools, in-process: the shapes the official suite checks, without
//! Node. Each request is a raw JSON-RPC message the way the suite sends it.

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::server::Server;
use mcp_tool_tests::fixture;
use serde_json::{Value, json};

fn server() -> Server {
    fixture::server(None).expect("fixture server")
}

fn all_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

async fn rpc(s: &Server, method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fixture-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let msg = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    s.handle(msg, &Principal::anonymous())
        .await
        .expect("a response")
        .to_value()
}

async fn call(s: &Server, params: Value) -> Value {
    rpc(s, "tools/call", params, all_caps()).await
}

#[tokio::test]
async fn lists_every_fixture_tool_with_a_description() {
    let s = server();
    let r = rpc(&s, "tools/list", json!({}), all_caps()).await;
    let tools = r["result"]["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    let mut want = fixture::TOOL_NAMES.to_vec();
    want.sort_unstable();
    assert_eq!(names, want);
    for t in tools {
        let d = t["description"].as_str().unwrap_or("");
        assert!(!d.is_empty(), "{} has no description", t["name"]);
        assert_eq!(t["inputSchema"]["type"], "object");
    }
}

#[tokio::test]
async fn content_tools_return_the_exact_shapes() {
    let s = server();
    let r = call(&s, json!({"name": "test_simple_text", "arguments": {}})).await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": fixture::SIMPLE_TEXT}])
    );
    assert_eq!(r["result"]["resultType"], "complete");

    let r = call(&s, json!({"name": "test_audio_content"})).await;
    assert_eq!(r["result"]["content"][0]["type"], "audio");
    assert_eq!(r["result"]["content"][0]["mimeType"], "audio/wav");

    let r = call(&s, json!({"name": "test_embedded_resource"})).await;
    assert_eq!(
        r["result"]["content"][0]["resource"],
        json!({"uri": "test://embedded-resource", "mimeType": "text/plain",
               "text": "This is an embedded resource content."})
    );

    let r = call(&s, json!({"name": "test_multiple_content_types"})).await;
    let kinds: Vec<&str> = r["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
    assert_eq!(
        r["result"]["content"][2]["resource"]["text"],
        r#"{"test":"data","value":123}"#
    );

    let r = call(&s, json!({"name": "test_error_handling"})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["content"][0]["text"], fixture::ERROR_TEXT);
}

#[tokio::test]
async fn missing_capability_is_32021_with_required_capabilities() {
    let s = server();
    let r = rpc(
        &s,
        "tools/call",
        json!({"name": "test_missing_capability"}),
        json!({}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert_eq!(r["id"], 7);
}

#[tokio::test]
async fn elicitation_round_trip_and_answers_on_the_first_round() {
    let s = server();
    let name = "test_input_required_result_elicitation";
    let r = call(&s, json!({"name": name, "arguments": {}})).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required");
    let req = &res["inputRequests"]["user_name"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["message"], "What is your name?");
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(
        req["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    let state = res["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();

    let alice = json!({"action": "accept", "content": {"name": "Alice"}});
    let r = call(
        &s,
        json!({"name": name, "inputResponses": {"user_name": alice}, "requestState": state}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Alice!", "{r}");

    // ignore-extra-params: a first round (no state) that already carries the answer, plus
    // unknown keys, completes.
    let r = call(
        &s,
        json!({"name": name, "inputResponses": {
            "user_name": alice, "unknown_extra_key": {"x": 1}, "another_unexpected": 5}}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Alice!");

    // missing-input-response / validate-input: wrong key or wrong shape -> asked again.
    for responses in [
        json!({"wrong_key": alice}),
        json!({"user_name": 12345}),
        Value::Null,
    ] {
        let r = call(&s, json!({"name": name, "inputResponses": responses})).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
        assert!(r["result"]["inputRequests"]["user_name"].is_object());
    }
}

#[tokio::test]
async fn multi_round_states_differ_and_tampering_is_refused() {
    let s = server();
    let name = "test_input_required_result_multi_round";
    let r1 = call(&s, json!({"name": name})).await;
    let st1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(r1["result"]["inputRequests"]["step1"].is_object());
    let r2 = call(
        &s,
        json!({"name": name, "requestState": st1,
               "inputResponses": {"step1": {"action": "accept", "content": {"name": "Ada"}}}}),
    )
    .await;
    let st2 = r2["result"]["requestState"].as_str().unwrap().to_owned();
    assert_ne!(st1, st2);
    assert_eq!(
        r2["result"]["inputRequests"]["step2"]["params"]["message"],
        "Step 2: What is your favorite color?"
    );
    let r3 = call(
        &s,
        json!({"name": name, "requestState": st2,
               "inputResponses": {"step2": {"action": "accept", "content": {"color": "teal"}}}}),
    )
    .await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Ada's favorite color is teal."
    );

    let name = "test_input_required_result_tampered_state";
    let r = call(&s, json!({"name": name})).await;
    let st = r["result"]["requestState"].as_str().unwrap();
    let r = call(
        &s,
        json!({"name": name, "requestState": format!("{st}-TAMPERED"),
               "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn capability_tool_asks_for_sampling_only() {
    let s = server();
    let r = rpc(
        &s,
        "tools/call",
        json!({"name": "test_input_required_result_capabilities"}),
        json!({"sampling": {}}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let reqs = r["result"]["inputRequests"].as_object().unwrap();
    assert!(!reqs.is_empty());
    assert!(
        reqs.values()
            .all(|q| q["method"] == "sampling/createMessage")
    );
}

#[tokio::test]
async fn multiple_inputs_in_one_round() {
    let s = server();
    let name = "test_input_required_result_multiple_inputs";
    let r = call(&s, json!({"name": name})).await;
    let reqs = &r["result"]["inputRequests"];
    assert_eq!(reqs["user_name"]["method"], "elicitation/create");
    assert_eq!(reqs["greeting"]["method"], "sampling/createMessage");
    assert_eq!(reqs["greeting"]["params"]["maxTokens"], 50);
    assert_eq!(reqs["client_roots"]["method"], "roots/list");
    let st = r["result"]["requestState"].as_str().unwrap();
    let r = call(
        &s,
        json!({"name": name, "requestState": st, "inputResponses": {
            "user_name": {"action": "accept", "content": {"name": "Alice"}},
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi!"},
                         "model": "test-model", "stopReason": "endTurn"},
            "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}}}),
    )
    .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "Hi! Name: Alice; roots: 1",
        "{r}"
    );
}

#[tokio::test]
async fn progress_tool_reports_0_50_100_only_with_a_token() {
    use mcp_tool_runtime::server::NotificationSink;
    let s = server();
    let request = |token: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": all_caps(),
        });
        if let Some(t) = token {
            meta["progressToken"] = json!(t);
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": meta}})
    };
    let (sink, mut rx) = NotificationSink::channel();
    let resp = s
        .handle_text(
            &request(Some("progress-test-1")).to_string(),
            &Principal::anonymous(),
            sink,
        )
        .await
        .unwrap()
        .into_response();
    let mut seen = Vec::new();
    while let Ok(n) = rx.try_recv() {
        assert_eq!(n["method"], "notifications/progress");
        assert_eq!(n["params"]["progressToken"], "progress-test-1");
        assert_eq!(n["params"]["total"], 100.0);
        seen.push(n["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(seen, [0.0, 50.0, 100.0]);
    let result = resp.result_value().unwrap();
    assert_eq!(result["content"][0]["text"], fixture::PROGRESS_TEXT);

    let (sink, mut rx) = NotificationSink::channel();
    let resp = s
        .handle_text(&request(None).to_string(), &Principal::anonymous(), sink)
        .await
        .unwrap()
        .into_response();
    assert!(rx.try_recv().is_err());
    assert_eq!(
        resp.result_value().unwrap()["content"][0]["text"],
        fixture::PROGRESS_TEXT
    );
}

#[tokio::test]
async fn schema_and_header_tools_are_listed_as_the_suite_expects() {
    let s = server();
    let list = rpc(&s, "tools/list", json!({}), all_caps()).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap().clone();
    // json-schema-2020-12: the schema is advertised keyword for keyword.
    let js = find("json_schema_2020_12_tool");
    assert_eq!(
        js["inputSchema"],
        Value::Object(fixture::json_schema_2020_12_input())
    );
    // http-custom-header-server-validation: a string parameter with x-mcp-header.
    let ch = find("test_custom_header");
    assert_eq!(
        ch["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    assert_eq!(ch["inputSchema"]["properties"]["region"]["type"], "string");
    let out = call(
        &s,
        json!({"name": "test_custom_header", "arguments": {"region": "Hello"}}),
    )
    .await;
    assert_eq!(out["result"]["content"][0]["text"], "region: Hello");
    let out = call(
        &s,
        json!({"name": "json_schema_2020_12_tool", "arguments": {"name": "Ada", "contactMethod": "email", "email": "a@b.c"}}),
    )
    .await;
    assert_eq!(out["result"]["content"][0]["text"], "contact Ada via email");
}

#[tokio::test]
async fn serves_the_skills_the_sep_2640_scenarios_read() {
    let s = server();
    let d = rpc(&s, "server/discover", json!({}), json!({})).await;
    assert_eq!(
        d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    let list = rpc(&s, "skills/list", json!({}), json!({})).await;
    let uris: Vec<&str> = list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://reports/daily/SKILL.md"
        ]
    );
    assert_eq!(list["result"]["skills"][2]["resources"], "dynamic");
    // The first skill's root has a subdirectory (the directory scenario descends into one).
    let dir = rpc(
        &s,
        "resources/directory/read",
        json!({"uri": "skill://acme/billing/refunds"}),
        json!({}),
    )
    .await;
    assert!(
        dir["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["mimeType"] == "inode/directory")
    );
    let daily = rpc(
        &s,
        "resources/read",
        json!({"uri": "skill://reports/daily/SKILL.md"}),
        json!({}),
    )
    .await;
    let text = daily["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("---\nname: daily\ndescription: Assemble today's report"));
}
