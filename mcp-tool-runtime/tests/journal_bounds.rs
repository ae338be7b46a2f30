//! A journaled state cannot be grown by the client beyond a bound (issue 18, item 6): the
//! journal keeps only the members of an answer a tool reads (no `extra`), and a state's
//! payload is bounded by its uncompressed size, on seal (-32603) and on open (-32602), by
//! the same `SealConfig::max_payload_bytes`. Before, ~14 KB of compressed state could
//! inflate to megabytes and be parsed on every re-send.

use mcp_tool_runtime::ToolContext;
use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, Implementation, JsonRpcResponse};
use mcp_tool_runtime::requests::Elicit;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::{
    Principal, Tool, ToolError, ToolInfo,
    manual::{BoxFuture, Step},
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

mod support;

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    #[allow(dead_code)]
    ok: bool,
}

/// Journaled: asks one question (`q0`, `q1`, …) per round until `rounds` are answered.
struct Collect;

impl Tool for Collect {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("collect")
            .needs(Capability::Elicitation)
            .max_rounds(64)
            .journal(true)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(async move {
            let state: Option<serde_json::Value> = state
                .map(mcp_tool_runtime::manual::parse_state)
                .transpose()?;
            let args: serde_json::Value = mcp_tool_runtime::manual::parse_args(args)?;
            let n = state
                .as_ref()
                .and_then(|s| s.get("n"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let rounds = args.get("rounds").and_then(Value::as_u64).unwrap_or(1);
            if n >= rounds {
                let kept = cx.journal().map_or(0, |j| j.len());
                return Ok(Step::Complete(CallToolResult::text(format!(
                    "{kept} answers journaled"
                ))));
            }
            cx.request(
                format!("q{n}"),
                Elicit::<Confirm>::new("Sure?").into_request()?,
            )?;
            Step::suspend(&json!({"n": n + 1}))
        })
    }
}

fn server(config: SealConfig) -> Server {
    let sealer = Sealer::new(Keyring::new("k", vec![7; 32]).unwrap(), config);
    Server::builder(Implementation::new("journal-bounds", "1"))
        .sealer(sealer)
        .tool(Collect)
        .build()
        .unwrap()
}

async fn call(server: &Server, rounds: u64, extra: Value) -> JsonRpcResponse {
    let meta = support::meta(json!({"elicitation": {}}));
    let params = support::call_params("collect", json!({"rounds": rounds}), meta, extra);
    support::send_as(
        server,
        &Principal::named("alice"),
        support::request(1, "tools/call", params),
    )
    .await
}

/// Text that does not compress: `len` pseudo-random letters.
fn noise(len: usize, seed: u64) -> String {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b'a' + ((x >> 33) % 26) as u8)
        })
        .collect()
}

/// Runs `rounds` rounds answering each with `answer(round)`; the tokens handed out, then
/// the last response.
async fn run(
    server: &Server,
    rounds: u64,
    answer: impl Fn(u64) -> Value,
) -> (Vec<String>, JsonRpcResponse) {
    let mut tokens = Vec::new();
    let mut r = call(server, rounds, json!({})).await;
    for n in 0..rounds {
        let Some(state) = r
            .result_value()
            .and_then(|v| v["requestState"].as_str())
            .map(str::to_owned)
        else {
            return (tokens, r);
        };
        tokens.push(state.clone());
        let answers = json!({ format!("q{n}"): answer(n) });
        r = call(server, rounds, support::resume(&state, answers)).await;
    }
    (tokens, r)
}

/// Unknown members of an answer (`ElicitResult.extra`) are not journaled: eight rounds of
/// answers padded with 40 KB of incompressible text each end with a state of a few hundred
/// bytes. Before, the first padded answer went into every later state (a 64 KiB token
/// cap then stopped the call with -32603).
#[tokio::test]
async fn padding_in_journaled_answers_is_not_kept() {
    let s = server(SealConfig::default());
    let (tokens, last) = run(
        &s,
        8,
        |n| json!({"action": "accept", "content": {"ok": true}, "padding": noise(40_000, n)}),
    )
    .await;
    let text = last
        .result_value()
        .map(|v| v["content"][0]["text"].clone())
        .unwrap_or_else(|| panic!("the call did not complete: {last:?}"));
    assert_eq!(text, "8 answers journaled");
    let longest = tokens.iter().map(String::len).max().unwrap_or(0);
    eprintln!("8 padded rounds: longest state {longest} bytes");
    assert!(longest < 2_000, "a state of {longest} bytes");
}

/// What a journal keeps (the answers' `content`) can still grow, compressing well: once
/// the payload would exceed `max_payload_bytes` uncompressed (256 KiB by default), sealing
/// fails with -32603 instead of handing out a small token that inflates large.
#[tokio::test]
async fn a_state_over_the_inflated_bound_is_not_sealed() {
    let s = server(SealConfig::default());
    // 50 KB of one letter per answer: compresses about 200 to 1
    let (tokens, last) = run(
        &s,
        16,
        |_| json!({"action": "accept", "content": {"ok": true, "note": "x".repeat(50_000)}}),
    )
    .await;
    assert_eq!(last.error_code(), Some(-32603), "{last:?}");
    // five answers (about 250 KB) fit; the sixth makes it more than 256 KiB
    assert_eq!(tokens.len(), 6, "{} states sealed", tokens.len());
    let longest = tokens.iter().map(String::len).max().unwrap_or(0);
    eprintln!("{} states sealed, longest {longest} bytes", tokens.len());
    assert!(longest < 8_000, "a state of {longest} bytes");
}

/// The same bound on open: a state sealed by a server allowing a larger payload (the
/// same key and deployment) is refused with -32602 by one with the default bound, before
/// it is inflated.
#[tokio::test]
async fn a_state_over_the_inflated_bound_is_not_opened() {
    let big = server(SealConfig::default().with_max_payload_bytes(4 << 20));
    let small = server(SealConfig::default());
    let (tokens, last) = run(
        &big,
        8,
        |_| json!({"action": "accept", "content": {"ok": true, "note": "x".repeat(60_000)}}),
    )
    .await;
    assert!(last.result_value().is_some(), "{last:?}");
    let state = tokens.last().expect("states were sealed");
    assert!(state.len() < 16_000, "a state of {} bytes", state.len());
    let answers = json!({"q7": {"action": "accept", "content": {"ok": true}}});
    let r = call(&small, 8, support::resume(state, answers.clone())).await;
    assert_eq!(r.error_code(), Some(-32602), "{r:?}");
    // the larger bound opens it
    let r = call(&big, 8, support::resume(state, answers)).await;
    assert!(r.result_value().is_some(), "{r:?}");
}
