//! Property tests: whatever arrives, `Server::handle_str` never panics (not even a panic
//! the server would contain), answers at most one message, answers every request that
//! has a usable id with that id, and never answers a notification. Also fuzz targets for
//! mutated real messages and for `inputResponses` parsing. Budget: `MCP_FUZZ_CASES`
//! (scripts/fuzz.sh), else the small defaults below.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::protocol::Reply;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation};
use mcp_tool_runtime::requests::{Ask, Roots, Sample};
use mcp_tool_runtime::server::NotificationSink;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Principal, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

mod fuzz_support;
mod support;

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts every panic in the process (contained or not), then defers to the default hook.
fn count_panics() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            default(info);
        }));
    });
}

#[derive(Deserialize, JsonSchema)]
struct Contact {
    name: String,
    age: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
    n: Option<u8>,
}

struct Echo;

impl Tool for Echo {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("echo").input_schema_of::<EchoArgs>()
    }
    fn step<'a>(
        &'a self,
        _cx: &'a mut ToolContext,
        args: &'a RawValue,
        _state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let a: EchoArgs = mcp_tool_runtime::manual::parse_args(args)?;
            Ok(Step::Complete(CallToolResult::text(
                a.text.repeat(usize::from(a.n.unwrap_or(1).min(3))),
            )))
        })
    }
}

/// Asks for a form, a sample and the roots in one round, then uses all three.
struct Everything;

impl Tool for Everything {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("everything")
            .needs(Capability::Elicitation)
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
                cx.request("contact", Ask::<Contact>::new("Who?").into_request()?)?;
                cx.request(
                    "model",
                    Sample::user("Say hi").max_tokens(10).into_request()?,
                )?;
                cx.request("roots", Roots::new().into_request()?)?;
                return Step::suspend(&json!(1));
            }
            let c: Contact = cx.take_ask("contact")?;
            let said = cx.take_sampling("model")?.text()?;
            let roots = cx.take_roots("roots")?;
            Ok(Step::Complete(CallToolResult::text(format!(
                "{} {:?} {said} {}",
                c.name,
                c.age,
                roots.len()
            ))))
        })
    }
}

fn server() -> Server {
    Server::builder(Implementation::new("fuzz", "0"))
        .sealer(support::sealer("k", 1))
        .tool(Echo)
        .tool(Everything)
        .build()
        .expect("server builds")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("2.0"),
            Just("tools/call"),
            Just("accept"),
            Just("decline"),
            Just("cancel"),
            Just("text"),
            Just("user"),
            Just("assistant"),
            Just("file:///x"),
            Just("mts1.k.AAAA"),
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,6}",
                    Just("action".to_owned()),
                    Just("content".to_owned()),
                    Just("role".to_owned()),
                    Just("model".to_owned()),
                    Just("type".to_owned()),
                    Just("text".to_owned()),
                    Just("roots".to_owned()),
                    Just("uri".to_owned()),
                    Just("name".to_owned()),
                    Just("_meta".to_owned()),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn good_meta() -> Value {
    support::meta(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
}

fn arb_meta() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => Just(good_meta()),
        1 => arb_json(),
        1 => (arb_json(), arb_json()).prop_map(|(v, c)| json!({
            "io.modelcontextprotocol/protocolVersion": v,
            "io.modelcontextprotocol/clientCapabilities": c,
        })),
    ]
}

/// Something shaped like a JSON-RPC message, with every part sometimes wrong.
fn arb_envelope() -> impl Strategy<Value = Value> {
    let method = prop_oneof![
        Just(json!("tools/call")),
        Just(json!("tools/list")),
        Just(json!("server/discover")),
        Just(json!("initialize")),
        Just(json!("ping")),
        Just(json!("notifications/initialized")),
        arb_json(),
    ];
    let id = prop_oneof![
        Just(None),
        Just(Some(json!(1))),
        Just(Some(json!("x"))),
        Just(Some(json!(u64::MAX))),
        Just(Some(json!(1.5))),
        Just(Some(Value::Null)),
        arb_json().prop_map(Some),
    ];
    let jsonrpc = prop_oneof![
        4 => Just(Some(json!("2.0"))),
        1 => Just(None),
        1 => arb_json().prop_map(Some),
    ];
    let params = prop_oneof![
        1 => Just(None),
        1 => arb_json().prop_map(Some),
        6 => (
            arb_meta(),
            prop_oneof![Just(json!("echo")), Just(json!("everything")), arb_json()],
            prop_oneof![Just(json!({"text": "hi"})), arb_json()],
            prop::option::of(arb_json()),
            prop::option::of(prop_oneof![".{0,40}".prop_map(Value::String), arb_json()]),
            prop::option::of(arb_json()),
        )
            .prop_map(|(meta, name, args, responses, state, cursor)| {
                let mut p = Map::new();
                p.insert("_meta".into(), meta);
                p.insert("name".into(), name);
                p.insert("arguments".into(), args);
                if let Some(r) = responses {
                    p.insert("inputResponses".into(), r);
                }
                if let Some(s) = state {
                    p.insert("requestState".into(), s);
                }
                if let Some(c) = cursor {
                    p.insert("cursor".into(), c);
                }
                Some(Value::Object(p))
            }),
    ];
    (jsonrpc, id, method, params).prop_map(|(jsonrpc, id, method, params)| {
        let mut m = Map::new();
        if let Some(j) = jsonrpc {
            m.insert("jsonrpc".into(), j);
        }
        if let Some(i) = id {
            m.insert("id".into(), i);
        }
        m.insert("method".into(), method);
        if let Some(p) = params {
            m.insert("params".into(), p);
        }
        Value::Object(m)
    })
}

/// An answer-shaped value for a retry: sometimes right, often subtly wrong.
fn arb_answer() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"action": "accept", "content": {"name": "Ann", "age": 3}})),
        Just(json!({"action": "accept", "content": {"name": 5}})),
        Just(json!({"action": "accept"})),
        Just(json!({"action": "decline"})),
        Just(json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})),
        Just(
            json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}], "model": "m"})
        ),
        Just(
            json!({"role": "assistant", "content": {"type": "image", "data": "", "mimeType": "x"}, "model": "m"})
        ),
        Just(json!({"roots": [{"uri": "file:///a"}]})),
        Just(json!({"roots": [{"uri": 1}]})),
        arb_json(),
    ]
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

/// Checks one raw message against the server; returns the response (if any) as JSON.
fn check(rt: &tokio::runtime::Runtime, s: &Server, raw: &str) -> Option<Value> {
    let before = PANICS.load(Ordering::SeqCst);
    let resp = rt
        .block_on(s.handle_text(raw, &Principal::named("p"), NotificationSink::none()))
        .map(Reply::into_response);
    assert_eq!(
        PANICS.load(Ordering::SeqCst),
        before,
        "handling panicked: {raw}"
    );
    let parsed: Option<Value> = serde_json::from_str(raw).ok();
    let resp = resp.map(|r| r.to_value());
    if let Some(Value::Object(obj)) = &parsed {
        let id = obj.get("id");
        let has_method = obj.contains_key("method");
        if id.is_none() && has_method {
            assert!(
                resp.is_none(),
                "a notification was answered: {raw} -> {resp:?}"
            );
        }
        if let Some(id @ (Value::String(_) | Value::Number(_))) = id
            && let Some(r) = &resp
            && (id.is_string() || id.as_i64().is_some())
        {
            assert_eq!(r.get("id"), Some(id), "{raw} -> {r}");
        }
        if id.is_some_and(|i| i.is_string() || i.as_i64().is_some()) {
            assert!(resp.is_some(), "a request went unanswered: {raw}");
        }
    }
    if let Some(r) = &resp {
        assert_eq!(r["jsonrpc"], "2.0");
        assert!(
            r.get("result").is_some() != r.get("error").is_some(),
            "exactly one of result/error: {r}"
        );
        if let Some(res) = r.get("result") {
            assert!(
                res["resultType"].is_string(),
                "every result has resultType: {r}"
            );
            assert!(
                res["_meta"]["io.modelcontextprotocol/serverInfo"].is_object(),
                "every result has serverInfo: {r}"
            );
        }
        if let Some(code) = r["error"]["code"].as_i64() {
            // None of these tools has a bug or a round limit to hit: an internal error
            // here would be the server mishandling input.
            assert_ne!(code, -32603, "{raw} -> {r}");
        }
    }
    resp
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_support::cases(400), failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(raw in ".{0,200}") {
        count_panics();
        let rt = rt();
        let s = server();
        check(&rt, &s, &raw);
    }

    #[test]
    fn arbitrary_json_never_panics(v in arb_json()) {
        count_panics();
        let rt = rt();
        let s = server();
        check(&rt, &s, &v.to_string());
    }

    #[test]
    fn arbitrary_envelopes_never_panic(v in arb_envelope()) {
        count_panics();
        let rt = rt();
        let s = server();
        check(&rt, &s, &v.to_string());
    }

    #[test]
    fn arbitrary_answers_to_a_real_state_never_panic(
        contact in arb_answer(),
        model in arb_answer(),
        roots in arb_answer(),
        drop_one in 0usize..4,
        extra in prop::option::of(arb_json()),
    ) {
        count_panics();
        let rt = rt();
        let s = server();
        let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "everything", "arguments": {}, "_meta": good_meta()}});
        let r = check(&rt, &s, &first.to_string()).expect("response");
        let state = r["result"]["requestState"].clone();
        prop_assert!(state.is_string());
        let mut responses = Map::new();
        for (i, (k, v)) in [("contact", contact), ("model", model), ("roots", roots)]
            .into_iter()
            .enumerate()
        {
            if i != drop_one {
                responses.insert(k.into(), v);
            }
        }
        if let Some(e) = extra {
            responses.insert("unrelated".into(), e);
        }
        let retry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "everything", "arguments": {}, "_meta": good_meta(),
                       "inputResponses": responses, "requestState": state}});
        let r = check(&rt, &s, &retry.to_string()).expect("response");
        if drop_one < 3 {
            // A missing answer: asked again, same state.
            prop_assert_eq!(&r["result"]["resultType"], "input_required");
            prop_assert_eq!(&r["result"]["requestState"], &state);
        }
    }
}

/// The typed request path reads a message from its text as a tree holds it: a member sent
/// twice is the last one, keys and strings with escapes are their text, whitespace and
/// member order do not matter, unknown members are ignored. Each text's answer is its
/// tree's, and the tree's says what the text means.
#[test]
fn text_is_read_as_its_tree() {
    count_panics();
    let rt = rt();
    let s = server();
    let meta = good_meta().to_string();
    let cases = [
        // `name` twice: the last, `echo`; `text` twice in the arguments: the last
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"nope","_meta":{meta},"arguments":{{"text":"a","text":"b"}},"name":"echo"}}}}"#
        ),
        // escapes in keys, the method and the name; whitespace everywhere
        format!(
            "{{ \"jsonrpc\" : \"2.0\" , \"\\u0069d\" : 2 , \"method\" : \"tools\\/call\" ,\n \"params\" : {{ \"n\\u0061me\" : \"\\u0065cho\" , \"_meta\" : {meta} , \"arguments\" : {{ \"text\" : \"\\u00e9\" , \"n\" : 2 }} }} }}"
        ),
        // unknown members anywhere, params members in any order
        format!(
            r#"{{"x":[1,{{"y":null}}],"params":{{"arguments":{{"text":"t"}},"z":{{}},"_meta":{meta},"name":"echo"}},"method":"tools/call","id":"s","jsonrpc":"2.0"}}"#
        ),
        // `id` twice (the last, a string), `params` null: -32602 (no `_meta`)
        r#"{"jsonrpc":"2.0","id":1,"id":"two","method":"tools/list","params":null}"#.to_owned(),
        // `method` twice: the last, a removed one
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","method":"initialize","params":{{"_meta":{meta}}}}}"#
        ),
    ];
    let expected = [
        json!({"result": "b"}),
        json!({"result": "éé"}),
        json!({"result": "t"}),
        json!({"error": -32602}),
        json!({"error": -32601}),
    ];
    for (text, want) in cases.iter().zip(expected) {
        let by_text = check(&rt, &s, text).expect("a response");
        let tree: Value = serde_json::from_str(text).expect("JSON");
        let by_tree = rt
            .block_on(s.handle(tree.clone(), &Principal::named("p")))
            .expect("a response")
            .to_value();
        assert_eq!(by_text, by_tree, "{text}");
        assert_eq!(by_text["id"], tree["id"], "{text}");
        match (&want["result"], &want["error"]) {
            (Value::String(t), _) => {
                assert_eq!(by_text["result"]["content"][0]["text"], *t, "{by_text}")
            }
            (_, code) => assert_eq!(by_text["error"]["code"], *code, "{by_text}"),
        }
    }
}

#[test]
fn deeply_nested_input_is_refused_without_overflowing_the_stack() {
    count_panics();
    let rt = rt();
    let s = server();
    // Past serde_json's recursion limit: an error, not a crash. A member the server does not
    // read is skipped without a tree (here the request lacks `_meta`: -32602); one it builds
    // a tree of is refused: the arguments (-32602), the params of a method that reads them
    // as a tree (-32700).
    let deep_value = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"x\":{deep_value}}}}}"
    );
    let r = check(&rt, &s, &deep).expect("response");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let meta = good_meta().to_string();
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"everything\",\"_meta\":{meta},\"arguments\":{{\"x\":{deep_value}}}}}}}"
    );
    let r = check(&rt, &s, &deep).expect("response");
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("arguments"),
        "{r}"
    );
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{{\"name\":\"p\",\"_meta\":{meta},\"arguments\":{{\"x\":{deep_value}}}}}}}"
    );
    let r = check(&rt, &s, &deep).expect("response");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // Not JSON at all: a parse error.
    let r = check(&rt, &s, &deep[..deep.len() - 1]).expect("response");
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // Just under the limit, in the arguments (digested for the seal) and the answers.
    let nest = |depth: usize| -> Value {
        let mut v = json!(1);
        for i in 0..depth {
            v = if i % 2 == 0 {
                json!([v])
            } else {
                json!({ "k": v })
            };
        }
        v
    };
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "everything", "arguments": {"deep": nest(118)}, "_meta": good_meta()}});
    let r = check(&rt, &s, &msg.to_string()).expect("response");
    let state = r["result"]["requestState"].clone();
    assert!(state.is_string(), "{r}");
    let msg = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "everything", "arguments": {"deep": nest(118)}, "_meta": good_meta(),
            "requestState": state,
            "inputResponses": {"contact": {"action": "accept", "content": {"name": nest(110)}},
                               "model": nest(110), "roots": {"roots": nest(110)}}}});
    let r = check(&rt, &s, &msg.to_string()).expect("response");
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

// ---------------------------------------------------------------------------------------
// Mutated real messages, and inputResponses parsing
// ---------------------------------------------------------------------------------------

/// One structural change to a JSON value.
#[derive(Debug, Clone)]
enum JsonMutation {
    /// Replace the value at the path with another.
    Replace(Vec<usize>, Value),
    /// Remove the member or element at the path.
    Remove(Vec<usize>),
    /// Add a member to the object at the path.
    Add(Vec<usize>, String, Value),
}

fn json_mutation() -> impl Strategy<Value = JsonMutation> {
    let path = prop::collection::vec(any::<usize>(), 0..6);
    prop_oneof![
        (path.clone(), arb_json()).prop_map(|(p, v)| JsonMutation::Replace(p, v)),
        path.clone().prop_map(JsonMutation::Remove),
        (
            path,
            prop_oneof![
                Just("inputResponses".to_owned()),
                Just("requestState".to_owned()),
                Just("_meta".to_owned()),
                Just("id".to_owned()),
                Just("arguments".to_owned()),
                ".{0,8}"
            ],
            arb_json()
        )
            .prop_map(|(p, k, v)| JsonMutation::Add(p, k, v)),
    ]
}

/// The child of `v` chosen by `i` (modulo its size), if it has children.
fn child(v: &mut Value, i: usize) -> Option<&mut Value> {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let n = m.len();
            m.values_mut().nth(i % n)
        }
        Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            a.get_mut(i % n)
        }
        _ => None,
    }
}

fn apply(v: &mut Value, m: &JsonMutation) {
    let (path, op) = match m {
        JsonMutation::Replace(p, _) | JsonMutation::Remove(p) | JsonMutation::Add(p, _, _) => {
            (p.as_slice(), m)
        }
    };
    // Walk down as far as the path and the value allow; the last step is the target.
    let mut here = v;
    let mut rest = path;
    while rest.len() > 1 {
        let i = rest[0];
        rest = &rest[1..];
        if child(here, i).is_none() {
            break;
        }
        here = child(here, i).expect("checked");
    }
    match op {
        JsonMutation::Replace(_, new) => match rest.first() {
            Some(&i) if child(here, i).is_some() => {
                *child(here, i).expect("checked") = new.clone();
            }
            _ => *here = new.clone(),
        },
        JsonMutation::Remove(_) => {
            let i = rest.first().copied().unwrap_or(0);
            match here {
                Value::Object(m) if !m.is_empty() => {
                    let k = m.keys().nth(i % m.len()).cloned().expect("non-empty");
                    m.remove(&k);
                }
                Value::Array(a) if !a.is_empty() => {
                    let n = a.len();
                    a.remove(i % n);
                }
                _ => {}
            }
        }
        JsonMutation::Add(_, k, new) => {
            if let Value::Object(m) = here {
                m.insert(k.clone(), new.clone());
            }
        }
    }
}

/// Real messages of every kind, the retry carrying a real state and real answers.
fn templates(rt: &tokio::runtime::Runtime, s: &Server) -> Vec<Value> {
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "everything", "arguments": {}, "_meta": good_meta()}});
    let r = check(rt, s, &first.to_string()).expect("response");
    let state = r["result"]["requestState"].clone();
    vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": good_meta()}}),
        json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {"_meta": good_meta()}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi", "n": 2}, "_meta": good_meta()}}),
        first,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "everything", "arguments": {}, "_meta": good_meta(),
                "requestState": state,
                "inputResponses": {
                    "contact": {"action": "accept", "content": {"name": "Ann", "age": 3}},
                    "model": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
                    "roots": {"roots": [{"uri": "file:///a"}]}}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    ]
}

/// Real messages with one to three structural changes, or a few bytes of their text
/// changed: never a panic, never an internal error, the id echoed.
#[test]
fn fuzz_handle_str_mutated_real_messages() {
    count_panics();
    let rt = rt();
    let s = server();
    let templates = templates(&rt, &s);
    let strategy = (
        0..templates.len(),
        prop::collection::vec(json_mutation(), 1..4),
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    );
    fuzz_support::fuzz(
        "handle_str_mutated",
        300,
        strategy,
        |(which, muts, bytes)| {
            let mut msg = templates[which].clone();
            for m in &muts {
                apply(&mut msg, m);
            }
            let mut raw = msg.to_string().into_bytes();
            for (pos, b) in &bytes {
                let i = pos % raw.len().max(1);
                if let Some(x) = raw.get_mut(i) {
                    *x = *b;
                }
            }
            let raw = String::from_utf8_lossy(&raw).into_owned();
            check(&rt, &s, &raw);
            Ok(())
        },
    );
}

/// `inputResponses` entries of every shape against each kind of request: parsing returns
/// a value or an error, and a parsed answer serializes back to something that parses the
/// same way.
#[test]
fn fuzz_input_response_parsing() {
    use mcp_tool_runtime::protocol::{InputRequest, InputResponse};
    let requests: Vec<InputRequest> = vec![
        Ask::<Contact>::new("Who?").into_request().expect("ask"),
        Sample::user("hi")
            .max_tokens(5)
            .into_request()
            .expect("sample"),
        Roots::new().into_request().expect("roots"),
    ];
    fuzz_support::fuzz(
        "input_responses",
        3000,
        prop_oneof![arb_answer(), arb_json()],
        |answer| {
            for req in &requests {
                if let Ok(parsed) = req.parse_response(answer.clone()) {
                    let again = serde_json::to_value(&parsed).expect("serializes");
                    prop_assert!(req.parse_response(again).is_ok());
                }
            }
            let _ = serde_json::from_value::<InputResponse>(answer);
            Ok(())
        },
    );
}

/// The arguments reach the code as text, and the state is bound to their canonical form read
/// from that text: a legitimate retry whose client writes the same arguments in another key
/// order, with other whitespace, or with a key twice (the last one counting) completes; the
/// same state with arguments that differ in a value, or whose repeated key ends on another
/// value, is refused (-32602), and nothing runs.
#[test]
fn the_state_is_bound_to_the_arguments_read_from_their_text() {
    count_panics();
    let rt = rt();
    let s = server();
    let meta = good_meta().to_string();
    let call = |id: u32, args: &str, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"everything","arguments":{args},"_meta":{meta}{extra}}}}}"#
        )
    };
    // round 1: keys out of order at two depths
    let first =
        check(&rt, &s, &call(1, r#"{"b":[1,{"y":2,"x":1}],"a":"x"}"#, "")).expect("a response");
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].to_string();
    let answers = json!({
        "contact": {"action": "accept", "content": {"name": "Ada", "age": 36}},
        "model": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "roots": {"roots": [{"uri": "file:///tmp"}]},
    });
    let retry = |id: u32, args: &str| {
        let extra = format!(r#","inputResponses":{answers},"requestState":{state}"#);
        check(&rt, &s, &call(id, args, &extra)).expect("a response")
    };
    for same in [
        r#"{"a":"x","b":[1,{"x":1,"y":2}]}"#,
        r#" { "b" : [ 1 , { "x" : 1 , "y" : 2 } ] , "a" : "x" } "#,
        r#"{"a":"z","b":[1,{"x":1,"y":2}],"a":"x"}"#,
    ] {
        let r = retry(2, same);
        assert_eq!(r["result"]["resultType"], "complete", "{same}: {r}");
        assert_eq!(
            r["result"]["content"][0]["text"], "Ada Some(36) hi 1",
            "{same}: {r}"
        );
    }
    for other in [
        r#"{"a":"y","b":[1,{"x":1,"y":2}]}"#,
        r#"{"a":"x","b":[1,{"x":1,"y":2}],"a":"z"}"#,
        r#"{"a":"x","b":[{"x":1,"y":2},1]}"#,
    ] {
        let r = retry(3, other);
        assert_eq!(r["error"]["code"], -32602, "{other}: {r}");
    }
}
