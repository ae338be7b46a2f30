//! Differential test: each tool's original function, run in direct mode against a scripted
//! host, and its `#[mcp_tool]` state machine, driven round by round through the server (seal
//! -> open every round), give the same result for the same answers, and ask the host with
//! the same keys (derived from the bindings, or set with `.key(..)`), so one host scripted
//! by key serves both modes.

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcp_tool_runtime::protocol::{ClientCapabilities, InputResponse};
use mcp_tool_runtime::testing::{HostError, ScriptedHost};
use mcp_tool_runtime::{Elicitation, Sample, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Num {
    n: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Args {
    k: i64,
}

#[derive(Serialize, JsonSchema, PartialEq, Debug)]
struct Report {
    total: i64,
    notes: Vec<String>,
}

#[mcp_tool]
async fn sum_loop(cx: &mut ToolContext, args: Args) -> Result<Report, ToolError> {
    let mut total = args.k;
    let mut notes = Vec::new();
    for i in 0..3 {
        let x: Num = cx.ask(format!("x{i}")).await?;
        if x.n < 0 {
            notes.push(format!("skip {i}"));
            continue;
        }
        total += x.n;
    }
    loop {
        let more: Num = cx.ask("more").await?;
        if more.n == 0 {
            break;
        }
        total *= more.n;
    }
    Ok(Report { total, notes })
}

#[mcp_tool]
async fn branchy(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let kind = if args.k > 0 { "pos" } else { "neg" }.to_string();
    let picked = match args.k {
        1 => {
            let a: Num = cx.ask("a").await?;
            a.n
        }
        2 => {
            let verdict = cx.sample(Sample::user("rate")).await?.text()?;
            verdict.len() as i64
        }
        _ => -1,
    };
    let Elicitation::Accept(extra) = cx.elicit::<Num>("extra").await? else {
        return Ok(format!("{kind} {picked} declined"));
    };
    Ok(format!("{kind} {picked} {}", extra.n))
}

#[mcp_tool]
async fn nested(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let mut log = String::new();
    'rows: for r in 0..args.k {
        let mut c = 0;
        while c < 3 {
            c += 1;
            let v: Num = cx.ask(format!("{r}/{c}")).await?;
            if v.n == 7 {
                break 'rows;
            }
            if v.n == 5 {
                continue 'rows;
            }
            log.push_str(&format!("[{r}{c}={}]", v.n));
        }
    }
    let files = cx.roots().await?;
    Ok(format!("{log} {}", files.len()))
}

/// A sampling request made away from the suspension point, keyed there.
fn summary_request(topic: &str) -> Sample {
    Sample::user(format!("Summarize {topic}")).key("summary")
}

/// Keys set on builder values at run time (made elsewhere, or computed) are the keys the
/// client sees, in both modes; the binding's name is only the default.
#[mcp_tool]
async fn keyed_elsewhere(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let s = cx.sample(summary_request("the repo")).await?.text()?;
    let mut got = Vec::new();
    for i in 0..args.k {
        let v: Num = cx.ask(format!("n{i}?")).key(format!("n{i}")).await?;
        got.push(v.n);
    }
    let (a, b) = cx
        .round((
            mcp_tool_runtime::requests::Ask::<Num>::new("a?").key(format!("pair_{}", args.k)),
            Sample::user("b?").key("bee"),
        ))
        .await?;
    // a key written at the suspension point wins over the builder's
    let t = cx
        .sample(summary_request("it again"))
        .key("critique")
        .await?
        .text()?;
    Ok(format!("{s} {got:?} {} {} {t}", a.n, b.text()?))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    name: String,
}

/// Every way a key is derived: a `let` binding, a tuple pattern of a `round`, an assignment,
/// a binding inside a loop (the same key each iteration, as in the state machine).
#[mcp_tool]
async fn onboard(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let Elicitation::Accept(github_login) = cx.elicit::<Login>("GitHub username?").await? else {
        return Ok("declined".into());
    };
    let (city, files) = cx
        .round((
            mcp_tool_runtime::requests::Ask::<Login>::new("City?"),
            mcp_tool_runtime::requests::Roots::new(),
        ))
        .await?;
    let mut note = String::new();
    if args.k > 0 {
        note = cx.sample(Sample::user("note?")).await?.text()?;
    }
    let mut sum = 0;
    for i in 0..args.k {
        let step: Num = cx.ask(format!("step {i}?")).await?;
        sum += step.n;
    }
    Ok(format!(
        "{} {} {} {note} {sum}",
        github_login.name,
        city.name,
        files.len()
    ))
}

/// A host scripted by the derived keys only.
fn onboard_host() -> ScriptedHost {
    ScriptedHost::new(ClientCapabilities::all())
        .answer("github_login", accept(json!({"name": "octocat"})))
        .answer("city", accept(json!({"name": "Lyon"})))
        .answer("files", roots(&["file:///a", "file:///b"]))
        .answer("note", said("hi"))
        .answer("step", accept(json!({"n": 2})))
        .answer("step", accept(json!({"n": 5})))
}

#[tokio::test]
async fn derived_keys_script_both_modes() {
    // direct mode used to name these `elicit_1`, `ask_2`, …: the host had no answer for them
    let mut cx = mcp_tool_runtime::testing::direct(onboard_host());
    let direct = onboard(&mut cx, Args { k: 2 }).await.expect("direct mode");
    assert_eq!(direct, "octocat Lyon 2 hi 7");
    let s = server(vec![tool(onboard::tool())]);
    let (out, host) = call(s, onboard_host(), "onboard", json!({"k": 2})).await;
    assert_eq!(macro_value(&out), json!(direct));
    assert_eq!(
        host.asked_keys(),
        ["github_login", "city", "files", "note", "step", "step"]
    );
}

/// A host answering by key only, recording the keys asked.
fn by_key(answers: &[(&str, InputResponse)], asked: Arc<Mutex<Vec<String>>>) -> ScriptedHost {
    let answers: std::collections::HashMap<String, InputResponse> = answers
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    ScriptedHost::from_fn(ClientCapabilities::all(), move |key, _req| {
        asked.lock().unwrap().push(key.to_string());
        answers
            .get(key)
            .cloned()
            .ok_or_else(|| HostError::NoAnswer {
                key: key.to_string(),
            })
    })
}

#[tokio::test]
async fn sum_loop_agrees() {
    let v = differential!(
        sum_loop,
        json!({"k": 1}),
        vec![
            ans(json!({"n": 2})),
            ans(json!({"n": -1})),
            ans(json!({"n": 3})),
            ans(json!({"n": 2})),
            ans(json!({"n": 0}))
        ]
    )
    .value;
    assert_eq!(v, json!({"total": 12, "notes": ["skip 1"]}));
}

#[tokio::test]
async fn branchy_agrees() {
    let v = differential!(
        branchy,
        json!({"k": 1}),
        vec![ans(json!({"n": 4})), ans(json!({"n": 9}))]
    )
    .value;
    assert_eq!(v, json!("pos 4 9"));
    let v = differential!(
        branchy,
        json!({"k": 2}),
        vec![said("great").into(), ans(json!({"n": 1}))]
    )
    .value;
    assert_eq!(v, json!("pos 5 1"));
    let v = differential!(
        branchy,
        json!({"k": -3}),
        vec![mcp_tool_runtime::protocol::ElicitResult::decline().into()]
    )
    .value;
    assert_eq!(v, json!("neg -1 declined"));
}

#[tokio::test]
async fn nested_agrees() {
    let v = differential!(
        nested,
        json!({"k": 3}),
        vec![
            ans(json!({"n": 1})),
            ans(json!({"n": 5})),
            ans(json!({"n": 2})),
            ans(json!({"n": 3})),
            ans(json!({"n": 4})),
            ans(json!({"n": 7})),
            roots(&["file:///r"]).into(),
        ]
    )
    .value;
    assert_eq!(v, json!("[01=1][11=2][12=3][13=4] 1"));
}

#[tokio::test]
async fn errors_agree() {
    // the host runs out of answers: both report an error
    let direct = {
        let mut cx = mcp_tool_runtime::testing::direct(sequential(vec![], Default::default()));
        sum_loop(&mut cx, Args { k: 0 }).await.is_err()
    };
    assert!(direct);
}

#[tokio::test]
async fn runtime_keys_agree() {
    let answers = [
        ("summary", said("short").into()),
        ("n0", ans(json!({"n": 10}))),
        ("n1", ans(json!({"n": 11}))),
        ("pair_2", ans(json!({"n": 3}))),
        ("bee", said("buzz").into()),
        ("critique", said("fine").into()),
    ];
    let direct_keys = Arc::new(Mutex::new(Vec::new()));
    let mut cx = mcp_tool_runtime::testing::direct(by_key(&answers, direct_keys.clone()));
    let direct = direct_value(keyed_elsewhere(&mut cx, Args { k: 2 })).await;
    let macro_keys = Arc::new(Mutex::new(Vec::new()));
    let s = server(vec![tool(keyed_elsewhere::tool())]);
    let (out, _) = call(
        s,
        by_key(&answers, macro_keys.clone()),
        "keyed_elsewhere",
        json!({"k": 2}),
    )
    .await;
    let transformed = macro_value(&out);
    assert_eq!(direct, json!("short [10, 11] 3 buzz fine"));
    assert_eq!(direct, transformed);
    let mut d = direct_keys.lock().unwrap().clone();
    let mut m = macro_keys.lock().unwrap().clone();
    d.sort();
    m.sort();
    assert_eq!(d, m, "the same keys are asked in both modes");
    assert_eq!(
        rounds(&out),
        vec![
            vec!["summary"],
            vec!["n0"],
            vec!["n1"],
            vec!["bee", "pair_2"],
            vec!["critique"]
        ]
    );
}

/// Holds a non-`Send` value across a suspension point without using it afterwards: the
/// state machine does not keep it, but the function's own future is not `Send`.
#[mcp_tool]
async fn local_value(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let shared = std::rc::Rc::new(args.k);
    let k = *shared;
    let x: Num = cx.ask("x").await?;
    Ok(format!("{k} {}", x.n))
}

#[tokio::test]
async fn a_function_that_is_not_send_has_no_direct_mode_but_runs() {
    use mcp_tool_runtime::Tool as _;
    let mut cx = mcp_tool_runtime::testing::direct(sequential(vec![], Default::default()));
    let t = local_value::tool();
    let args = serde_json::value::to_raw_value(&json!({"k": 1})).unwrap();
    assert!(t.direct(&mut cx, &args).is_none());
    let s = server(vec![tool(local_value::tool())]);
    let (out, _) = call(
        s,
        sequential(vec![ans(json!({"n": 4}))], Default::default()),
        "local_value",
        json!({"k": 3}),
    )
    .await;
    assert_eq!(macro_value(&out), json!("3 4"));
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct NameForm {
    name: String,
}

/// The answer type inferred from a struct pattern (issue 19, item 7: was E0282), its binding
/// kept across the next suspension point.
#[mcp_tool]
async fn struct_pattern(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let NameForm { name } = cx.ask("who?").key("who").await?;
    let Num { n } = cx.ask(format!("how many, {name}?")).await?;
    Ok(format!("{name} x{}", n + args.k))
}

#[tokio::test]
async fn struct_pattern_agrees() {
    let v = differential!(
        struct_pattern,
        json!({"k": 1}),
        vec![ans(json!({"name": "ada"})), ans(json!({"n": 2}))]
    )
    .value;
    assert_eq!(v, json!("ada x3"));
}

/// Iterating a kept local by reference with a suspension inside the loop (issue 19, item 7).
#[mcp_tool]
async fn kept_loop(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let who: NameForm = cx.ask("which?").await?;
    let kids: Vec<String> = who.name.split(',').map(str::to_owned).collect();
    let mut out = Vec::new();
    for (i, k) in kids.iter().enumerate() {
        let num: Num = cx
            .ask(format!("how many for {k}?"))
            .key(format!("n_{i}"))
            .await?;
        out.push(format!("{k}={}", num.n + args.k));
    }
    Ok(out.join(","))
}

#[tokio::test]
async fn kept_loop_agrees() {
    let v = differential!(
        kept_loop,
        json!({"k": 1}),
        vec![
            ans(json!({"name": "a,b"})),
            ans(json!({"n": 2})),
            ans(json!({"n": 5}))
        ]
    )
    .value;
    assert_eq!(v, json!("a=3,b=6"));
}
