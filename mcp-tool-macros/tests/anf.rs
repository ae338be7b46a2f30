//! Suspension points wherever Rust lets `.await` stand: inside expressions, without a
//! binding, in conditions, in value-producing blocks, after effects in the same expression.
//! Each tool is run three ways by `differential!` (direct, round by round, `Tool::direct`):
//! the same result, the same keys, one round per request, and the same effects, each once
//! and in Rust's evaluation order (logged with `effect`).

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_tool_runtime::protocol::{ElicitResult, InputResponse};
use mcp_tool_runtime::{Elicitation, Sample, ToolContext, ToolError, mcp_flow, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Num {
    n: i64,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct YesNo {
    ok: bool,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    k: i64,
}

fn combine(a: i64, b: i64) -> i64 {
    a * 10 + b
}

fn concat(a: String, b: String) -> String {
    a + &b
}

fn greet(name: String) -> String {
    format!("hello {name}")
}

fn n(v: i64) -> InputResponse {
    ans(json!({ "n": v }))
}

fn yes(ok: bool) -> InputResponse {
    ans(json!({ "ok": ok }))
}

fn login(name: &str) -> InputResponse {
    ans(json!({ "name": name }))
}

/// Two answers passed straight into a call, an effect before them, one between and one
/// after, all in one statement.
#[mcp_tool]
async fn two_in_a_call(cx: &mut ToolContext, args: Args) -> Result<i64, ToolError> {
    const T: &str = "two_in_a_call";
    Ok(effect(
        T,
        "after",
        combine(
            effect(T, "first", cx.ask::<Num>("a").await?.n) + effect(T, "before", args.k),
            effect(T, "second", cx.ask::<Num>("b").await?.n),
        ),
    ))
}

#[tokio::test]
async fn two_answers_in_one_call() {
    let d = differential!(two_in_a_call, json!({"k": 1}), vec![n(3), n(4)]);
    assert_eq!(d.value, json!(44));
    assert_eq!(d.keys, ["ask_1", "ask_2"]);
    assert_eq!(d.effects, ["first", "before", "second", "after"]);
}

/// What runs before a suspension point in its expression runs once, in the round before,
/// and its value travels.
#[mcp_tool]
async fn effect_before(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    const T: &str = "effect_before";
    let label = format!("{}:{}", effect(T, "prefix", "p"), args.k);
    let joined = concat(
        effect(T, "log_and_get", label.clone()),
        effect(T, "answer", cx.ask::<Login>("who?").await?.name),
    );
    Ok(joined)
}

#[tokio::test]
async fn effects_before_run_once_in_order() {
    let d = differential!(effect_before, json!({"k": 7}), vec![login("ada")]);
    assert_eq!(d.value, json!("p:7ada"));
    assert_eq!(d.effects, ["prefix", "log_and_get", "answer"]);
    assert_eq!(d.keys, ["joined"]);
}

/// Conditions: an `if` whose condition suspends, with no binding; an `else if` whose
/// condition is an `&&` of two answers; a `match` on an answer; an answer inside `return Ok(…)`.
#[mcp_tool]
async fn conditions(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    if args.k == 0 {
        return Ok("zero".into());
    } else if cx.ask::<YesNo>("go?").await?.ok && cx.ask::<YesNo>("really?").await?.ok {
        return Ok(concat(
            "went ".into(),
            cx.ask::<Num>("how far?").await?.n.to_string(),
        ));
    }
    match cx.ask::<Num>("pick").await?.n {
        1 => Ok("one".into()),
        other => Ok(format!("picked {other}")),
    }
}

#[tokio::test]
async fn conditions_suspend() {
    let d = differential!(
        conditions,
        json!({"k": 1}),
        vec![yes(true), yes(true), n(9)]
    );
    assert_eq!(d.value, json!("went 9"));
    assert_eq!(d.keys, ["ask_1", "ask_2", "ask_3"]);
    let d = differential!(
        conditions,
        json!({"k": 1}),
        vec![yes(true), yes(false), n(1)]
    );
    assert_eq!(d.value, json!("one"));
    assert_eq!(d.keys, ["ask_1", "ask_2", "ask_4"]);
    let d = differential!(conditions, json!({"k": 1}), vec![yes(false), n(5)]);
    assert_eq!(d.value, json!("picked 5"));
    let d = differential!(conditions, json!({"k": 0}), vec![]);
    assert_eq!(d.value, json!("zero"));
    assert!(d.rounds.is_empty());
}

/// A value-producing `match` on an elicitation inside `Ok(…)`, whose arm asks again.
#[mcp_tool]
async fn match_in_ok(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    Ok(match cx.elicit::<Login>("who?").await? {
        Elicitation::Accept(l) if l.name == "ask" => {
            concat("asked ".into(), cx.ask::<Login>("really who?").await?.name)
        }
        Elicitation::Accept(l) => l.name,
        _ => "nobody".into(),
    })
}

#[tokio::test]
async fn a_value_match_asks_again_in_an_arm() {
    let d = differential!(
        match_in_ok,
        json!({"k": 0}),
        vec![login("ask"), login("bob")]
    );
    assert_eq!(d.value, json!("asked bob"));
    assert_eq!(d.keys, ["elicit_1", "ask_1"]);
    let d = differential!(match_in_ok, json!({"k": 0}), vec![login("eve")]);
    assert_eq!(d.value, json!("eve"));
    let d = differential!(
        match_in_ok,
        json!({"k": 0}),
        vec![ElicitResult::decline().into()]
    );
    assert_eq!(d.value, json!("nobody"));
}

/// A `while` whose condition is an `&&` with an answer on the right (asked only when the
/// left holds), and `||` the other way round.
#[mcp_tool]
async fn while_and(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    const T: &str = "while_and";
    let mut i = 0;
    while effect(T, "test", i < args.k) && cx.ask::<YesNo>("more?").await?.ok {
        i += 1;
    }
    let skip = i == 0 || cx.ask::<YesNo>("skip?").await?.ok;
    Ok(format!("{i} {skip}"))
}

#[tokio::test]
async fn lazy_operands_ask_only_when_evaluated() {
    // stops on the answer
    let d = differential!(
        while_and,
        json!({"k": 5}),
        vec![yes(true), yes(false), yes(true)]
    );
    assert_eq!(d.value, json!("1 true"));
    assert_eq!(d.effects, ["test", "test"]);
    assert_eq!(d.keys, ["ask_1", "ask_1", "ask_2"]);
    // stops on the left: the right is not asked again
    let d = differential!(
        while_and,
        json!({"k": 2}),
        vec![yes(true), yes(true), yes(false)]
    );
    assert_eq!(d.value, json!("2 false"));
    assert_eq!(d.effects, ["test", "test", "test"]);
    // neither right side is asked
    let d = differential!(while_and, json!({"k": 0}), vec![]);
    assert_eq!(d.value, json!("0 true"));
    assert!(d.keys.is_empty());
}

/// `while let` on an answer, a loop whose `break` gives the value assigned to a variable, and a
/// loop at the end of the function whose `break` gives the result.
#[mcp_tool]
async fn loops(cx: &mut ToolContext, _args: Args) -> Result<i64, ToolError> {
    const T: &str = "loops";
    let mut seen = 0;
    while let Some(v) = Some(cx.ask::<Num>("next?").await?.n).filter(|v| *v > 0) {
        seen += v;
    }
    let mut x = seen;
    effect(T, &format!("x was {x}"), ());
    x = loop {
        let v = cx.ask::<Num>("even?").await?.n;
        if v % 2 == 0 {
            break v;
        }
    };
    loop {
        if cx.ask::<YesNo>("done?").await?.ok {
            break Ok(seen * 100 + x);
        }
    }
}

#[tokio::test]
async fn loops_give_values() {
    let d = differential!(
        loops,
        json!({"k": 0}),
        vec![n(2), n(3), n(0), n(5), n(4), yes(false), yes(true)]
    );
    assert_eq!(d.value, json!(504));
    assert_eq!(d.effects, ["x was 5"]);
    assert_eq!(
        d.keys,
        ["ask_1", "ask_1", "ask_1", "v", "v", "ask_3", "ask_3"]
    );
}

/// A suspension in the `else` block of `let … else`; a statement that is only a suspension
/// point (no binding, no key); a name declared again inside a branch that suspends while the
/// outer one is used afterwards.
#[mcp_tool]
async fn let_else_and_shadow(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let name = "outer".to_string();
    let Some(k) = Some(args.k).filter(|k| *k > 0) else {
        let asked: Login = cx.ask("who instead?").await?;
        return Ok(asked.name);
    };
    cx.ask::<YesNo>("acknowledge").await?;
    let mut out = String::new();
    if k > 1 {
        let name = cx.ask::<Login>("inner name?").await?.name;
        let n = cx.ask::<Num>(format!("count for {name}?")).await?.n;
        out = format!("{name} {n} ");
    }
    Ok(format!("{out}{name} {k}"))
}

#[tokio::test]
async fn let_else_and_shadowing() {
    let d = differential!(let_else_and_shadow, json!({"k": 0}), vec![login("zed")]);
    assert_eq!(d.value, json!("zed"));
    assert_eq!(d.keys, ["asked"]);
    let d = differential!(let_else_and_shadow, json!({"k": 1}), vec![yes(true)]);
    assert_eq!(d.value, json!("outer 1"));
    assert_eq!(d.keys, ["ask_2"]);
    let d = differential!(
        let_else_and_shadow,
        json!({"k": 2}),
        vec![yes(true), login("inner"), n(3)]
    );
    assert_eq!(d.value, json!("inner 3 outer 2"));
    assert_eq!(d.keys, ["ask_2", "name", "n"]);
}

/// A sampling request in a tuple, after an element with an effect; an answer transformed
/// by a call, then added to another.
#[mcp_tool]
async fn nested_requests(cx: &mut ToolContext, _args: Args) -> Result<Value, ToolError> {
    const T: &str = "nested_requests";
    let pair = (
        effect(T, "left", 1),
        cx.sample(Sample::user("rate")).await?.text()?,
    );
    let deep =
        greet(cx.ask::<Login>("name?").await?.name).len() as i64 + cx.ask::<Num>("more?").await?.n;
    Ok(json!({ "pair": [pair.0, pair.1], "deep": deep }))
}

#[tokio::test]
async fn requests_nest() {
    let d = differential!(
        nested_requests,
        json!({"k": 0}),
        vec![said("fine").into(), login("ada"), n(2)]
    );
    assert_eq!(d.value, json!({"pair": [1, "fine"], "deep": 11}));
    assert_eq!(d.keys, ["pair", "ask_1", "deep"]);
    assert_eq!(d.effects, ["left"]);
}

/// Names declared again by patterns (`if let`, a match arm, `for`) inside suspending
/// branches and loops, the outer variable used after each, and a `continue` out of a block
/// that declared one again.
#[mcp_tool]
async fn shadow_patterns(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let v = args.k;
    let mut out = Vec::new();
    if let Some(v) = Some(v * 2).filter(|v| *v > 0) {
        out.push(v + cx.ask::<Num>("add?").await?.n);
    }
    match Some(v + 1) {
        Some(v) if v > 1 => out.push(v * cx.ask::<Num>("times?").await?.n),
        _ => out.push(-v),
    }
    for v in 0..2 {
        if v == 0 {
            let v = 100;
            out.push(v);
            continue;
        }
        out.push(v + cx.ask::<Num>("more?").await?.n);
    }
    out.push(v);
    Ok(format!("{out:?}"))
}

#[tokio::test]
async fn patterns_that_shadow_keep_the_outer_variable() {
    let d = differential!(shadow_patterns, json!({"k": 3}), vec![n(1), n(2), n(3)]);
    assert_eq!(d.value, json!("[7, 8, 100, 4, 3]"));
    assert_eq!(d.keys, ["ask_1", "ask_2", "ask_3"]);
    let d = differential!(shadow_patterns, json!({"k": 0}), vec![n(5)]);
    assert_eq!(d.value, json!("[0, 100, 6, 0]"));
}

/// Asks to confirm `what`.
#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(what).await?;
    Ok(answer.ok)
}

fn both(a: bool, b: bool) -> String {
    format!("{a}+{b}")
}

/// Flow calls nested like requests: in an `&&` condition, and two passed straight into a
/// call.
#[mcp_tool]
async fn nested_flows(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    if confirm(cx, "start?".into()).await? && confirm(cx, "really?".into()).await? {
        return Ok(both(
            confirm(cx, "a?".into()).await?,
            confirm(cx, "b?".into()).await?,
        ));
    }
    Ok("stopped".into())
}

#[tokio::test]
async fn flows_nest_like_requests() {
    let d = differential!(
        nested_flows,
        json!({"k": 0}),
        vec![yes(true), yes(true), yes(false), yes(true)]
    );
    assert_eq!(d.value, json!("false+true"));
    assert_eq!(
        d.keys,
        [
            "confirm/answer",
            "confirm_2/answer",
            "confirm_3/answer",
            "confirm_4/answer"
        ]
    );
    let d = differential!(nested_flows, json!({"k": 0}), vec![yes(false)]);
    assert_eq!(d.value, json!("stopped"));
    assert_eq!(d.keys, ["confirm/answer"]);
}

/// A method called on one answer with another as its argument; an `if let` on an answer; a
/// labelled `while` on an answer left by a labelled `break`; a closure run before an answer
/// in the same expression.
#[mcp_tool]
async fn receivers_and_labels(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let order = cx
        .ask::<Login>("a?")
        .await?
        .name
        .cmp(&cx.ask::<Login>("b?").await?.name) as i8;
    let mut count = 0;
    if let Some(n) = Some(cx.ask::<Num>("n?").await?.n).filter(|n| *n > 0) {
        count += n;
    }
    'outer: while cx.ask::<YesNo>("again?").await?.ok {
        for i in 0..3 {
            if i == args.k {
                break 'outer;
            }
            count += 1;
        }
    }
    let total = (0..count).map(|i| i * 2).sum::<i64>() + cx.ask::<Num>("last?").await?.n;
    Ok(format!("{order} {count} {total}"))
}

#[tokio::test]
async fn receivers_labels_and_closures() {
    let d = differential!(
        receivers_and_labels,
        json!({"k": 2}),
        vec![login("a"), login("b"), n(2), yes(true), n(1)]
    );
    assert_eq!(d.value, json!("-1 4 13"));
    assert_eq!(d.keys, ["ask_1", "order", "ask_3", "ask_4", "total"]);
}
