//! Macro-written tools driven through the server in-process, one per control-flow shape.
//! Each asserts the rounds' `inputRequests`, that kept values survive the round trip, and
//! that no statement before a suspension point runs again (side effects are counted).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use common::*;
use mcp_tool_runtime::{Sample, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    user: String,
    city: String,
    verdict: String,
    roots: usize,
}

static STRAIGHT: AtomicUsize = AtomicUsize::new(0);

async fn fetch(city: &str) -> Result<String, ToolError> {
    Ok(format!("sunny in {city}"))
}

/// Weather after a login.
#[mcp_tool(max_rounds = 3)]
async fn straight(cx: &mut ToolContext, args: CityArgs) -> Result<Forecast, ToolError> {
    STRAIGHT.fetch_add(1, SeqCst);
    let greeting = format!("hello {}", args.city);
    let github_login: Login = cx.ask("Your GitHub username?").await?;
    STRAIGHT.fetch_add(10, SeqCst);
    let raw = fetch(&args.city).await?;
    let verdict = cx
        .sample(Sample::user(format!("Rate: {raw}")).max_tokens(100))
        .key("verdict")
        .await?
        .text()?;
    STRAIGHT.fetch_add(100, SeqCst);
    let found = cx.roots().await?;
    Ok(Forecast {
        user: format!("{greeting}/{}", github_login.name),
        city: args.city,
        verdict,
        roots: found.len(),
    })
}

#[tokio::test]
async fn straight_line() {
    let s = server(vec![tool(straight::tool())]);
    let h = host()
        .answer("github_login", accept(json!({"name": "octocat"})))
        .answer("verdict", said("great"))
        .answer("found", roots(&["file:///a", "file:///b"]));
    let (out, h) = call(s, h, "straight", json!({"city": "Oslo"})).await;
    assert_eq!(
        rounds(&out),
        vec![vec!["github_login"], vec!["verdict"], vec!["found"]]
    );
    assert_eq!(
        out.structured(),
        Some(
            &json!({"user": "hello Oslo/octocat", "city": "Oslo", "verdict": "great", "roots": 2})
        )
    );
    assert_eq!(STRAIGHT.load(SeqCst), 111, "each stage ran exactly once");
    assert_eq!(h.asked_keys(), ["github_login", "verdict", "found"]);
}

// ----------------------------------------------------------------------------------------
// shared answer types

#[derive(Serialize, Deserialize, JsonSchema, Debug)]
struct Num {
    n: i64,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug)]
struct Yes {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

fn n(v: i64) -> mcp_tool_runtime::protocol::ElicitResult {
    accept(json!({ "n": v }))
}
fn yes(v: bool) -> mcp_tool_runtime::protocol::ElicitResult {
    accept(json!({ "ok": v }))
}

// ----------------------------------------------------------------------------------------
// if / else / if let

static BRANCH: AtomicUsize = AtomicUsize::new(0);

#[mcp_tool]
async fn branches(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    BRANCH.fetch_add(1, SeqCst);
    let label = String::from("picked");
    let first: Num = cx.ask("first?").await?;
    BRANCH.fetch_add(10, SeqCst);
    let mut out = Vec::new();
    if first.n > 0 {
        let big: Num = cx.ask("positive: how big?").await?;
        out.push(format!("{label} pos {}", big.n));
    } else {
        out.push(format!("{label} non-pos"));
    }
    let maybe = if first.n > 5 { Some(first.n) } else { None };
    if let Some(m) = maybe {
        let again: Yes = cx.ask(format!("{m} is large, sure?")).await?;
        out.push(format!("sure={}", again.ok));
    } else if first.n == 0 {
        let zero: Yes = cx.ask("zero?").await?;
        out.push(format!("zero={}", zero.ok));
    }
    BRANCH.fetch_add(100, SeqCst);
    Ok(out.join(","))
}

#[tokio::test]
async fn if_else_and_if_let() {
    let s = server(vec![tool(branches::tool())]);
    let h = host()
        .answer("first", n(7))
        .answer("big", n(70))
        .answer("again", yes(true));
    let (out, _) = call(s, h, "branches", json!({})).await;
    assert_eq!(
        rounds(&out),
        vec![vec!["first"], vec!["big"], vec!["again"]]
    );
    assert_eq!(out.text(), "picked pos 70,sure=true");
    assert_eq!(BRANCH.load(SeqCst), 111);

    let s = server(vec![tool(branches::tool())]);
    let h = host().answer("first", n(0)).answer("zero", yes(false));
    let (out, _) = call(s, h, "branches", json!({})).await;
    assert_eq!(rounds(&out), vec![vec!["first"], vec!["zero"]]);
    assert_eq!(out.text(), "picked non-pos,zero=false");
}

// ----------------------------------------------------------------------------------------
// match arms, match scrutinee and if condition with a suspension (hoisted)

#[derive(Deserialize, JsonSchema)]
struct Mode {
    mode: String,
}

#[mcp_tool]
async fn matcher(cx: &mut ToolContext, args: Mode) -> Result<String, ToolError> {
    let prefix = "m".to_string();
    let r = match args.mode.as_str() {
        "ask" => {
            let a: Num = cx.ask("a number").await?;
            a.n * 2
        }
        "twice" => {
            let a: Num = cx.ask("one").await?;
            let b: Num = cx.ask("two").await?;
            a.n + b.n
        }
        _ => 0,
    };
    let r2 = match cx.ask::<Num>("scrutinee").key("scrut").await?.n {
        0 => "zero".to_string(),
        x => format!("{x}"),
    };
    if cx.ask::<Yes>("proceed?").key("proceed").await?.ok {
        return Ok(format!("{prefix}:{r}:{r2}:proceeded"));
    }
    Ok(format!("{prefix}:{r}:{r2}"))
}

#[tokio::test]
async fn match_arms_scrutinee_and_condition() {
    let s = server(vec![tool(matcher::tool())]);
    let h = host()
        .answer("a", n(1))
        .answer("b", n(2))
        .answer("scrut", n(0))
        .answer("proceed", yes(true));
    let (out, _) = call(s, h, "matcher", json!({"mode": "twice"})).await;
    assert_eq!(
        rounds(&out),
        vec![vec!["a"], vec!["b"], vec!["scrut"], vec!["proceed"]]
    );
    assert_eq!(out.text(), "m:3:zero:proceeded");

    let s = server(vec![tool(matcher::tool())]);
    let h = host().answer("scrut", n(4)).answer("proceed", yes(false));
    let (out, _) = call(s, h, "matcher", json!({"mode": "none"})).await;
    assert_eq!(rounds(&out), vec![vec!["scrut"], vec!["proceed"]]);
    assert_eq!(out.text(), "m:0:4");
}

// ----------------------------------------------------------------------------------------
// loop + break, while, while let, for over a Vec and a range

static LOOPS: AtomicUsize = AtomicUsize::new(0);

#[mcp_tool]
async fn loops(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    LOOPS.fetch_add(1, SeqCst);
    let mut total = 0;
    loop {
        let step: Num = cx.ask("add (0 stops)").await?;
        if step.n == 0 {
            break;
        }
        total += step.n;
    }
    LOOPS.fetch_add(10, SeqCst);
    let mut i = 0;
    while i < 2 {
        let w: Num = cx.ask(format!("while {i}")).await?;
        total += w.n;
        i += 1;
    }
    let mut stack = vec![100, 200];
    while let Some(top) = stack.pop() {
        let ok: Yes = cx.ask(format!("take {top}?")).await?;
        if ok.ok {
            total += top;
        }
    }
    let names = vec!["x".to_string(), "y".to_string()];
    let mut seen = String::new();
    for name in names {
        let v: Num = cx.ask(format!("value of {name}")).await?;
        seen.push_str(&format!("{name}={};", v.n));
    }
    for k in 0..2 {
        let r: Num = cx.ask(format!("range {k}")).await?;
        total += r.n * k;
    }
    LOOPS.fetch_add(100, SeqCst);
    Ok(format!("{total} {seen}"))
}

#[tokio::test]
async fn loop_while_while_let_for() {
    let s = server(vec![tool(loops::tool())]);
    let h = host()
        .answer("step", n(1))
        .answer("step", n(2))
        .answer("step", n(0))
        .answer("w", n(10))
        .answer("w", n(20))
        .answer("ok", yes(true))
        .answer("ok", yes(false))
        .answer("v", n(5))
        .answer("v", n(6))
        .answer("r", n(1000))
        .answer("r", n(3));
    let (out, h) = call(s, h, "loops", json!({})).await;
    let keys: Vec<Vec<String>> = [
        "step", "step", "step", "w", "w", "ok", "ok", "v", "v", "r", "r",
    ]
    .iter()
    .map(|k| vec![k.to_string()])
    .collect();
    assert_eq!(rounds(&out), keys);
    // 1 + 2 + 10 + 20 + 200 (pop order: 200 accepted, 100 declined) + 0*1000 + 1*3
    assert_eq!(out.text(), "236 x=5;y=6;");
    assert_eq!(LOOPS.load(SeqCst), 111);
    assert_eq!(h.asked().len(), 11);
}

// ----------------------------------------------------------------------------------------
// labelled break / continue across nested loops, early return, let-else, nested blocks

#[mcp_tool]
async fn labels(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let mut log = Vec::new();
    'outer: for row in 0..3 {
        let mut col = 0;
        loop {
            col += 1;
            let c: Num = cx.ask(format!("cell {row},{col}")).await?;
            match c.n {
                0 => continue 'outer,
                1 => break,
                9 => break 'outer,
                _ => log.push(format!("{row}{col}:{}", c.n)),
            }
        }
        log.push(format!("row{row}"));
    }
    {
        let inner = log.len();
        let fin: Num = cx.ask("final").await?;
        if fin.n < 0 {
            return Ok("early".to_string());
        }
        log.push(format!("{inner}/{}", fin.n));
    }
    Ok(log.join(" "))
}

#[tokio::test]
async fn labelled_break_continue_and_early_return() {
    let s = server(vec![tool(labels::tool())]);
    // row 0: 5 (logged), 1 (break inner) -> "row0"; row 1: 0 (continue outer); row 2: 9 (break outer)
    let h = host()
        .answer("c", n(5))
        .answer("c", n(1))
        .answer("c", n(0))
        .answer("c", n(9))
        .answer("fin", n(3));
    let (out, _) = call(s, h, "labels", json!({})).await;
    assert_eq!(rounds(&out).len(), 5);
    assert_eq!(out.text(), "01:5 row0 2/3");

    let s = server(vec![tool(labels::tool())]);
    let h = host().answer("c", n(9)).answer("fin", n(-1));
    let (out, _) = call(s, h, "labels", json!({})).await;
    assert_eq!(out.text(), "early");
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Pet {
    name: String,
}

#[mcp_tool]
async fn let_else(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let tag = "pet".to_owned();
    let mcp_tool_runtime::Elicitation::Accept(pet) = cx.elicit::<Pet>("Name your pet").await?
    else {
        return Ok(format!("{tag}: declined"));
    };
    let len = Some(pet.name.len())
        .filter(|l| *l > 0)
        .ok_or("empty name")?;
    let checked: Result<usize, ToolError> = if len > 10 {
        Err(ToolError::failed("too long"))
    } else {
        Ok(len)
    };
    let len = checked?;
    let again: Yes = cx.ask(format!("{} ({len})?", pet.name)).await?;
    Ok(format!("{tag}: {} {len} {}", pet.name, again.ok))
}

#[tokio::test]
async fn let_else_and_question_marks() {
    let s = server(vec![tool(let_else::tool())]);
    let h = host()
        .answer("pet", accept(json!({"name": "Rex"})))
        .answer("again", yes(true));
    let (out, _) = call(s, h, "let_else", json!({})).await;
    assert_eq!(rounds(&out), vec![vec!["pet"], vec!["again"]]);
    assert_eq!(out.text(), "pet: Rex 3 true");

    let s = server(vec![tool(let_else::tool())]);
    let h = host().answer("pet", mcp_tool_runtime::protocol::ElicitResult::decline());
    let (out, _) = call(s, h, "let_else", json!({})).await;
    assert_eq!(out.text(), "pet: declined");

    let s = server(vec![tool(let_else::tool())]);
    let h = host().answer("pet", accept(json!({"name": ""})));
    let (out, _) = call(s, h, "let_else", json!({})).await;
    assert!(
        out.is_error(),
        "`?` on an Option (via ok_or) fails the call"
    );

    let s = server(vec![tool(let_else::tool())]);
    let h = host().answer("pet", accept(json!({"name": "Bartholomew the Third"})));
    let (out, _) = call(s, h, "let_else", json!({})).await;
    assert!(out.is_error());
    assert!(out.text().contains("too long"), "{}", out.text());
}

// ----------------------------------------------------------------------------------------
// several requests in one round, assignment forms, checkpoint, declined ask

#[derive(Serialize, Deserialize, JsonSchema)]
struct Color {
    color: String,
}

static ROUND: AtomicUsize = AtomicUsize::new(0);

#[mcp_tool]
async fn rounds_and_assign(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    ROUND.fetch_add(1, SeqCst);
    let (color, poem, dirs) = cx
        .round((
            mcp_tool_runtime::requests::Ask::<Color>::new("favourite colour?"),
            Sample::user("a short poem"),
            mcp_tool_runtime::requests::Roots::new(),
        ))
        .await?;
    ROUND.fetch_add(10, SeqCst);
    let mut total = 1;
    total += cx.ask::<Num>("more").key("more").await?.n;
    let mut last = 0;
    let before = last;
    last = cx.ask::<Num>("last").await?.n;
    cx.checkpoint().await?;
    ROUND.fetch_add(100, SeqCst);
    Ok(format!(
        "{} {} {} {total} {before}{last}",
        color.color,
        poem.text()?,
        dirs.len()
    ))
}

#[tokio::test]
async fn round_assignments_and_checkpoint() {
    let s = server(vec![tool(rounds_and_assign::tool())]);
    let h = host()
        .answer("color", accept(json!({"color": "teal"})))
        .answer("poem", said("roses"))
        .answer("dirs", roots(&["file:///x"]))
        .answer("more", n(4))
        .answer("last", n(8));
    let (out, _) = call(s, h, "rounds_and_assign", json!({})).await;
    assert_eq!(
        rounds(&out),
        vec![
            vec!["color", "dirs", "poem"],
            vec!["more"],
            vec!["last"],
            vec![]
        ]
    );
    assert_eq!(out.text(), "teal roses 1 5 08");
    assert_eq!(ROUND.load(SeqCst), 111);
}

#[tokio::test]
async fn declined_ask_is_a_polite_error() {
    let s = server(vec![tool(matcher::tool())]);
    let h = host().answer("a", mcp_tool_runtime::protocol::ElicitResult::decline());
    let (out, _) = call(s, h, "matcher", json!({"mode": "ask"})).await;
    assert!(out.is_error());
    assert_eq!(rounds(&out), vec![vec!["a"]]);
}

// ----------------------------------------------------------------------------------------
// `for` over a field of the arguments, by value (the arguments are parsed again per stage)

#[derive(Deserialize, JsonSchema)]
struct Branches {
    branches: Vec<String>,
    prefix: String,
}

#[mcp_tool]
async fn for_over_args(cx: &mut ToolContext, args: Branches) -> Result<String, ToolError> {
    let mut kept = Vec::new();
    for b in args.branches {
        let keep: Yes = cx.ask(format!("keep {b}?")).await?;
        if keep.ok {
            kept.push(format!("{}{b}", args.prefix));
        }
    }
    Ok(kept.join(","))
}

#[tokio::test]
async fn for_loop_moves_out_of_args() {
    let s = server(vec![tool(for_over_args::tool())]);
    let h = host()
        .answer("keep", yes(true))
        .answer("keep", yes(false))
        .answer("keep", yes(true));
    let args = json!({"branches": ["a", "b", "c"], "prefix": "x/"});
    let (out, _) = call(s, h, "for_over_args", args).await;
    assert_eq!(rounds(&out).len(), 3);
    assert_eq!(out.text(), "x/a,x/c");
}

// ----------------------------------------------------------------------------------------
// `break value` out of a `loop` / labelled block containing a suspension point

#[mcp_tool]
async fn break_value(cx: &mut ToolContext, _args: NoArgs) -> Result<String, ToolError> {
    let mut tries = 0;
    let picked = loop {
        tries += 1;
        let v: Num = cx.ask(format!("try {tries}")).await?;
        if v.n > 0 {
            break v.n * 10;
        }
    };
    let label = 'found: {
        let ok: Yes = cx.ask("ok?").await?;
        if ok.ok {
            break 'found "yes";
        }
        "no"
    };
    Ok(format!("{picked} {tries} {label}"))
}

#[tokio::test]
async fn break_with_a_value() {
    let s = server(vec![tool(break_value::tool())]);
    let h = host()
        .answer("v", n(0))
        .answer("v", n(-2))
        .answer("v", n(4))
        .answer("ok", yes(true));
    let (out, _) = call(s, h, "break_value", json!({})).await;
    assert_eq!(rounds(&out).len(), 4);
    assert_eq!(out.text(), "40 3 yes");

    let s = server(vec![tool(break_value::tool())]);
    let h = host().answer("v", n(1)).answer("ok", yes(false));
    let (out, _) = call(s, h, "break_value", json!({})).await;
    assert_eq!(out.text(), "10 1 no");
}

/// What a `let … else` whose `else` suspends is written as (the ui case suggests it).
#[derive(Deserialize, JsonSchema)]
struct MaybeName {
    name: Option<String>,
}

#[mcp_tool]
async fn match_instead_of_let_else(
    cx: &mut ToolContext,
    args: MaybeName,
) -> Result<String, ToolError> {
    let name = match args.name {
        Some(x) => x,
        _ => {
            let v: Pet = cx.ask("who?").await?;
            return Ok(format!("asked {}", v.name));
        }
    };
    Ok(format!("given {name}"))
}

#[tokio::test]
async fn match_with_a_suspending_arm_replaces_let_else() {
    let s = server(vec![tool(match_instead_of_let_else::tool())]);
    let h = host().answer("v", accept(json!({"name": "Rex"})));
    let (out, _) = call(s, h, "match_instead_of_let_else", json!({})).await;
    assert_eq!(out.text(), "asked Rex");
    let s = server(vec![tool(match_instead_of_let_else::tool())]);
    let (out, _) = call(
        s,
        host(),
        "match_instead_of_let_else",
        json!({"name": "Tom"}),
    )
    .await;
    assert_eq!(out.text(), "given Tom");
}
