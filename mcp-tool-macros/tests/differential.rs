//! Differential test: each tool's original function, run in direct mode against a scripted
//! host, and its `#[mcp_tool]` state machine, driven round by round through the server (seal
//! -> open every round), give the same result for the same answers.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use common::*;
use mcp_tool_runtime::client::{HostError, ScriptedHost};
use mcp_tool_runtime::protocol::{ClientCapabilities, InputResponse};
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

/// A host answering requests in order, whatever their keys (direct mode derives none).
fn sequential(answers: Vec<InputResponse>) -> ScriptedHost {
    let q = Arc::new(Mutex::new(VecDeque::from(answers)));
    ScriptedHost::from_fn(ClientCapabilities::all(), move |key, _req| {
        q.lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| HostError::NoAnswer {
                key: key.to_string(),
            })
    })
}

fn ans(v: Value) -> InputResponse {
    accept(v).into()
}

async fn direct_value<T: Serialize>(fut: impl Future<Output = Result<T, ToolError>>) -> Value {
    match fut.await {
        Ok(v) => serde_json::to_value(&v).unwrap(),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

fn macro_value(out: &mcp_tool_runtime::client::CallOutcome) -> Value {
    if out.is_error() {
        return json!({ "error": out.text() });
    }
    out.structured()
        .cloned()
        .unwrap_or_else(|| Value::String(out.text()))
}

macro_rules! differential {
    ($tool:ident, $args:expr, $answers:expr) => {{
        let answers: Vec<InputResponse> = $answers;
        let args: Value = $args;
        let mut cx = ToolContext::direct(sequential(answers.clone()));
        let direct = direct_value($tool(
            &mut cx,
            serde_json::from_value(args.clone()).unwrap(),
        ))
        .await;
        let s = server(vec![tool($tool::tool())]);
        let (out, _) = call(s, sequential(answers), stringify!($tool), args).await;
        let transformed = macro_value(&out);
        assert_eq!(direct, transformed, "{} differs", stringify!($tool));
        transformed
    }};
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
    );
    assert_eq!(v, json!({"total": 12, "notes": ["skip 1"]}));
}

#[tokio::test]
async fn branchy_agrees() {
    let v = differential!(
        branchy,
        json!({"k": 1}),
        vec![ans(json!({"n": 4})), ans(json!({"n": 9}))]
    );
    assert_eq!(v, json!("pos 4 9"));
    let v = differential!(
        branchy,
        json!({"k": 2}),
        vec![said("great").into(), ans(json!({"n": 1}))]
    );
    assert_eq!(v, json!("pos 5 1"));
    let v = differential!(
        branchy,
        json!({"k": -3}),
        vec![mcp_tool_runtime::protocol::ElicitResult::decline().into()]
    );
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
    );
    assert_eq!(v, json!("[01=1][11=2][12=3][13=4] 1"));
}

#[tokio::test]
async fn errors_agree() {
    // the host runs out of answers: both report an error
    let direct = {
        let mut cx = ToolContext::direct(sequential(vec![]));
        sum_loop(&mut cx, Args { k: 0 }).await.is_err()
    };
    assert!(direct);
}
