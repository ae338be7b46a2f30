//! The store suite: what every [`Store`] backend must do, for tasks ([`TaskStore`]) and for
//! the ledger of single-use rounds ([`Ledger`]), run against each of them (memory in
//! tests/tests/tasks.rs, SQLite in store_sqlite.rs, PostgreSQL in store_postgres.rs, Redis
//! in store_redis.rs). `a` and `b` are two handles on the same stored data: the same value
//! for the in-process store, two connections (as two replicas or two processes would hold)
//! for a database, so that compare-and-swap and claims are shown to hold *across* writers.
//! `prefix` keeps the ids of one run apart from another's on a shared database.

use std::time::{Duration, SystemTime};

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::store::Store;
use mcp_tool_runtime::store::{Claim, Ledger};
use mcp_tool_runtime::tasks::{Counted, StoreError, StoredTask, TaskAllowance, TaskStore};
use serde_json::{Value, json};

fn task(id: &str, version: u64, expires_at_ms: Option<u64>) -> StoredTask {
    StoredTask {
        id: id.to_owned(),
        version,
        expires_at_ms,
        body: format!("{{\"v\":{version},\"id\":\"{id}\"}}"),
    }
}

/// Runs every check of the suite, tasks and ledger; panics (the test fails) on the first
/// broken promise.
pub async fn run(a: &dyn Store, b: &dyn Store, prefix: &str) {
    run_tasks(a, b, prefix).await;
    run_ledger(a, b, prefix).await;
}

/// The task half of the suite.
pub async fn run_tasks(a: &dyn TaskStore, b: &dyn TaskStore, prefix: &str) {
    create_get_and_exists(a, b, prefix).await;
    compare_and_swap(a, b, prefix).await;
    racing_writers(a, b, prefix).await;
    expiry(a, b, prefix).await;
    counted_creation(a, b, prefix).await;
}

/// A store that counts ([`TaskStore::create_counted`]) counts across its handles: creates
/// racing from `a` and `b` for one owner store exactly `per_owner` tasks, the total holds
/// across owners, expired tasks do not count, and a taken id is `Exists`. A store that does
/// not count says so and stores nothing.
async fn counted_creation(a: &dyn TaskStore, b: &dyn TaskStore, p: &str) {
    let now = now_ms();
    // other checks of the suite stored tasks too: the total is far above them here
    let allowance = TaskAllowance {
        per_owner: 5,
        total: 100_000,
        now_ms: now,
    };
    let probe = task(&format!("{p}-counted-probe"), 1, Some(now + 60_000));
    let owner = format!("{p}-owner");
    match a.create_counted(&probe, &owner, allowance).await {
        Ok(Counted::NotCounted) => {
            assert!(a.get(&probe.id).await.expect("get").is_none());
            return;
        }
        other => assert_eq!(other, Ok(Counted::Stored)),
    }
    // an expired task of the owner does not count
    let old = task(&format!("{p}-counted-old"), 1, Some(now - 1));
    let _ = a
        .create_counted(
            &old,
            &owner,
            TaskAllowance {
                now_ms: now - 10,
                ..allowance
            },
        )
        .await;
    let racing = (0..12).map(|i| {
        let h = if i % 2 == 0 { a } else { b };
        let t = task(&format!("{p}-counted-{i}"), 1, Some(now + 60_000));
        let owner = owner.clone();
        async move { h.create_counted(&t, &owner, allowance).await }
    });
    let got = futures_util::future::join_all(racing).await;
    let stored = got.iter().filter(|c| **c == Ok(Counted::Stored)).count();
    assert_eq!(stored, 4, "one owner's allowance across handles: {got:?}");
    assert!(
        got.iter()
            .all(|c| matches!(c, Ok(Counted::Stored | Counted::OwnerFull))),
        "{got:?}"
    );
    // the total counts every unexpired task, whoever stored it: a store holding more is full
    // for everyone, on either handle
    let full = TaskAllowance {
        total: 5,
        ..allowance
    };
    for (i, h) in [a, b].into_iter().enumerate() {
        let t = task(&format!("{p}-counted-full-{i}"), 1, None);
        assert_eq!(
            h.create_counted(&t, &format!("{p}-another"), full).await,
            Ok(Counted::StoreFull)
        );
        assert!(a.get(&t.id).await.expect("get").is_none());
    }
    // a taken id
    let more = TaskAllowance {
        per_owner: 100,
        total: 100,
        ..allowance
    };
    assert_eq!(
        b.create_counted(&probe, "someone", more).await,
        Err(StoreError::Exists)
    );
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The request `_meta` of a client that speaks tasks.
fn tasks_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    })
}

/// A `slow_compute` task created on `server` by `who`: the JSON-RPC answer.
async fn start_task(server: &Server, who: &str) -> Value {
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow_compute", "arguments": {"seconds": 0.01, "label": who},
        "_meta": tasks_meta()}});
    server
        .handle(msg, &Principal::named(who))
        .await
        .expect("a response")
        .to_value()
}

/// The task allowances hold across replicas sharing a store: `a` and `b` are two servers on
/// one store (the fixture's tools), made with `max_tasks_per_principal` 3 and
/// `max_stored_tasks` 5. A principal's tasks count on both (a fourth is refused on either),
/// and so does the total. `prefix` names the principals of this run.
pub async fn allowances_hold_across_replicas(a: &Server, b: &Server, prefix: &str) {
    let alice = format!("{prefix}-alice");
    for (n, server) in [a, a, b].into_iter().enumerate() {
        let r = start_task(server, &alice).await;
        assert_eq!(r["result"]["resultType"], "task", "task {n}: {r}");
    }
    for server in [b, a] {
        let r = start_task(server, &alice).await;
        assert_eq!(r["error"]["code"], -32000, "a fourth task: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("this caller")),
            "{r}"
        );
    }
    let bob = format!("{prefix}-bob");
    for server in [b, a] {
        let r = start_task(server, &bob).await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
    }
    let r = start_task(a, &format!("{prefix}-carol")).await;
    assert_eq!(r["error"]["code"], -32000, "a sixth task in the store: {r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("stored")),
        "{r}"
    );
}

async fn create_get_and_exists(a: &dyn TaskStore, b: &dyn TaskStore, p: &str) {
    let id = format!("{p}-create");
    let t = task(&id, 1, Some(u64::MAX / 2));
    a.create(&t).await.expect("create");
    // visible through the other handle as soon as `create` returned
    assert_eq!(b.get(&id).await.expect("get"), Some(t.clone()));
    assert_eq!(b.create(&task(&id, 1, None)).await, Err(StoreError::Exists));
    assert_eq!(a.get(&format!("{p}-missing")).await.expect("get"), None);
    // a body with quotes, newlines and non-ASCII text comes back byte for byte
    let odd = StoredTask {
        body: "{\"text\":\"l\\u00e9gume \\\"quoted\\\"\\nnext\",\"π\":3.14}".into(),
        ..task(&format!("{p}-odd"), 1, None)
    };
    a.create(&odd).await.expect("create");
    assert_eq!(b.get(&odd.id).await.expect("get"), Some(odd));
}

async fn compare_and_swap(a: &dyn TaskStore, b: &dyn TaskStore, p: &str) {
    let id = format!("{p}-cas");
    a.create(&task(&id, 1, Some(1_000))).await.expect("create");
    assert!(b.swap(&task(&id, 2, Some(2_000))).await.expect("swap"));
    // a writer that read version 1 loses, through either handle
    assert!(!a.swap(&task(&id, 2, Some(3_000))).await.expect("swap"));
    assert!(!b.swap(&task(&id, 2, None)).await.expect("swap"));
    // nor may a writer skip a version, or use version 0
    assert!(!a.swap(&task(&id, 4, None)).await.expect("swap"));
    assert!(!a.swap(&task(&id, 0, None)).await.expect("swap"));
    let got = a.get(&id).await.expect("get").expect("stored");
    assert_eq!(got, task(&id, 2, Some(2_000)));
    // the expiry may be cleared by a swap
    assert!(a.swap(&task(&id, 3, None)).await.expect("swap"));
    assert_eq!(
        b.get(&id)
            .await
            .expect("get")
            .expect("stored")
            .expires_at_ms,
        None
    );
    // a task that is not stored is never swapped into existence
    let gone = format!("{p}-never-created");
    assert!(!a.swap(&task(&gone, 2, None)).await.expect("swap"));
    assert_eq!(a.get(&gone).await.expect("get"), None);
}

async fn racing_writers(a: &dyn TaskStore, b: &dyn TaskStore, p: &str) {
    // 20 rounds of two writers racing from the same version on different handles: exactly
    // one wins each round, and the stored version counts the winners.
    let id = format!("{p}-race");
    a.create(&task(&id, 1, None)).await.expect("create");
    for v in 2..22 {
        let (x, y) = (task(&id, v, None), task(&id, v, Some(v)));
        let (wa, wb) = tokio::join!(a.swap(&x), b.swap(&y));
        let (wa, wb) = (wa.expect("swap"), wb.expect("swap"));
        assert!(wa ^ wb, "version {v}: exactly one writer wins ({wa}, {wb})");
        let got = a.get(&id).await.expect("get").expect("stored");
        assert_eq!(got, if wa { x } else { y });
    }
    // racing creates of one id: exactly one succeeds
    let id = format!("{p}-race-create");
    let (first, second) = (task(&id, 1, None), task(&id, 1, Some(5)));
    let (ca, cb) = tokio::join!(a.create(&first), b.create(&second));
    assert!(
        ca.is_ok() ^ cb.is_ok(),
        "exactly one create wins: {ca:?} {cb:?}"
    );
    for r in [ca, cb] {
        assert!(matches!(r, Ok(()) | Err(StoreError::Exists)), "{r:?}");
    }
}

async fn expiry(a: &dyn TaskStore, b: &dyn TaskStore, p: &str) {
    // far in the past, so that no other run's tasks on a shared database are touched
    let base = 1_000
        + u64::from(
            p.bytes()
                .fold(0u16, |h, c| h.wrapping_mul(31).wrapping_add(u16::from(c))),
        );
    let (old, edge, later, never) = (
        format!("{p}-old"),
        format!("{p}-edge"),
        format!("{p}-later"),
        format!("{p}-never"),
    );
    a.create(&task(&old, 1, Some(base - 1)))
        .await
        .expect("create");
    a.create(&task(&edge, 1, Some(base))).await.expect("create");
    a.create(&task(&later, 1, Some(base + 1)))
        .await
        .expect("create");
    a.create(&task(&never, 1, None)).await.expect("create");
    // strictly before `now_ms` goes; at `now_ms` stays
    assert!(b.remove_expired(base).await.expect("remove") >= 1);
    assert_eq!(a.get(&old).await.expect("get"), None);
    assert!(a.get(&edge).await.expect("get").is_some());
    assert!(a.get(&later).await.expect("get").is_some());
    assert_eq!(b.remove_expired(base).await.expect("remove"), 0);
    assert!(b.remove_expired(base + 2).await.expect("remove") >= 2);
    assert_eq!(a.get(&later).await.expect("get"), None);
    assert!(
        a.get(&never).await.expect("get").is_some(),
        "no expiry, never collected"
    );
    // an expired id is free again
    a.create(&task(&old, 1, None)).await.expect("re-create");
}

/// The ledger half of the suite: atomic claims across handles, stored outcomes byte for
/// byte, release, principals kept apart, and expiry.
pub async fn run_ledger(a: &dyn Ledger, b: &dyn Ledger, p: &str) {
    let later = SystemTime::now() + Duration::from_secs(600);
    let id = format!("{p}-claim");
    assert_eq!(a.claim(&id, "alice", later).await, Ok(Claim::Claimed));
    // held: a second presentation, on either handle, sees it running
    assert_eq!(b.claim(&id, "alice", later).await, Ok(Claim::Running));
    assert_eq!(a.claim(&id, "alice", later).await, Ok(Claim::Running));
    // the outcome comes back byte for byte (any bytes, not only text)
    let outcome: Vec<u8> = b"{\"result\":\"l\xc3\xa9gume\"}\x00\xff\xfe"
        .iter()
        .copied()
        .chain((0..=255u8).rev())
        .collect();
    a.complete(&id, outcome.clone()).await.expect("complete");
    assert_eq!(
        b.claim(&id, "alice", later).await,
        Ok(Claim::Done(outcome.clone()))
    );
    // another principal never gets the outcome
    assert_eq!(b.claim(&id, "mallory", later).await, Ok(Claim::Running));
    // a done entry is never released
    b.release(&id).await.expect("release");
    assert_eq!(a.claim(&id, "alice", later).await, Ok(Claim::Done(outcome)));

    // a released claim may be taken again, through the other handle
    let id = format!("{p}-release");
    assert_eq!(a.claim(&id, "alice", later).await, Ok(Claim::Claimed));
    a.release(&id).await.expect("release");
    assert_eq!(b.claim(&id, "alice", later).await, Ok(Claim::Claimed));
    b.complete(&id, b"second".to_vec()).await.expect("complete");
    assert_eq!(
        a.claim(&id, "alice", later).await,
        Ok(Claim::Done(b"second".to_vec()))
    );

    // 32 racing claims of one id over both handles: exactly one wins
    for round in 0..5 {
        let id = format!("{p}-race-{round}");
        let claims = (0..32).map(|i| {
            let h = if i % 2 == 0 { a } else { b };
            let id = id.clone();
            async move { h.claim(&id, "alice", later).await }
        });
        let got = futures_util::future::join_all(claims).await;
        let won = got.iter().filter(|c| **c == Ok(Claim::Claimed)).count();
        assert_eq!(won, 1, "round {round}: exactly one claim wins: {got:?}");
        assert!(
            got.iter()
                .all(|c| matches!(c, Ok(Claim::Claimed | Claim::Running))),
            "{got:?}"
        );
    }

    // an entry lives until its expiry; then the id is free again and can be removed
    let id = format!("{p}-expiry");
    let soon = SystemTime::now() + Duration::from_millis(1_500);
    assert_eq!(a.claim(&id, "alice", soon).await, Ok(Claim::Claimed));
    a.complete(&id, b"x".to_vec()).await.expect("complete");
    assert_eq!(
        b.claim(&id, "alice", soon).await,
        Ok(Claim::Done(b"x".to_vec()))
    );
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    b.remove_expired(SystemTime::now())
        .await
        .expect("remove_expired");
    assert_eq!(a.claim(&id, "alice", later).await, Ok(Claim::Claimed));
    a.release(&id).await.expect("release");
}
