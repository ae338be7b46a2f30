//! Flows in every control-flow position, and flows with control flow of their own: early
//! returns, checkpoints, several requests in one round, recursion, errors, journaled restarts.
//! Each case runs through the server (every round sealed and opened) and in direct mode.

mod common;

use common::*;
use mcp_tool_runtime::protocol::{ClientCapabilities, ElicitResult, Implementation};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::testing::ScriptedHost;
use mcp_tool_runtime::{
    Principal, Sample, Server, Tool, ToolContext, ToolError, mcp_flow, mcp_tool, requests::Ask,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Num {
    /// A number.
    n: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    k: i64,
}

/// Asks for a positive number, again and again (recursion through itself) until one comes;
/// gives up after `tries`.
#[mcp_flow]
async fn positive(cx: &mut ToolContext, tries: u32) -> Result<i64, ToolError> {
    let got: Num = cx
        .ask(format!("A positive number ({tries} tries left)?"))
        .await?;
    if got.n > 0 {
        return Ok(got.n);
    }
    if tries <= 1 {
        return Err(ToolError::failed("no positive number"));
    }
    let again = positive(cx, tries - 1).await?;
    Ok(again)
}

/// Two requests in one round, then a checkpoint, then a sampling round.
#[mcp_flow]
async fn pair_then_rate(cx: &mut ToolContext) -> Result<String, ToolError> {
    let (a, b) = cx
        .round((Ask::<Num>::new("a?"), Ask::<Num>::new("b?")))
        .await?;
    cx.checkpoint().await?;
    let verdict = cx
        .sample(Sample::user(format!("rate {}", a.n + b.n)))
        .await?
        .text()?;
    Ok(format!("{} {verdict}", a.n + b.n))
}

/// Flows in a `let` initializer's branches, a `match` arm, a loop with a computed site, and
/// a `match` on a flow's result (no `?`).
#[mcp_tool]
async fn positions(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let first = if args.k > 0 {
        positive(cx, 2).await?
    } else {
        0
    };
    let second = match args.k {
        1 => pair_then_rate(cx).await?,
        _ => String::from("none"),
    };
    let mut sum = 0;
    for i in 0..args.k {
        sum += positive(cx, 1).key(format!("loop{i}")).await?;
    }
    let last = match positive(cx, 1).await {
        Ok(n) => n,
        Err(ToolError::Failed(_)) => -1,
        Err(e) => return Err(e),
    };
    Ok(format!("{first} {second} {sum} {last}"))
}

fn num(n: i64) -> ElicitResult {
    accept(json!({ "n": n }))
}

/// The sites: `positive` (a call in a branch of a `let` initializer has no binding of its
/// own: the flow's name), its recursive call `again`, `pair_then_rate` (the same), the loop's computed `loop0`,
/// and `positive_2` (the name again, in source order).
fn script(h: ScriptedHost) -> ScriptedHost {
    h.answer("positive/got", num(-1))
        .answer("positive/again/got", num(4))
        .answer("pair_then_rate/a", num(2))
        .answer("pair_then_rate/b", num(3))
        .answer("pair_then_rate/verdict", said("fine"))
        .answer("loop0/got", num(10))
        .answer("positive_2/got", num(0))
}

#[tokio::test]
async fn flows_in_every_position_agree_in_both_modes() {
    let s = server(vec![tool(positions::tool())]);
    let (out, host) = call(s, script(host()), "positions", json!({"k": 1})).await;
    assert_eq!(out.text(), "4 5 fine 10 -1");
    assert_eq!(
        host.asked_keys(),
        [
            "positive/got",
            "positive/again/got",
            "pair_then_rate/a",
            "pair_then_rate/b",
            "pair_then_rate/verdict",
            "loop0/got",
            "positive_2/got"
        ]
    );
    // the checkpoint inside the flow is a round of its own, with no request
    let keys = rounds(&out);
    assert!(keys.iter().any(Vec::is_empty), "{keys:?}");
    assert_eq!(keys.len(), 7);

    let mut cx =
        mcp_tool_runtime::testing::direct(script(ScriptedHost::new(ClientCapabilities::all())));
    let direct = positions(&mut cx, Args { k: 1 }).await.unwrap();
    assert_eq!(direct, out.text());
}

#[tokio::test]
async fn a_recursive_flow_counts_as_possibly_looping() {
    let info = positions::tool().info();
    assert_eq!(info.max_rounds, 100);
    assert!(info.capabilities.elicitation && info.capabilities.sampling);
    assert!(!info.capabilities.roots);
}

#[tokio::test]
async fn a_flows_error_reaches_the_caller_as_its_own() {
    // `positive` gives up (a tool error): `positions` maps it to -1 in its last call, but the
    // first call propagates it with `?`
    let s = server(vec![tool(positions::tool())]);
    let h = host()
        .answer("positive/got", num(-1))
        .answer("positive/again/got", num(-2));
    let (out, _) = call(s, h, "positions", json!({"k": 1})).await;
    assert!(out.is_error());
    assert_eq!(out.text(), "no positive number");
    // a declined question inside a flow is the polite result of the whole tool
    let s = server(vec![tool(positions::tool())]);
    let h = host().answer("positive/got", ElicitResult::decline());
    let (out, _) = call(s, h, "positions", json!({"k": 1})).await;
    assert!(out.is_error());
    assert!(out.text().contains("declined"), "{}", out.text());
}

/// Two builds of a journaled tool calling one flow: a restart mid-flow answers from the
/// journal (the flow's keys are the same in both builds), so nothing is asked twice.
#[mcp_tool(name = "signup", journal, max_rounds = 8)]
async fn signup_a(cx: &mut ToolContext) -> Result<String, ToolError> {
    let n = positive(cx, 1).key("age").await?;
    let m = positive(cx, 1).key("shoe").await?;
    Ok(format!("a {n} {m}"))
}

#[mcp_tool(name = "signup", journal, max_rounds = 8)]
async fn signup_b(cx: &mut ToolContext) -> Result<String, ToolError> {
    let greeting = String::from("b");
    let n = positive(cx, 1).key("age").await?;
    let m = positive(cx, 1).key("shoe").await?;
    Ok(format!("{greeting} {n} {m}"))
}

fn build(t: impl Tool) -> Server {
    Server::builder(Implementation::new("journal-flows", "0"))
        .sealer(Sealer::new(
            Keyring::new("k", vec![9u8; 32]).unwrap(),
            SealConfig::default(),
        ))
        .tool(t)
        .build()
        .unwrap()
}

async fn round(s: &Server, responses: Value, state: Option<&str>) -> Value {
    let mut params = json!({
        "name": "signup",
        "arguments": {},
        "inputResponses": responses,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
    });
    if let Some(st) = state {
        params["requestState"] = json!(st);
    }
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let r = s.handle(msg, &Principal::anonymous()).await.unwrap();
    r.result_value().expect("a result").clone()
}

#[tokio::test]
async fn a_journaled_restart_inside_flows_asks_nothing_twice() {
    let (a, b) = (build(signup_a::tool()), build(signup_b::tool()));
    assert_ne!(
        signup_a::tool().info().layout,
        signup_b::tool().info().layout
    );
    let r = round(&a, json!({}), None).await;
    assert_eq!(
        r["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["age/got"]
    );
    let st = r["requestState"].as_str().unwrap().to_owned();
    // build A asks `shoe/got` next; B takes that round, restarts from the top, answers
    // `age/got` from the journal and asks `shoe/got`
    let r = round(&b, json!({"age/got": num(30)}), Some(&st)).await;
    assert_eq!(
        r["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["shoe/got"]
    );
    let st = r["requestState"].as_str().unwrap().to_owned();
    let r = round(&b, json!({"shoe/got": num(44)}), Some(&st)).await;
    assert_eq!(r["content"][0]["text"], "b 30 44", "{r}");
}
