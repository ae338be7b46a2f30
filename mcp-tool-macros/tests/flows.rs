//! Sub-flows (`#[mcp_flow]`) and application state (`State<T>`), through the server (every
//! round sealed and opened) and in direct mode (the functions as written), which must agree
//! on results and on the keys the client is asked.

mod common;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation};
use mcp_tool_runtime::testing::ScriptedHost;
use mcp_tool_runtime::{
    RegistrationError, Sample, Server, State, Tool, ToolContext, ToolError, mcp_flow, mcp_tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct YesNo {
    /// Yes?
    ok: bool,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    /// Your user name.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Items {
    items: Vec<String>,
}

/// Application state: a store of deleted items and a counter of side effects.
#[derive(Default)]
struct Store {
    deleted: Mutex<Vec<String>>,
    effects: AtomicUsize,
}

/// Asks to confirm `what`. Its parameter is kept across its suspension point.
#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(format!("{what}?")).await?;
    Ok(answer.ok && !what.is_empty())
}

/// A login, then a confirmation: a flow calling a flow.
#[mcp_flow]
async fn login_and_confirm(cx: &mut ToolContext, store: State<Store>) -> Result<String, ToolError> {
    let login: Login = cx.ask("Who are you?").await?;
    store.effects.fetch_add(1, Ordering::SeqCst);
    let sure = confirm(cx, format!("Continue as {}", login.name)).await?;
    Ok(if sure { login.name } else { "nobody".into() })
}

/// A flow called twice in one tool, with state used after a suspension point.
#[mcp_tool]
async fn delete_two(
    cx: &mut ToolContext,
    args: Items,
    store: State<Store>,
) -> Result<String, ToolError> {
    store.effects.fetch_add(1, Ordering::SeqCst);
    let first = confirm(cx, format!("Delete {}", args.items[0])).await?;
    let second = confirm(cx, format!("Delete {}", args.items[1])).await?;
    let mut deleted = store.deleted.lock().unwrap();
    if first {
        deleted.push(args.items[0].clone());
    }
    if second {
        deleted.push(args.items[1].clone());
    }
    Ok(format!("{first} {second}"))
}

/// A flow inside a loop over a borrow of the arguments, with a computed call-site name.
#[mcp_tool]
async fn delete_each(
    cx: &mut ToolContext,
    args: Items,
    store: State<Store>,
) -> Result<String, ToolError> {
    let mut kept = Vec::new();
    for item in &args.items {
        let ok = confirm(cx, format!("Delete {item}"))
            .key(format!("del_{item}"))
            .await?;
        if ok {
            store.deleted.lock().unwrap().push(item.clone());
        } else {
            kept.push(item.clone());
        }
    }
    Ok(format!("kept {kept:?}"))
}

/// Nested flows: `who/…` then `who/sure/…`.
#[mcp_tool]
async fn nested_flows(cx: &mut ToolContext, store: State<Store>) -> Result<String, ToolError> {
    let who = login_and_confirm(cx, store.clone()).await?;
    Ok(format!("hello {who}"))
}

fn yes() -> ElicitResult {
    accept(json!({"ok": true}))
}

fn no() -> ElicitResult {
    accept(json!({"ok": false}))
}

fn server_with(
    store: Arc<Store>,
    tools: Vec<Box<dyn FnOnce(mcp_tool_runtime::ServerBuilder) -> mcp_tool_runtime::ServerBuilder>>,
) -> Server {
    let mut b = Server::builder(Implementation::new("flows", "0")).state(store);
    for t in tools {
        b = t(b);
    }
    b.build().expect("server builds")
}

#[tokio::test]
async fn a_flow_called_twice_namespaces_its_keys_per_call_site() {
    let store = Arc::new(Store::default());
    let s = server_with(store.clone(), vec![tool(delete_two::tool())]);
    let host = host()
        .answer("first/answer", yes())
        .answer("second/answer", no());
    let (out, host) = call(s, host, "delete_two", json!({"items": ["a", "b"]})).await;
    assert_eq!(out.text(), "true false");
    assert_eq!(rounds(&out), [vec!["first/answer"], vec!["second/answer"]]);
    assert_eq!(host.asked_keys(), ["first/answer", "second/answer"]);
    assert_eq!(*store.deleted.lock().unwrap(), ["a"]);
    // the tool's own code before the first call ran once, over three rounds
    assert_eq!(store.effects.load(Ordering::SeqCst), 1);
    // the question (made from the flow's parameter, kept in its state) reached the client
    let q = &host.asked()[1].1;
    assert_eq!(
        serde_json::to_value(q).unwrap()["params"]["message"],
        "Delete b?"
    );

    // direct mode: the same keys, the same result
    let store2 = Arc::new(Store::default());
    let mut cx = mcp_tool_runtime::testing::direct(
        ScriptedHost::new(ClientCapabilities::all())
            .answer("first/answer", yes())
            .answer("second/answer", no()),
    );
    let direct = delete_two(
        &mut cx,
        Items {
            items: vec!["a".into(), "b".into()],
        },
        State::from_arc(store2.clone()),
    )
    .await
    .unwrap();
    assert_eq!(direct, "true false");
    assert_eq!(*store2.deleted.lock().unwrap(), ["a"]);
}

#[tokio::test]
async fn a_flow_inside_a_loop_over_borrowed_arguments() {
    let store = Arc::new(Store::default());
    let s = server_with(store.clone(), vec![tool(delete_each::tool())]);
    let host = host()
        .answer("del_x/answer", yes())
        .answer("del_y/answer", no())
        .answer("del_z/answer", yes());
    let (out, host) = call(s, host, "delete_each", json!({"items": ["x", "y", "z"]})).await;
    assert_eq!(out.text(), "kept [\"y\"]");
    assert_eq!(
        host.asked_keys(),
        ["del_x/answer", "del_y/answer", "del_z/answer"]
    );
    assert_eq!(out.rounds, 4);
    assert_eq!(*store.deleted.lock().unwrap(), ["x", "z"]);
    // the state keeps the loop's position, not the items (borrowed from the arguments)
    for e in &out.transcript {
        if let Some(st) = e.message["result"]["requestState"].as_str() {
            assert!(st.len() < 1200, "{}", st.len());
        }
    }
}

#[tokio::test]
async fn a_flow_calling_a_flow_nests_sites_and_state() {
    let store = Arc::new(Store::default());
    let s = server_with(store.clone(), vec![tool(nested_flows::tool())]);
    let host = host()
        .answer("who/login", accept(json!({"name": "ada"})))
        .answer("who/sure/answer", yes());
    let (out, host) = call(s, host, "nested_flows", json!({})).await;
    assert_eq!(out.text(), "hello ada");
    assert_eq!(host.asked_keys(), ["who/login", "who/sure/answer"]);
    // the outer flow's code before its inner call ran once
    assert_eq!(store.effects.load(Ordering::SeqCst), 1);

    let mut cx = mcp_tool_runtime::testing::ContextBuilder::direct(
        ScriptedHost::new(ClientCapabilities::all())
            .answer("who/login", accept(json!({"name": "ada"})))
            .answer("who/sure/answer", no()),
    )
    .state(Store::default())
    .build();
    let store = cx.state::<Store>().unwrap();
    assert_eq!(nested_flows(&mut cx, store).await.unwrap(), "hello nobody");
}

#[tokio::test]
async fn flows_fold_into_the_tools_metadata() {
    let info = nested_flows::tool().info();
    // the tool itself asks nothing: elicitation comes from its flows
    assert!(info.capabilities.elicitation);
    assert!(!info.capabilities.sampling);
    // two suspension points in the flows, none in the tool
    assert_eq!(info.max_rounds, 2);
    let state = nested_flows::tool().required_state();
    assert_eq!(state.len(), 1);
    assert!(state[0].type_name.ends_with("Store"));
    // a loop with a flow: the number of rounds is open
    assert_eq!(delete_each::tool().info().max_rounds, 100);
    assert_eq!(delete_two::tool().info().max_rounds, 2);
    // the layout covers the flows called
    assert_ne!(
        delete_two::tool().info().layout,
        other_flow_two::tool().info().layout
    );
}

/// Like `confirm`, another body: a caller's layout changes with it.
#[mcp_flow]
async fn confirm_v2(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(format!("Really {what}?")).await?;
    Ok(answer.ok)
}

/// `delete_two`'s body, calling `confirm_v2`.
#[mcp_tool]
async fn other_flow_two(
    cx: &mut ToolContext,
    args: Items,
    store: State<Store>,
) -> Result<String, ToolError> {
    store.effects.fetch_add(1, Ordering::SeqCst);
    let first = confirm_v2(cx, format!("Delete {}", args.items[0])).await?;
    let second = confirm_v2(cx, format!("Delete {}", args.items[1])).await?;
    Ok(format!("{first} {second}"))
}

/// Sampling only inside a flow.
#[mcp_flow]
async fn rate(cx: &mut ToolContext, text: &str) -> Result<String, ToolError> {
    let verdict = cx
        .sample(Sample::user(format!("Rate: {text}")))
        .await?
        .text()?;
    Ok(verdict)
}

#[mcp_tool]
async fn rated(cx: &mut ToolContext, store: State<Store>) -> Result<String, ToolError> {
    store.effects.fetch_add(1, Ordering::SeqCst);
    let v = rate(cx, "hello").await?;
    Ok(v)
}

#[tokio::test]
async fn a_flows_capability_is_checked_before_any_code_runs() {
    let store = Arc::new(Store::default());
    let s = server_with(store.clone(), vec![tool(rated::tool())]);
    let no_sampling = ScriptedHost::new(ClientCapabilities::none().with_elicitation());
    let mut d = mcp_tool_client::Driver::new(
        mcp_tool_client::InProcessTransport::new(s.clone()),
        no_sampling,
    );
    let err = d.call_tool("rated", json!({})).await.unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32021), "{err}");
    assert_eq!(store.effects.load(Ordering::SeqCst), 0);
    // with sampling: the flow's key is `v/verdict`, and a `&str` parameter is fine because
    // it is not used after the suspension point
    let host = host().answer("v/verdict", said("great"));
    let (out, _) = call(s, host, "rated", json!({})).await;
    assert_eq!(out.text(), "great");
}

#[test]
fn a_missing_state_type_fails_at_build() {
    let err = Server::builder(Implementation::new("flows", "0"))
        .tool(nested_flows::tool())
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, RegistrationError::MissingState { tool, type_name }
            if tool == "nested_flows" && type_name.ends_with("Store")),
        "{err}"
    );
    assert!(err.to_string().contains(".state("), "{err}");
}

// ---- the transform's gaps -----------------------------------------------------------------

/// Deferred initialisation across a suspension point, both branches.
#[mcp_tool]
async fn deferred(cx: &mut ToolContext, args: Items) -> Result<String, ToolError> {
    let verdict;
    let label: String;
    if args.items.len() > 1 {
        verdict = cx.ask::<YesNo>("Sure?").await?.ok;
        label = "asked".into();
    } else {
        verdict = false;
        label = "skipped".into();
    }
    let more: YesNo = cx.ask("More?").await?;
    Ok(format!("{verdict} {label} {}", more.ok))
}

#[tokio::test]
async fn deferred_initialisation_works_on_both_paths() {
    let s = server(vec![tool(deferred::tool())]);
    let (out, h) = call(
        s.clone(),
        host().answer("verdict", yes()).answer("more", no()),
        "deferred",
        json!({"items": ["a", "b"]}),
    )
    .await;
    assert_eq!(out.text(), "true asked false");
    assert_eq!(h.asked_keys(), ["verdict", "more"]);
    let (out, h) = call(
        s,
        host().answer("more", yes()),
        "deferred",
        json!({"items": ["a"]}),
    )
    .await;
    assert_eq!(out.text(), "false skipped true");
    assert_eq!(h.asked_keys(), ["more"]);
}

/// Borrows of the arguments held across suspension points.
#[mcp_tool]
async fn borrows(cx: &mut ToolContext, args: Items) -> Result<String, ToolError> {
    let first = &args.items[0];
    let mut out = Vec::new();
    for (i, item) in args.items.iter().enumerate() {
        let ok: YesNo = cx
            .ask(format!("Keep {item}?"))
            .key(format!("keep_{i}"))
            .await?;
        if ok.ok {
            out.push(format!("{i}:{item}"));
        }
    }
    let last: YesNo = cx.ask("Last?").await?;
    Ok(format!("{first} {out:?} {}", last.ok))
}

#[tokio::test]
async fn borrowing_and_iterating_the_arguments_across_rounds() {
    let s = server(vec![tool(borrows::tool())]);
    let host = host()
        .answer("keep_0", yes())
        .answer("keep_1", no())
        .answer("keep_2", yes())
        .answer("last", yes());
    let (out, _) = call(s, host, "borrows", json!({"items": ["p", "q", "r"]})).await;
    assert_eq!(out.text(), "p [\"0:p\", \"2:r\"] true");
}

/// Output and error types by trait: an alias of `String`, and `anyhow::Result`.
type Text = String;
type Outcome<T> = Result<T, ToolError>;

#[mcp_tool]
async fn aliased(cx: &mut ToolContext) -> Outcome<Text> {
    let who: Login = cx.ask("Who?").await?;
    Ok(format!("hi {}", who.name))
}

#[mcp_tool]
async fn with_anyhow(cx: &mut ToolContext, args: Items) -> anyhow::Result<String> {
    let n: usize = args.items[0].parse()?;
    let ok: YesNo = cx.ask("Go?").await?;
    anyhow::ensure!(ok.ok, "stopped at {n}");
    Ok(format!("went {n}"))
}

#[tokio::test]
async fn output_and_error_types_by_trait() {
    assert!(aliased::tool().info().output_schema.is_none());
    assert!(with_anyhow::tool().info().output_schema.is_none());
    let s = server(vec![tool(aliased::tool()), tool(with_anyhow::tool())]);
    let (out, _) = call(
        s.clone(),
        host().answer("who", accept(json!({"name": "b"}))),
        "aliased",
        json!({}),
    )
    .await;
    assert_eq!(out.text(), "hi b");
    assert!(out.structured().is_none());
    let (out, _) = call(
        s.clone(),
        host().answer("ok", yes()),
        "with_anyhow",
        json!({"items": ["4"]}),
    )
    .await;
    assert_eq!(out.text(), "went 4");
    // an anyhow error is an isError result with its message
    let (out, _) = call(
        s.clone(),
        host().answer("ok", no()),
        "with_anyhow",
        json!({"items": ["4"]}),
    )
    .await;
    assert!(out.is_error());
    assert_eq!(out.text(), "stopped at 4");
    // a ToolError carried by anyhow keeps its meaning: a decline stays polite
    let decline = ElicitResult::decline();
    let (out, _) = call(
        s.clone(),
        host().answer("ok", decline),
        "with_anyhow",
        json!({"items": ["4"]}),
    )
    .await;
    assert!(out.is_error());
    assert!(out.text().contains("declined"), "{}", out.text());
    // ... and an invalid answer stays a protocol error
    let mut d = mcp_tool_client::Driver::new(
        mcp_tool_client::InProcessTransport::new(s),
        host().answer("ok", accept(json!({"ok": "not a bool"}))),
    );
    let err = d
        .call_tool("with_anyhow", json!({"items": ["4"]}))
        .await
        .unwrap_err();
    assert_eq!(err.rpc_code(), Some(-32602), "{err}");
}

#[test]
fn the_generated_struct_takes_the_functions_visibility() {
    // `private_tool` is private to this module: its struct is too (used here only)
    let info = private_tool::tool().info();
    assert_eq!(info.name, "private_tool");
    assert_eq!(public::visible::tool().info().name, "visible");
}

#[mcp_tool]
async fn private_tool(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok(String::new())
}

mod public {
    use super::*;

    #[mcp_tool]
    pub(crate) async fn visible(_cx: &mut ToolContext) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

/// Values used after a flow call are kept; what the host sees in direct mode follows the
/// same keys as the server, whatever the answers.
#[tokio::test]
async fn flows_agree_in_both_modes_for_every_answer() {
    for (a, b) in [(true, true), (true, false), (false, true), (false, false)] {
        let answers = |h: ScriptedHost| {
            h.answer("first/answer", if a { yes() } else { no() })
                .answer("second/answer", if b { yes() } else { no() })
        };
        let store = Arc::new(Store::default());
        let s = server_with(store.clone(), vec![tool(delete_two::tool())]);
        let (out, host) = call(
            s,
            answers(host()),
            "delete_two",
            json!({"items": ["a", "b"]}),
        )
        .await;
        let direct_store = Arc::new(Store::default());
        let mut cx = mcp_tool_runtime::testing::direct(answers(ScriptedHost::new(
            ClientCapabilities::all(),
        )));
        let direct = delete_two(
            &mut cx,
            Items {
                items: vec!["a".into(), "b".into()],
            },
            State::from_arc(direct_store.clone()),
        )
        .await
        .unwrap();
        assert_eq!(Value::String(direct), Value::String(out.text()));
        assert_eq!(host.asked_keys(), ["first/answer", "second/answer"]);
        assert_eq!(
            *store.deleted.lock().unwrap(),
            *direct_store.deleted.lock().unwrap()
        );
    }
}
