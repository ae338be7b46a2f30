//! The task store suite: what every [`TaskStore`] backend must do, run against each of them
//! (memory in tests/tests/tasks.rs, PostgreSQL in tasks_postgres.rs, SQLite in
//! tasks_sqlite.rs). `a` and `b` are two handles on the same stored tasks: the same value
//! for the in-process store, two connections (as two replicas or two processes would hold)
//! for a database, so that compare-and-swap is shown to hold *across* writers. `prefix`
//! keeps the ids of one run apart from another's on a shared database.

use mcp_tool_runtime::tasks::{StoreError, StoredTask, TaskStore};

fn task(id: &str, version: u64, expires_at_ms: Option<u64>) -> StoredTask {
    StoredTask {
        id: id.to_owned(),
        version,
        expires_at_ms,
        body: format!("{{\"v\":{version},\"id\":\"{id}\"}}"),
    }
}

/// Runs every check of the suite; panics (the test fails) on the first broken promise.
pub async fn run(a: &dyn TaskStore, b: &dyn TaskStore, prefix: &str) {
    create_get_and_exists(a, b, prefix).await;
    compare_and_swap(a, b, prefix).await;
    racing_writers(a, b, prefix).await;
    expiry(a, b, prefix).await;
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
