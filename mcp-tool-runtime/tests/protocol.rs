//! Serde model of MCP 2026-07-28: shapes from the specification round-trip, unknown
//! fields are tolerated (and kept where the schema allows extension).

use mcp_tool_runtime::protocol::*;
use serde_json::{Value, json};

fn roundtrip<T: serde::Serialize + serde::de::DeserializeOwned>(v: Value) -> (T, Value) {
    let t: T = serde_json::from_value(v).expect("deserializes");
    let back = serde_json::to_value(&t).expect("serializes");
    (t, back)
}

#[test]
fn jsonrpc_envelope() {
    let (m, back) = roundtrip::<JsonRpcMessage>(
        json!({"jsonrpc": "2.0", "id": "a1", "method": "tools/list", "params": {"x": 1}}),
    );
    assert!(matches!(m, JsonRpcMessage::Request(ref r) if r.id == RequestId::from("a1")));
    assert_eq!(back["id"], "a1");
    let (m, _) =
        roundtrip::<JsonRpcMessage>(json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}));
    assert!(matches!(m, JsonRpcMessage::Notification(_)));
    let (m, _) = roundtrip::<JsonRpcMessage>(
        json!({"jsonrpc": "2.0", "id": 3, "result": {"resultType": "complete"}}),
    );
    assert!(matches!(
        m,
        JsonRpcMessage::Response(JsonRpcResponse::Result(_))
    ));
    let (m, back) = roundtrip::<JsonRpcResponse>(
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "x", "data": {"supported": ["2026-07-28"], "requested": "1"}}}),
    );
    assert_eq!(m.error_code(), Some(-32022));
    assert_eq!(m.id(), Some(&RequestId::from(4)));
    assert_eq!(back["error"]["data"]["requested"], "1");
    assert!(
        serde_json::from_value::<JsonRpcRequest>(json!({"jsonrpc": "1.0", "id": 1, "method": "m"}))
            .is_err()
    );
    // An error without an id (parse error) serializes without `id`.
    let e = JsonRpcResponse::error(None, ErrorObject::new(PARSE_ERROR, "Parse error"));
    assert_eq!(
        e.to_value(),
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})
    );
    assert_eq!(
        JsonRpcResponse::result(1.into(), json!({})).error_code(),
        None
    );
}

#[test]
fn request_meta_and_capabilities() {
    let (m, back) = roundtrip::<RequestMeta>(json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}, "future": {"x": 1}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1", "title": "C"},
        "progressToken": 7
    }));
    assert_eq!(m.protocol_version, PROTOCOL_VERSION);
    assert!(m.client_capabilities.sampling.is_some());
    assert_eq!(m.client_info.as_ref().map(|i| i.name.as_str()), Some("c"));
    assert_eq!(back["progressToken"], 7);
    assert_eq!(
        back["io.modelcontextprotocol/clientCapabilities"]["future"],
        json!({"x": 1})
    );

    let form_only: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {}})).expect("caps");
    let e = form_only.elicitation.as_ref().expect("elicitation");
    assert!(e.supports_form() && !e.supports_url());
    let url_only: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"url": {}}})).expect("caps");
    let e = url_only.elicitation.as_ref().expect("elicitation");
    assert!(!e.supports_form() && e.supports_url());
    assert_eq!(
        serde_json::to_value(ClientCapabilities::none()).expect("json"),
        json!({})
    );
    let built = ClientCapabilities::none()
        .with_sampling()
        .with_roots()
        .with_elicitation();
    assert_eq!(
        serde_json::to_value(built).expect("json"),
        json!({"sampling": {}, "roots": {}, "elicitation": {}})
    );
    assert_eq!(
        RequestMeta::new(ClientCapabilities::none()).to_value(),
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        })
    );
}

#[test]
fn input_requests_from_the_spec() {
    let (reqs, back) = roundtrip::<InputRequests>(json!({
        "github_login": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Please provide your GitHub username",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }},
        "capital_of_france": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
            "systemPrompt": "You are a helpful assistant.", "maxTokens": 100
        }},
        "r": {"method": "roots/list"},
        "u": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x.example/a"}}
    }));
    assert!(matches!(
        reqs["github_login"],
        InputRequest::Elicit(ElicitParams::Form(_))
    ));
    assert!(
        matches!(reqs["capital_of_france"], InputRequest::Sample(ref p) if p.max_tokens == 100)
    );
    assert!(matches!(reqs["r"], InputRequest::Roots(_)));
    assert!(
        matches!(reqs["u"], InputRequest::Elicit(ElicitParams::Url(ref p)) if p.url == "https://x.example/a")
    );
    assert_eq!(
        back["capital_of_france"]["params"]["systemPrompt"],
        "You are a helpful assistant."
    );
    assert_eq!(back["r"], json!({"method": "roots/list", "params": {}}));
    // Form mode may omit `mode`; it is written explicitly.
    let (r, back) = roundtrip::<InputRequest>(json!({"method": "elicitation/create", "params": {
        "message": "m", "requestedSchema": {"type": "object", "properties": {}}}}));
    assert!(matches!(r, InputRequest::Elicit(ElicitParams::Form(_))));
    assert_eq!(back["params"]["mode"], "form");
    assert_eq!(r.capability(), Capability::Elicitation);
    assert_eq!(r.method(), "elicitation/create");
    // Unknown methods and modes are rejected.
    assert!(
        serde_json::from_value::<InputRequest>(json!({"method": "tools/call", "params": {}}))
            .is_err()
    );
    assert!(
        serde_json::from_value::<InputRequest>(
            json!({"method": "elicitation/create", "params": {"mode": "voice", "message": "m"}})
        )
        .is_err()
    );
}

#[test]
fn elicitation_params_are_written_member_by_member() {
    // Serialized to bytes (the path a transport takes), not through a tree: each member
    // once, `_meta` kept, and a member of `extra` that repeats one of the variant's own is
    // left out rather than written twice.
    let mut extra = JsonObject::new();
    extra.insert("_meta".into(), json!({"k": 1}));
    extra.insert("mode".into(), json!("url"));
    extra.insert("requestedSchema".into(), json!({"type": "string"}));
    let form = ElicitParams::Form(ElicitFormParams {
        message: "Your name?".into(),
        requested_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}})
            .as_object()
            .cloned()
            .expect("an object")
            .into(),
        extra: extra.clone(),
    });
    let text = serde_json::to_string(&form).expect("serializes");
    assert_eq!(text.matches("\"mode\"").count(), 1, "{text}");
    assert_eq!(text.matches("\"requestedSchema\"").count(), 1, "{text}");
    let back: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        back,
        json!({"mode": "form", "message": "Your name?", "_meta": {"k": 1},
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
    );
    let url = ElicitParams::Url(ElicitUrlParams {
        message: "Sign in".into(),
        url: "https://x.example/a".into(),
        extra: [("url".to_owned(), json!("https://evil.example"))]
            .into_iter()
            .collect(),
    });
    let back: Value =
        serde_json::from_str(&serde_json::to_string(&url).expect("serializes")).expect("JSON");
    assert_eq!(
        back,
        json!({"mode": "url", "message": "Sign in", "url": "https://x.example/a"})
    );
    assert_eq!(
        serde_json::from_value::<ElicitParams>(back).expect("reads back"),
        ElicitParams::Url(ElicitUrlParams {
            message: "Sign in".into(),
            url: "https://x.example/a".into(),
            extra: JsonObject::new(),
        })
    );
}

#[test]
fn sampling_params_full() {
    let (p, back) = roundtrip::<CreateMessageParams>(json!({
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]},
            {"role": "assistant", "content": {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}}},
            {"role": "user", "content": {"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "r"}]}}
        ],
        "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.1, "speedPriority": 0.2, "intelligencePriority": 0.9},
        "systemPrompt": "s", "includeContext": "thisServer", "temperature": 0.5, "maxTokens": 10,
        "stopSequences": ["x"], "metadata": {"k": "v"}, "toolChoice": {"mode": "auto"}
    }));
    assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
    assert_eq!(p.messages.len(), 3);
    assert_eq!(p.messages[0].content.as_slice().len(), 2);
    assert_eq!(back["toolChoice"], json!({"mode": "auto"}));
    assert_eq!(back["modelPreferences"]["hints"][0]["name"], "claude");
    assert!(
        serde_json::from_value::<CreateMessageParams>(json!({"messages": []})).is_err(),
        "maxTokens is required"
    );
}

#[test]
fn input_responses_and_their_kinds() {
    let (rs, _) = roundtrip::<InputResponses>(json!({
        "github_login": {"action": "accept", "content": {"name": "octocat"}},
        "capital_of_france": {"role": "assistant", "content": {"type": "text", "text": "Paris."},
                              "model": "claude-3-sonnet-20240307", "stopReason": "endTurn"},
        "r": {"roots": [{"uri": "file:///home/user/project", "name": "Project"}]},
        "d": {"action": "decline"}
    }));
    assert!(
        matches!(rs["github_login"], InputResponse::Elicit(ref e) if e.action == ElicitAction::Accept)
    );
    assert!(
        matches!(rs["capital_of_france"], InputResponse::Sample(ref s) if s.stop_reason.as_deref() == Some("endTurn"))
    );
    assert!(
        matches!(rs["r"], InputResponse::Roots(ref r) if r.roots[0].name.as_deref() == Some("Project"))
    );
    assert_eq!(rs["d"].capability(), Capability::Elicitation);
    // Parsing for a given kind rejects other shapes.
    let sample =
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"});
    assert!(InputResponse::parse_for(Capability::Sampling, sample.clone()).is_ok());
    assert!(InputResponse::parse_for(Capability::Elicitation, sample.clone()).is_err());
    assert!(InputResponse::parse_for(Capability::Roots, sample).is_err());
    assert!(InputResponse::parse_for(Capability::Elicitation, json!({"action": "accept"})).is_ok());
    assert!(InputResponse::parse_for(Capability::Elicitation, json!({"action": "ok"})).is_err());
    assert!(
        InputResponse::parse_for(Capability::Roots, json!({"roots": [{"name": "x"}]})).is_err()
    );
}

#[test]
fn input_required_result() {
    let (r, back) = roundtrip::<InputRequiredResult>(json!({
        "resultType": "input_required", "requestState": "abc",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    }));
    assert_eq!(r.result_type, ResultType::InputRequired);
    assert!(r.input_requests.is_none());
    assert!(back.get("inputRequests").is_none());
    let other: ResultType = serde_json::from_value(json!("task")).expect("open string");
    assert_eq!(other, ResultType::Other("task".into()));
    assert_eq!(serde_json::to_value(&other).expect("json"), json!("task"));
}

#[test]
fn call_tool_result_content_kinds() {
    let (r, back) = roundtrip::<CallToolResult>(json!({
        "resultType": "complete",
        "content": [
            {"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5}},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs", "mimeType": "text/x-rust", "icons": []},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///c", "blob": "AA==", "mimeType": "application/octet-stream"}}
        ],
        "structuredContent": [1, 2],
        "isError": false,
        "_meta": {"x": 1}
    }));
    assert_eq!(r.content.len(), 6);
    assert!(
        matches!(r.content[3], ContentBlock::ResourceLink(ref l) if l.extra.contains_key("icons"))
    );
    assert!(matches!(
        r.content[5],
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Blob { .. },
            ..
        })
    ));
    assert_eq!(
        back["content"][4],
        json!({"type": "resource", "resource": {"uri": "file:///b", "text": "hello"}})
    );
    assert_eq!(back["structuredContent"], json!([1, 2]));
    assert!(!r.is_error());
    assert!(CallToolResult::error("x").is_error());
    // resultType absent (older servers) means complete.
    let old: CallToolResult = serde_json::from_value(json!({"content": []})).expect("old");
    assert_eq!(old.result_type, ResultType::Complete);
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "video", "data": ""})).is_err());
}

#[test]
fn tool_descriptor_and_list_result() {
    let (t, back) = roundtrip::<ToolDescriptor>(json!({
        "name": "get_weather", "title": "Weather", "description": "d",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "outputSchema": {"type": "object"},
        "annotations": {"title": "W", "readOnlyHint": true, "destructiveHint": false,
                        "idempotentHint": true, "openWorldHint": false},
        "execution": {"taskSupport": "optional"},
        "icons": [{"src": "https://x/i.png"}],
        "_meta": {"k": 1}
    }));
    let a = t.annotations.as_ref().expect("annotations");
    assert_eq!(
        (
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint
        ),
        (Some(true), Some(false), Some(true), Some(false))
    );
    assert_eq!(back["execution"], json!({"taskSupport": "optional"}));
    assert_eq!(back["icons"][0]["src"], "https://x/i.png");
    let (l, back) = roundtrip::<ListToolsResult>(json!({
        "resultType": "complete", "tools": [], "nextCursor": "c", "ttlMs": 0, "cacheScope": "private"
    }));
    assert_eq!(l.cache_scope, CacheScope::Private);
    assert_eq!(back["ttlMs"], 0);
    assert!(
        serde_json::from_value::<ListToolsResult>(
            json!({"tools": [], "ttlMs": 1, "cacheScope": "everyone"})
        )
        .is_err()
    );
}

#[test]
fn discover_result_and_call_params() {
    let (d, back) = roundtrip::<DiscoverResult>(json!({
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": false}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "instructions": "i", "ttlMs": 60000, "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    }));
    assert_eq!(
        d.capabilities.tools.as_ref().and_then(|t| t.list_changed),
        Some(false)
    );
    assert_eq!(
        back["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "s"
    );
    let (p, back) = roundtrip::<CallToolParams>(json!({
        "name": "t", "arguments": {"a": 1}, "inputResponses": {"k": {"action": "cancel"}},
        "requestState": "s", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    }));
    assert_eq!(p.request_state.as_deref(), Some("s"));
    assert_eq!(back["inputResponses"]["k"]["action"], "cancel");
}

#[test]
fn capability_checks_of_requests() {
    let form = InputRequest::Elicit(ElicitParams::Form(ElicitFormParams {
        message: "m".into(),
        requested_schema: JsonObject::new().into(),
        extra: JsonObject::new(),
    }));
    let url = InputRequest::Elicit(ElicitParams::Url(ElicitUrlParams {
        message: "m".into(),
        url: "https://x".into(),
        extra: JsonObject::new(),
    }));
    let sample: InputRequest = serde_json::from_value(
        json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}),
    )
    .expect("sample");
    let none = ClientCapabilities::none();
    let form_only = ClientCapabilities::none().with_elicitation();
    let all = ClientCapabilities::all();
    assert!(!form.allowed_by(&none) && form.allowed_by(&form_only) && form.allowed_by(&all));
    assert!(!url.allowed_by(&form_only) && url.allowed_by(&all));
    assert!(!sample.allowed_by(&form_only) && sample.allowed_by(&all));
}
