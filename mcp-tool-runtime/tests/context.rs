//! ToolContext, request builders and the elicitation-subset schema check.

use mcp_tool_runtime::manual::Reentrant;
use std::collections::{BTreeMap, HashSet};

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::protocol::{
    ClientCapabilities, CreateMessageResult, ElicitParams, ElicitResult, InputRequest,
    InputResponse, ListRootsResult, Root,
};
use mcp_tool_runtime::testing::{HostError, ScriptedHost};
use mcp_tool_runtime::{
    ToolError,
    manual::{output_result, parse_args},
};
use mcp_tool_runtime::{
    manual::{input_schema, output_schema},
    requests::{Ask, Elicit, Elicitation, Roots, Sample, UrlElicit, elicitation_schema},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
struct Contact {
    /// Full name
    name: String,
    #[schemars(email)]
    email: Option<String>,
    age: Option<u8>,
    subscribe: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Hash, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq, Hash, Clone, Copy)]
enum Size {
    /// Small size
    S,
    /// Large size
    L,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Prefs {
    color: Color,
    size: Option<Size>,
    extras: Vec<Color>,
    tags: HashSet<Color>,
    #[schemars(length(min = 2, max = 10))]
    nick: String,
    score: f64,
    #[schemars(range(min = 1, max = 5))]
    stars: i32,
}

#[test]
fn elicitation_schema_of_flat_struct_is_normalised() {
    let s = Value::Object(elicitation_schema::<Contact>().expect("in the subset"));
    assert_eq!(
        s,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Full name"},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 255},
                "subscribe": {"type": "boolean"}
            },
            "required": ["name", "subscribe"]
        })
    );
    let text = s.to_string();
    assert!(!text.contains("$schema") && !text.contains("$ref") && !text.contains("null"));
}

#[test]
fn elicitation_schema_handles_enums_and_multi_select() {
    let s = elicitation_schema::<Prefs>().expect("in the subset");
    let p = &s["properties"];
    assert_eq!(
        p["color"],
        json!({"type": "string", "enum": ["red", "green"]})
    );
    assert_eq!(
        p["size"]["oneOf"],
        json!([{"const": "S", "title": "Small size"}, {"const": "L", "title": "Large size"}])
    );
    assert_eq!(p["size"]["type"], "string");
    assert_eq!(
        p["extras"],
        json!({"type": "array", "items": {"type": "string", "enum": ["red", "green"]}})
    );
    assert_eq!(p["tags"]["type"], "array");
    assert_eq!(
        p["nick"],
        json!({"type": "string", "minLength": 2, "maxLength": 10})
    );
    assert_eq!(p["score"], json!({"type": "number"}));
    assert_eq!(
        p["stars"],
        json!({"type": "integer", "minimum": 1, "maximum": 5})
    );
    let required: Vec<&str> = s["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!required.contains(&"size"));
    assert!(required.contains(&"color") && required.contains(&"stars"));
}

#[test]
fn elicitation_schema_rejects_what_is_not_flat_and_primitive() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        contact: Contact,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Numbers {
        list: Vec<u32>,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Map {
        m: BTreeMap<String, String>,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Data {
        A(String),
        B { x: u8 },
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct WithData {
        d: Data,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tuple(u8, u8);

    assert_eq!(
        elicitation_schema::<Nested>().map_err(|e| e.path),
        Err("contact".into())
    );
    assert_eq!(
        elicitation_schema::<Numbers>().map_err(|e| e.path),
        Err("list".into())
    );
    assert_eq!(
        elicitation_schema::<Map>().map_err(|e| e.path),
        Err("m".into())
    );
    assert_eq!(
        elicitation_schema::<WithData>().map_err(|e| e.path),
        Err("d".into())
    );
    assert!(elicitation_schema::<String>().is_err());
    assert!(elicitation_schema::<Vec<Contact>>().is_err());
    assert!(elicitation_schema::<Tuple>().is_err());
    let e = elicitation_schema::<Nested>().expect_err("nested");
    assert!(e.to_string().contains("contact"), "{e}");
}

#[test]
fn input_and_output_schemas() {
    let s = input_schema::<Contact>();
    assert_eq!(s["type"], "object");
    assert!(!s.contains_key("$schema"));
    assert_eq!(input_schema::<()>()["type"], "object");
    assert!(output_schema::<Contact>().is_some());
    assert!(output_schema::<String>().is_none());
    assert!(output_schema::<Vec<u8>>().is_none());
}

#[test]
fn builders_produce_wire_requests() {
    let r = Ask::<Contact>::new("Who?").into_request().expect("request");
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["method"], "elicitation/create");
    assert_eq!(v["params"]["mode"], "form");
    assert_eq!(v["params"]["requestedSchema"]["type"], "object");

    let r = UrlElicit::new("Log in", "https://example.com/x")
        .into_request()
        .expect("request");
    assert_eq!(
        serde_json::to_value(&r).expect("json"),
        json!({"method": "elicitation/create", "params": {"mode": "url", "message": "Log in", "url": "https://example.com/x"}})
    );

    let r = Sample::user("Hi")
        .then_assistant("Hello")
        .then_user("Summarize")
        .system("Be brief")
        .max_tokens(50)
        .temperature(0.2)
        .stop_sequence("END")
        .model_hint("claude")
        .cost_priority(0.3)
        .speed_priority(0.5)
        .intelligence_priority(0.9)
        .include_context(mcp_tool_runtime::protocol::IncludeContext::None)
        .into_request()
        .expect("request");
    assert_eq!(
        serde_json::to_value(&r).expect("json"),
        json!({"method": "sampling/createMessage", "params": {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": {"type": "text", "text": "Hello"}},
                {"role": "user", "content": {"type": "text", "text": "Summarize"}}
            ],
            "systemPrompt": "Be brief",
            "maxTokens": 50,
            "temperature": 0.2,
            "stopSequences": ["END"],
            "includeContext": "none",
            "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.3,
                                 "speedPriority": 0.5, "intelligencePriority": 0.9}
        }})
    );
    assert_eq!(
        serde_json::to_value(Roots::new().into_request().expect("request")).expect("json"),
        json!({"method": "roots/list", "params": {}})
    );
    // A type outside the subset: an internal error at request time too.
    assert!(matches!(
        Ask::<Vec<String>>::new("x").into_request(),
        Err(ToolError::Internal(_))
    ));
}

fn accept(v: Value) -> InputResponse {
    match v {
        Value::Object(m) => ElicitResult::accept(m).into(),
        _ => panic!("object expected"),
    }
}

// --- low-level API ---------------------------------------------------------------------

#[test]
fn sample_json_parsing() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Out {
        a: u32,
    }
    let answer =
        |t: &str| mcp_tool_runtime::SampleAnswer::new("k", CreateMessageResult::text("m", t));
    assert_eq!(answer("{\"a\": 1}").json::<Out>(), Ok(Out { a: 1 }));
    assert_eq!(
        answer("```json\n{\"a\": 2}\n```").json::<Out>(),
        Ok(Out { a: 2 })
    );
    assert_eq!(
        answer("```\n{\"a\": 3}\n```\n").json::<Out>(),
        Ok(Out { a: 3 })
    );
    assert!(matches!(
        answer("Sure! {\"a\": 1}").json::<Out>(),
        Err(ToolError::InvalidInput { key, .. }) if key == "k"
    ));
    assert!(matches!(
        answer("{\"a\": -1}").json::<Out>(),
        Err(ToolError::InvalidInput { .. })
    ));
    // No text at all.
    let image = CreateMessageResult {
        content: mcp_tool_runtime::protocol::OneOrMany::One(
            mcp_tool_runtime::protocol::SamplingContent::Image(
                mcp_tool_runtime::protocol::BinaryContent {
                    data: "AA==".into(),
                    mime_type: "image/png".into(),
                    annotations: None,
                    meta: None,
                },
            ),
        ),
        ..CreateMessageResult::text("m", "")
    };
    assert!(matches!(
        mcp_tool_runtime::SampleAnswer::new("k", image).text(),
        Err(ToolError::InvalidInput { .. })
    ));
}

/// `v` as the JSON text a tool receives.
fn raw(v: serde_json::Value) -> Box<serde_json::value::RawValue> {
    serde_json::value::to_raw_value(&v).expect("serializes")
}

#[test]
fn parse_args_names_the_field() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct A {
        city: String,
        days: Vec<u8>,
    }
    let e = parse_args::<A>(&raw(json!({"city": 1, "days": []}))).expect_err("bad");
    assert!(
        matches!(&e, ToolError::InvalidArguments { field, .. } if field == "city"),
        "{e:?}"
    );
    let e = parse_args::<A>(&raw(json!({"city": "x", "days": [1, 300]}))).expect_err("bad");
    assert!(
        matches!(&e, ToolError::InvalidArguments { field, .. } if field == "days[1]"),
        "{e:?}"
    );
    let e = parse_args::<A>(&raw(json!({"days": []}))).expect_err("missing");
    assert!(
        matches!(&e, ToolError::InvalidArguments { field, .. } if field == "city"),
        "{e:?}"
    );
    assert!(parse_args::<A>(&raw(json!({"city": "x", "days": [1]}))).is_ok());
}

#[test]
fn output_result_shapes() {
    let r = output_result(&"plain").expect("ok");
    assert_eq!(r.text_content(), "plain");
    assert!(r.structured_content.is_none());
    let r = output_result(&json!({"a": 1})).expect("ok");
    assert_eq!(r.structured_content, Some(json!({"a": 1}).into()));
    assert_eq!(r.text_content(), "{\"a\":1}");
    let r = output_result(&42).expect("ok");
    assert_eq!(r.text_content(), "42");
    // a string that JSON escapes is its text, unescaped; null is no content; an array its JSON
    let r = output_result(&"quote \" and \\ and \n").expect("ok");
    assert_eq!(r.text_content(), "quote \" and \\ and \n");
    let r = output_result(&()).expect("ok");
    assert!(r.content.is_empty() && r.structured_content.is_none());
    let r = output_result(&[1, 2]).expect("ok");
    assert_eq!(r.text_content(), "[1,2]");
    assert!(r.structured_content.is_none());
    // a typed value: serialized once, its members in the order the type writes them
    #[derive(serde::Serialize)]
    struct Booked<'a> {
        status: &'a str,
        at: u32,
    }
    let r = output_result(&Booked {
        status: "booked",
        at: 19,
    })
    .expect("ok");
    assert_eq!(r.text_content(), r#"{"status":"booked","at":19}"#);
    let structured = r.structured_content.expect("structured");
    assert_eq!(structured.json(), r#"{"status":"booked","at":19}"#);
    assert_eq!(structured, json!({"at": 19, "status": "booked"}));
    // what cannot be JSON is an internal error, not a panic
    let tuple_keys: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
    assert!(matches!(
        output_result(&tuple_keys),
        Err(ToolError::Internal(_))
    ));
}

// --- linear API: MRTR mode and direct mode ------------------------------------------------

#[tokio::test]
async fn awaiting_a_builder_without_host_is_internal_error() {
    let mut cx = mcp_tool_runtime::testing::context(ClientCapabilities::all());
    let r = cx.ask::<Contact>("Who?").await;
    assert!(
        matches!(r, Err(ToolError::Internal(m)) if m.contains("suspension point reached outside #[mcp_tool]'s transform"))
    );
    assert!(matches!(cx.checkpoint().await, Err(ToolError::Internal(_))));
    assert!(matches!(
        cx.round((Roots::new(), Sample::user("x"))).await,
        Err(ToolError::Internal(_))
    ));
    assert!(matches!(cx.roots().await, Err(ToolError::Internal(_))));
}

/// The kind of linear tool body the macro splits; here it runs for real against a host.
async fn onboarding(cx: &mut ToolContext) -> Result<String, ToolError> {
    let contact = cx.ask::<Contact>("Who are you?").key("contact").await?;
    let plan = cx
        .sample(Sample::user(format!("Plan for {}", contact.name)).max_tokens(100))
        .await?
        .text()?;
    let roots = cx.roots().await?;
    cx.checkpoint().await?;
    let (color, outcome) = cx
        .round((
            Elicit::<Prefs2>::new("Color?").key("color"),
            UrlElicit::new("Pay", "https://pay.example.com"),
        ))
        .await?;
    let color = match color {
        Elicitation::Accept(p) => format!("{:?}", p.color),
        Elicitation::Decline | Elicitation::Cancel => "none".into(),
    };
    Ok(format!(
        "{} / {} / {} roots / {} / {:?}",
        contact.name,
        plan,
        roots.len(),
        color,
        outcome
    ))
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Prefs2 {
    color: Color,
}

#[tokio::test]
async fn direct_mode_runs_the_linear_function_against_a_host() {
    let host = ScriptedHost::new(ClientCapabilities::all())
        .answer(
            "contact",
            accept(json!({"name": "Ada", "subscribe": false})),
        )
        .answer("sample_1", CreateMessageResult::text("m", "step 1"))
        .answer(
            "roots_2",
            ListRootsResult {
                roots: vec![Root::new("file:///a", None), Root::new("file:///b", None)],
                extra: Default::default(),
            },
        )
        .answer("color", accept(json!({"color": "green"})))
        .answer("url_3", ElicitResult::accept_url());
    let mut cx = mcp_tool_runtime::testing::direct(host);
    assert!(cx.is_direct());
    assert!(cx.client_capabilities().sampling.is_some());
    let out = onboarding(&mut cx).await.expect("runs");
    assert_eq!(out, "Ada / step 1 / 2 roots / Green / Accept");
}

#[tokio::test]
async fn direct_mode_decline_and_host_failure() {
    let host =
        ScriptedHost::new(ClientCapabilities::all()).answer("contact", ElicitResult::decline());
    let mut cx = mcp_tool_runtime::testing::direct(host);
    assert_eq!(
        onboarding(&mut cx).await,
        Err(ToolError::Declined {
            key: "contact".into()
        })
    );
    // A host that cannot answer: internal error naming the key.
    let host = ScriptedHost::from_fn(ClientCapabilities::all(), |key, _req| {
        Err(HostError::NoAnswer {
            key: key.to_owned(),
        })
    });
    let mut cx = mcp_tool_runtime::testing::direct(host);
    assert!(matches!(
        cx.roots().key("rk").await,
        Err(ToolError::Internal(m)) if m.contains("rk")
    ));
}

#[tokio::test]
async fn direct_mode_host_sees_the_requests() {
    let host = ScriptedHost::from_fn(ClientCapabilities::all(), |_key, req| match req {
        InputRequest::Elicit(ElicitParams::Form(p)) => {
            assert_eq!(p.requested_schema["type"], "object");
            Ok(accept(json!({"name": "Zed", "subscribe": true})))
        }
        InputRequest::Sample(p) => {
            assert_eq!(p.max_tokens, 100);
            Ok(CreateMessageResult::text("m", "```json\n{\"color\": \"red\"}\n```").into())
        }
        _ => Err(HostError::Failed("unexpected".into())),
    });
    let mut cx = mcp_tool_runtime::testing::direct(host);
    let c = cx.ask::<Contact>("Who?").await.expect("contact");
    assert_eq!(c.name, "Zed");
    let p: Prefs2 = cx
        .sample(Sample::user("color?").max_tokens(100))
        .await
        .expect("sample")
        .json()
        .expect("json");
    assert_eq!(p.color, Color::Red);
}

/// The hidden default keys `#[mcp_tool]` adds in direct mode: set only where the builder has
/// no key, so a call-site or builder key wins; rounds default each element.
#[tokio::test]
async fn direct_mode_default_keys_never_override_a_key() {
    let host = ScriptedHost::new(ClientCapabilities::all())
        .answer("derived", CreateMessageResult::text("m", "d"))
        .answer("own", CreateMessageResult::text("m", "o"))
        .answer("call_site", CreateMessageResult::text("m", "c"))
        .answer("a", accept(json!({"color": "red"})))
        .answer("mine", CreateMessageResult::text("m", "b"));
    let mut cx = mcp_tool_runtime::testing::direct(host);
    let d = cx
        .sample(Sample::user("x"))
        .__mcp_default_key("derived")
        .await
        .unwrap();
    let o = cx
        .sample(Sample::user("x").key("own"))
        .__mcp_default_key("derived")
        .await
        .unwrap();
    let c = cx
        .sample(Sample::user("x"))
        .key("call_site")
        .__mcp_default_key("derived")
        .await
        .unwrap();
    let (a, b) = cx
        .round((Ask::<Prefs2>::new("a?"), Sample::user("b?").key("mine")))
        .__mcp_default_keys(&["a", "b"])
        .await
        .unwrap();
    assert_eq!(
        [d.text().unwrap(), o.text().unwrap(), c.text().unwrap()],
        ["d", "o", "c"]
    );
    assert!(matches!(a.color, Color::Red));
    assert_eq!(b.text().unwrap(), "b");
}
