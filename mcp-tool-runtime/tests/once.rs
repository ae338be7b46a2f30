//! Single-use rounds (`#[mcp_tool(once)]`): a replayed state gets the stored response and
//! never a second run; a replay while the first runs waits, then is answered busy (`503`
//! with `Retry-After` over HTTP); a tool error releases the claim, a panic keeps it; an
//! outcome over the bound is not kept; ledger entries expire with the state.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use mcp_tool_runtime::protocol::JsonRpcResponse;
use mcp_tool_runtime::server::{Server, ServerBuilder};
use mcp_tool_runtime::store::MemoryLedger;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::{Principal, State, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use support::*;

/// What the tool did, and what it does next time.
#[derive(Default)]
struct Effects {
    runs: AtomicUsize,
    delay_ms: AtomicU64,
    fail_next: AtomicBool,
    panic_next: AtomicBool,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ActArgs {
    label: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Go {
    go: bool,
}

/// Asks, then has its effect (counted) in the second round.
#[mcp_tool(once, max_rounds = 1)]
async fn act(cx: &mut ToolContext, args: ActArgs, fx: State<Effects>) -> Result<String, ToolError> {
    let _go = cx.elicit::<Go>("go?").await?;
    let delay = fx.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    if fx.panic_next.swap(false, Ordering::SeqCst) {
        panic!("the effect's code panicked");
    }
    if fx.fail_next.swap(false, Ordering::SeqCst) {
        return Err(ToolError::Failed("the database is busy, try again".into()));
    }
    let n = fx.runs.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(format!("{}: run {n}", args.label))
}

/// `act` with states that live two seconds (expiry is whole seconds: a state issued late
/// in a second lives at least one full second, so a loaded machine still answers round 2).
#[mcp_tool(once, max_rounds = 1, ttl = 2)]
async fn act_briefly(cx: &mut ToolContext, fx: State<Effects>) -> Result<usize, ToolError> {
    let _go = cx.elicit::<Go>("go?").await?;
    Ok(fx.runs.fetch_add(1, Ordering::SeqCst) + 1)
}

struct Fixture {
    server: Server,
    fx: Arc<Effects>,
    ledger: Arc<MemoryLedger>,
}

fn fixture(tune: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Fixture {
    let fx = Arc::new(Effects::default());
    let ledger = Arc::new(MemoryLedger::new());
    let b = Server::builder(mcp_tool_runtime::protocol::Implementation::new("once", "1"))
        .sealer(sealer("k", 7))
        .state(fx.clone())
        .ledger(ledger.clone())
        .tool(act::tool())
        .tool(act_briefly::tool());
    Fixture {
        server: tune(b).build().expect("server builds"),
        fx,
        ledger,
    }
}

fn caps() -> Value {
    meta(json!({"elicitation": {}}))
}

fn call(name: &str, args: Value, extra: Value) -> Value {
    request(2, "tools/call", call_params(name, args, caps(), extra))
}

fn alice() -> Principal {
    Principal::named("alice")
}

/// The first round of `name`: its state and the answers that go with it.
async fn first_round(server: &Server, name: &str, args: Value) -> Value {
    let r = send_as(server, &alice(), call(name, args.clone(), json!({}))).await;
    let result = r.result_value().expect("input_required").clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    let key = result["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one request");
    call(
        name,
        args,
        resume(
            state,
            json!({ key: {"action": "accept", "content": {"go": true}} }),
        ),
    )
}

fn bytes(r: &JsonRpcResponse) -> String {
    serde_json::to_string(r).expect("serializes")
}

fn args() -> Value {
    json!({"label": "once"})
}

#[tokio::test]
async fn a_replayed_round_gets_the_stored_response_and_never_runs_twice() {
    let f = fixture(|b| b);
    let last = first_round(&f.server, "act", args()).await;
    // the first round issued a state and claimed nothing
    assert_eq!(f.ledger.len(), 0);
    let first = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(
        first.result_value().unwrap()["content"][0]["text"],
        "once: run 1"
    );
    let replays = (0..32).map(|_| {
        let server = f.server.clone();
        let msg = last.clone();
        tokio::spawn(async move { send_as(&server, &alice(), msg).await })
    });
    for r in futures_join(replays).await {
        assert_eq!(bytes(&r), bytes(&first));
    }
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
    assert_eq!(f.ledger.len(), 1);
    // another principal: the seal's binding refuses the state (-32602), nothing claimed
    let bob = send_as(&f.server, &Principal::named("bob"), last).await;
    assert_eq!(bob.error_code(), Some(-32602));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
}

async fn futures_join<T: Send + 'static>(
    handles: impl Iterator<Item = tokio::task::JoinHandle<T>>,
) -> Vec<T> {
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("the task ends"));
    }
    out
}

#[tokio::test]
async fn a_replay_waits_for_the_running_round_within_the_bound() {
    let f = fixture(|b| b.once_wait(Duration::from_secs(3)));
    f.fx.delay_ms.store(400, Ordering::SeqCst);
    let last = first_round(&f.server, "act", args()).await;
    let (server, msg) = (f.server.clone(), last.clone());
    let running = tokio::spawn(async move { send_as(&server, &alice(), msg).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let replay = send_as(&f.server, &alice(), last).await;
    let first = running.await.unwrap();
    assert_eq!(bytes(&replay), bytes(&first));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_replay_past_the_wait_is_answered_busy_503_with_retry_after() {
    let f = fixture(|b| b.once_wait(Duration::from_millis(100)));
    f.fx.delay_ms.store(1000, Ordering::SeqCst);
    let last = first_round(&f.server, "act", args()).await;
    let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let h = http::spawn(addr, f.server.clone(), HttpConfig::default())
        .await
        .unwrap();
    let (server, msg) = (f.server.clone(), last.clone());
    let running = tokio::spawn(async move { send_as(&server, &alice(), msg).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    // in process: -32000 with data.retryAfter
    let busy = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(busy.error_code(), Some(-32000));
    assert_eq!(
        busy.error_object().unwrap().data,
        Some(json!({"retryAfter": 1}))
    );
    // over HTTP, anonymous callers' states are another principal's: use the anonymous one
    let anon_last = {
        let r = f
            .server
            .handle(call("act", args(), json!({})), &Principal::anonymous())
            .await
            .unwrap();
        let result = r.result_value().unwrap().clone();
        let key = result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        call(
            "act",
            args(),
            resume(
                result["requestState"].as_str().unwrap(),
                json!({ key: {"action": "accept", "content": {"go": true}} }),
            ),
        )
    };
    let server = f.server.clone();
    let msg = anon_last.clone();
    let anon_running =
        tokio::spawn(async move { server.handle(msg, &Principal::anonymous()).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut req = reqwest::Client::new().post(h.url());
    for (k, v) in mcp_tool_client::HttpTransport::mcp_headers(&anon_last) {
        req = req.header(k, v);
    }
    let resp = req
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(serde_json::to_vec(&anon_last).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32000);
    // both first presentations finish, once each
    assert!(running.await.unwrap().result_value().is_some());
    assert!(
        anon_running
            .await
            .unwrap()
            .unwrap()
            .result_value()
            .is_some()
    );
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 2);
    h.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_tool_error_releases_the_claim_and_a_retry_runs_again() {
    let f = fixture(|b| b);
    f.fx.fail_next.store(true, Ordering::SeqCst);
    let last = first_round(&f.server, "act", args()).await;
    let failed = send_as(&f.server, &alice(), last.clone()).await;
    let failed = failed
        .result_value()
        .expect("a tool error is a result")
        .clone();
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 0);
    assert_eq!(f.ledger.len(), 0, "released");
    // the retry of the same state runs the stage again, and that outcome is kept
    let retry = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(
        retry.result_value().unwrap()["content"][0]["text"],
        "once: run 1"
    );
    let again = send_as(&f.server, &alice(), last).await;
    assert_eq!(bytes(&again), bytes(&retry));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_panicking_stage_keeps_its_claim_and_never_runs_again() {
    let f = fixture(|b| b);
    f.fx.panic_next.store(true, Ordering::SeqCst);
    let last = first_round(&f.server, "act", args()).await;
    let panicked = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(panicked.error_code(), Some(-32603));
    // the kept outcome is stored by a spawned task; a replay waits for it if need be
    let replay = send_as(&f.server, &alice(), last).await;
    assert_eq!(replay.error_code(), Some(-32603));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 0);
    assert_eq!(f.ledger.len(), 1);
}

#[tokio::test]
async fn an_outcome_over_the_bound_is_answered_once_and_not_kept() {
    let f = fixture(|b| b.max_once_outcome_bytes(64));
    let last = first_round(&f.server, "act", args()).await;
    let first = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(
        first.result_value().unwrap()["content"][0]["text"],
        "once: run 1"
    );
    let replay = send_as(&f.server, &alice(), last).await;
    assert_eq!(replay.error_code(), Some(-32603));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn ledger_entries_expire_with_their_state() {
    const N: usize = 200;
    let f = fixture(|b| b);
    let mut lasts = Vec::new();
    for _ in 0..N {
        let last = first_round(&f.server, "act_briefly", json!({})).await;
        let r = send_as(&f.server, &alice(), last.clone()).await;
        assert!(r.result_value().is_some());
        lasts.push(last);
    }
    let held = f.ledger.len();
    assert_eq!(held, N);
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let swept = f.ledger.sweep(SystemTime::now());
    println!(
        "ledger: {N} single-use rounds with a 2 s state TTL held {held} entries; \
         {swept} swept after the TTL, {} left",
        f.ledger.len()
    );
    assert_eq!(swept, N);
    assert!(f.ledger.is_empty());
    // the state expired with its entry: a replay is refused by the seal, never run again
    let late = send_as(&f.server, &alice(), lasts.pop().unwrap()).await;
    assert_eq!(late.error_code(), Some(-32602));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), N);
}

#[test]
fn a_single_use_tool_cannot_run_as_a_task() {
    let info = mcp_tool_runtime::ToolInfo::new("x")
        .once(true)
        .task(mcp_tool_runtime::tasks::TaskSupport::Optional);
    assert!(info.once);
    struct T(mcp_tool_runtime::ToolInfo);
    impl mcp_tool_runtime::Tool for T {
        fn info(&self) -> mcp_tool_runtime::ToolInfo {
            self.0.clone()
        }
        fn step<'a>(
            &'a self,
            _cx: &'a mut ToolContext,
            _args: &'a RawValue,
            _state: Option<&'a RawValue>,
        ) -> mcp_tool_runtime::manual::BoxFuture<
            'a,
            Result<mcp_tool_runtime::manual::Step, ToolError>,
        > {
            Box::pin(async { Err(ToolError::Failed("never".into())) })
        }
    }
    let err = Server::builder(mcp_tool_runtime::protocol::Implementation::new("x", "1"))
        .tool(T(info))
        .build()
        .expect_err("refused");
    assert!(err.to_string().contains("single-use"), "{err}");
}

#[path = "../examples/hand_written.rs"]
#[allow(dead_code)]
mod hand_written;

/// The hand-written `book_table`, made single use with `ToolInfo::once`.
struct OnceBooking;

impl mcp_tool_runtime::Tool for OnceBooking {
    fn info(&self) -> mcp_tool_runtime::ToolInfo {
        mcp_tool_runtime::Tool::info(&hand_written::BookTable).once(true)
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> mcp_tool_runtime::manual::BoxFuture<'a, Result<mcp_tool_runtime::manual::Step, ToolError>>
    {
        mcp_tool_runtime::Tool::step(&hand_written::BookTable, cx, args, state)
    }
}

#[tokio::test]
async fn a_hand_written_single_use_tool_replays_an_intermediate_round_byte_for_byte() {
    let ledger = Arc::new(MemoryLedger::new());
    let server = Server::builder(mcp_tool_runtime::protocol::Implementation::new("once", "1"))
        .sealer(sealer("k", 9))
        .ledger(ledger.clone())
        .tool(OnceBooking)
        .build()
        .expect("server builds");
    let args = json!({"restaurant": "Chez Rust", "party_size": 4});
    let first = send_as(
        &server,
        &alice(),
        call("book_table", args.clone(), json!({})),
    )
    .await;
    let state = first.result_value().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = call(
        "book_table",
        args,
        resume(
            state,
            json!({"when": {"action": "accept", "content": {"date": "2026-08-01", "time": "19:30"}}}),
        ),
    );
    let a = send_as(&server, &alice(), second.clone()).await;
    assert_eq!(a.result_value().unwrap()["resultType"], "input_required");
    // a second run would seal a new state with a fresh random id: the same bytes mean none ran
    let b = send_as(&server, &alice(), second).await;
    assert_eq!(bytes(&a), bytes(&b));
    assert_eq!(ledger.len(), 1);
}

/// A shared ledger that is down (its database restarting) and comes back: a [`MemoryLedger`]
/// behind a switch.
struct Flaky {
    down: AtomicBool,
    inner: MemoryLedger,
}

impl mcp_tool_runtime::store::Ledger for Flaky {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> mcp_tool_runtime::manual::BoxFuture<
        'a,
        Result<mcp_tool_runtime::store::Claim, mcp_tool_runtime::store::LedgerError>,
    > {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(Err(
                mcp_tool_runtime::store::LedgerError("connection refused".into()),
            )));
        }
        self.inner.claim(id, principal, expires)
    }
    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> mcp_tool_runtime::manual::BoxFuture<'a, Result<(), mcp_tool_runtime::store::LedgerError>>
    {
        self.inner.complete(id, outcome)
    }
    fn release<'a>(
        &'a self,
        id: &'a str,
    ) -> mcp_tool_runtime::manual::BoxFuture<'a, Result<(), mcp_tool_runtime::store::LedgerError>>
    {
        self.inner.release(id)
    }
    fn remove_expired(
        &self,
        now: SystemTime,
    ) -> mcp_tool_runtime::manual::BoxFuture<'_, Result<u64, mcp_tool_runtime::store::LedgerError>>
    {
        self.inner.remove_expired(now)
    }
}

#[tokio::test]
async fn a_ledger_that_is_down_answers_busy_runs_nothing_and_a_retry_runs_once() {
    let flaky = Arc::new(Flaky {
        down: AtomicBool::new(true),
        inner: MemoryLedger::new(),
    });
    let f = fixture(|b| b.ledger(flaky.clone()));
    let last = first_round(&f.server, "act", args()).await;
    for _ in 0..3 {
        let r = send_as(&f.server, &alice(), last.clone()).await;
        let e = serde_json::to_value(&r).unwrap()["error"].clone();
        assert_eq!(e["code"], -32000, "{e}");
        assert_eq!(e["data"]["retryAfter"], 1, "{e}");
    }
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 0, "nothing ran");
    // the store is back: the retry runs the stage once, later replays get its answer
    flaky.down.store(false, Ordering::SeqCst);
    let ran = send_as(&f.server, &alice(), last.clone()).await;
    assert_eq!(
        ran.result_value().unwrap()["content"][0]["text"],
        "once: run 1"
    );
    let again = send_as(&f.server, &alice(), last).await;
    assert_eq!(bytes(&again), bytes(&ran));
    assert_eq!(f.fx.runs.load(Ordering::SeqCst), 1);
}
