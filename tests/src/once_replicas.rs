//! A single-use round (`#[mcp_tool(once)]`) replayed on another replica of a shared store:
//! two [`Server`]s with one keyring, each given its own handle on the same stored data
//! (`ServerBuilder::store`), and one effect counter standing for the outside world (a
//! payment, a row in a shared database). Run by `store_sqlite.rs` (two stores opened on
//! one file, as two processes) and `store_postgres.rs` (two connections to one database, as
//! two replicas); the in-process ledger does not pass it (each replica would run the round).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_runtime::protocol::JsonRpcResponse;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::store::Store;
use mcp_tool_runtime::{Principal, State, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How many times the effect happened, over both replicas.
#[derive(Debug, Default)]
pub struct Effects {
    /// Runs of `pay`'s second round.
    pub runs: AtomicUsize,
}

/// Arguments of `pay`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PayArgs {
    /// How much.
    pub amount: u32,
}

/// The confirmation `pay` asks for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Go {
    /// Whether to pay.
    pub go: bool,
}

/// Asks for a confirmation, then has its effect (counted) in the second round, slowly
/// enough (50 ms) that replays racing it overlap the run.
#[mcp_tool(once, max_rounds = 1)]
pub async fn pay(
    cx: &mut ToolContext,
    args: PayArgs,
    fx: State<Effects>,
) -> Result<String, ToolError> {
    let go = cx.elicit::<Go>("pay?").await?;
    let go = matches!(go, mcp_tool_runtime::Elicitation::Accept(Go { go: true }));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let n = fx.runs.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(format!("paid {} (go {go}): effect {n}", args.amount))
}

/// A replica: the one keyring of the fleet, `store` for tasks and single-use claims, the
/// shared effect counter.
pub fn replica(store: Arc<dyn Store>, fx: Arc<Effects>) -> Server {
    let sealer = Sealer::new(
        Keyring::new("fleet", vec![4u8; 32]).expect("keyring"),
        SealConfig::default(),
    );
    Server::builder(mcp_tool_runtime::protocol::Implementation::new(
        "once-replicas",
        "1",
    ))
    .sealer(sealer)
    .state(fx)
    .store(store)
    .tool(pay::tool())
    .build()
    .expect("a replica")
}

fn call(amount: u32, extra: Value) -> Value {
    let mut params = json!({
        "name": "pay",
        "arguments": {"amount": amount},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
}

async fn send(server: &Server, who: &str, msg: Value) -> JsonRpcResponse {
    server
        .handle(msg, &Principal::named(who))
        .await
        .expect("a request gets a response")
}

fn text(r: &JsonRpcResponse) -> String {
    serde_json::to_string(r).expect("a response serializes")
}

/// `pay`'s first round on `server`, as alice: the confirming second round to present.
async fn confirming_round(server: &Server, amount: u32) -> Value {
    let r = send(server, "alice", call(amount, json!({}))).await;
    let result = r.result_value().expect("input_required").clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    let key = result["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one input request");
    call(
        amount,
        json!({
            "requestState": state,
            "inputResponses": {key: {"action": "accept", "content": {"go": true}}},
        }),
    )
}

/// What [`a_replay_on_another_replica_runs_nothing`] measured.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Presentations of one state racing over both replicas.
    pub racing: usize,
    /// Of those, answered busy (-32000: the first still ran past `once_wait`).
    pub busy: usize,
    /// Times the effect happened for the racing state (must be 1).
    pub effects: usize,
    /// The slowest racing presentation.
    pub slowest: Duration,
}

/// The check: a state presented on replica A runs once; replayed on replica B it gets A's
/// response byte for byte and runs nothing; 16 presentations of a fresh state racing over
/// both replicas run it once and all get the same bytes (or busy, never a second run);
/// another principal gets -32602 on either replica.
pub async fn a_replay_on_another_replica_runs_nothing(
    a: Arc<dyn Store>,
    b: Arc<dyn Store>,
) -> Figures {
    let fx = Arc::new(Effects::default());
    let (ra, rb) = (replica(a, fx.clone()), replica(b, fx.clone()));

    let confirm = confirming_round(&ra, 5).await;
    let first = send(&ra, "alice", confirm.clone()).await;
    assert_eq!(
        first.result_value().expect("a result")["content"][0]["text"],
        "paid 5 (go true): effect 1",
        "{}",
        text(&first)
    );
    let replay = send(&rb, "alice", confirm.clone()).await;
    assert_eq!(
        text(&replay),
        text(&first),
        "the replay on the other replica"
    );
    assert_eq!(
        fx.runs.load(Ordering::SeqCst),
        1,
        "the replay ran the round"
    );
    let mallory = send(&rb, "mallory", confirm).await;
    assert_eq!(mallory.error_code(), Some(-32602), "{}", text(&mallory));

    // a fresh state, presented 16 times at once over both replicas
    let confirm = confirming_round(&rb, 7).await;
    let before = fx.runs.load(Ordering::SeqCst);
    let racing = 16;
    let handles: Vec<_> = (0..racing)
        .map(|i| {
            let server = if i % 2 == 0 { ra.clone() } else { rb.clone() };
            let msg = confirm.clone();
            tokio::spawn(async move {
                let began = Instant::now();
                let r = send(&server, "alice", msg).await;
                (r, began.elapsed())
            })
        })
        .collect();
    let mut answers = Vec::new();
    for h in handles {
        answers.push(h.await.expect("a presentation"));
    }
    let effects = fx.runs.load(Ordering::SeqCst) - before;
    assert_eq!(effects, 1, "the racing state ran {effects} times");
    let done: Vec<String> = answers
        .iter()
        .filter(|(r, _)| r.error_code().is_none())
        .map(|(r, _)| text(r))
        .collect();
    let busy = answers
        .iter()
        .filter(|(r, _)| r.error_code() == Some(-32000))
        .count();
    assert_eq!(
        done.len() + busy,
        racing,
        "every answer is the result or busy"
    );
    assert!(!done.is_empty());
    assert!(
        done.iter().all(|t| *t == done[0]),
        "the racing presentations got different answers: {done:?}"
    );
    // a later replay, on either replica, gets the same bytes
    for server in [&ra, &rb] {
        assert_eq!(text(&send(server, "alice", confirm.clone()).await), done[0]);
    }
    assert_eq!(fx.runs.load(Ordering::SeqCst), before + 1);
    Figures {
        racing,
        busy,
        effects,
        slowest: answers.iter().map(|(_, d)| *d).max().unwrap_or_default(),
    }
}
