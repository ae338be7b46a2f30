//! Tasks and single-use claims on the embedded durable store: SQLite, one file in WAL mode
//! (`mcp-tool-store-sqlite`).
//!
//! - the store suite, tasks and ledger (`mcp_tool_tests::store_suite::run`, as memory and
//!   PostgreSQL run it) on two stores opened on one file, each with its own connection (as
//!   two processes);
//! - a single-use round replayed on another replica sharing the file runs nothing there
//!   (`mcp_tool_tests::once_replicas`);
//! - replicas sharing the file: a replica killed mid-task is taken over by another;
//! - a task survives a restart of `serve` (`--store sqlite:PATH`): `serve` is started over
//!   stdio, a `slow_job` task is created, `serve` is killed (SIGKILL, no clean shutdown),
//!   started again on the same file, and the task is found and completes there.
//! - a single-use round survives a restart of `serve` too: `donate` confirmed, `serve`
//!   killed and started again on the same files, the confirmation replayed: the same
//!   answer, the balance donated once (the ledger is in the `--store` file, not in memory).
//! - the change feed (`mcp_tool_tests::feed_suite`): two stores on one file, a hub on each,
//!   a burst crosses once and in order, foreign rows are dropped; the latency of a change
//!   (publish on A → receive on B, 1,000 changes) and the CPU an idle poller costs.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::tasks::TaskConfig;
use mcp_tool_store_sqlite::SqliteStore;
use mcp_tool_tests::fixture;
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_store_passes_the_store_suite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.sqlite3");
    let a = SqliteStore::open(&file).await.expect("open");
    let b = SqliteStore::open(&file)
        .await
        .expect("open a second connection");
    mcp_tool_tests::store_suite::run(&a, &b, "sqlite").await;
    // and what was written is in the file: a third connection, opened afterwards, sees it
    drop((a, b));
    let c = SqliteStore::open(&file).await.expect("reopen");
    use mcp_tool_runtime::store::{Claim, Ledger};
    use mcp_tool_runtime::tasks::TaskStore;
    assert!(c.get("sqlite-create").await.unwrap().is_some());
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    assert_eq!(
        c.claim("sqlite-release", "alice", later).await,
        Ok(Claim::Done(b"second".to_vec()))
    );
    assert_eq!(
        c.schema_version().await.unwrap(),
        SqliteStore::SCHEMA_VERSION
    );
}

/// Two replicas, each with its own store opened on one file (two processes would hold the
/// same): a single-use state confirmed on one and replayed on the other runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_use_state_replayed_on_another_replica_of_the_file_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("store.sqlite3");
    let a = SqliteStore::open(&file).await.expect("open");
    let b = SqliteStore::open(&file).await.expect("open again");
    let f = mcp_tool_tests::once_replicas::a_replay_on_another_replica_runs_nothing(
        Arc::new(a),
        Arc::new(b),
    )
    .await;
    println!(
        "sqlite, two replicas on one file: {} racing presentations, {} busy, the effect ran {} time(s), slowest answer {} ms",
        f.racing,
        f.busy,
        f.effects,
        f.slowest.as_millis()
    );
}

fn sealer() -> Sealer {
    Sealer::new(
        Keyring::new("fleet", vec![9u8; 32]).expect("keyring"),
        SealConfig::default(),
    )
}

async fn replica(file: &std::path::Path, config: TaskConfig) -> Server {
    let store = SqliteStore::open(file).await.expect("open");
    fixture::builder(Some(sealer()))
        .store(Arc::new(store))
        .task_config(config)
        .build()
        .expect("server")
}

async fn rpc(s: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.handle(msg, &Principal::named("carol"))
        .await
        .expect("a response")
        .to_value()
}

async fn wait_for(s: &Server, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = rpc(s, "tasks/get", json!({"taskId": id})).await;
        let t = r["result"].clone();
        let st = t["status"].as_str().unwrap_or("").to_owned();
        if ["completed", "failed", "cancelled"].contains(&st.as_str()) {
            return t;
        }
        assert!(Instant::now() < deadline, "task {id} stuck in {st}: {r}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Two replicas on one file: a principal's task allowance and the store's total count the
/// tasks of both (each counted on its own, the fleet allowed twice as much).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_allowances_hold_across_replicas_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.sqlite3");
    let config = TaskConfig::default()
        .with_max_tasks_per_principal(3)
        .with_max_stored_tasks(5);
    let a = replica(&file, config.clone()).await;
    let b = replica(&file, config).await;
    mcp_tool_tests::store_suite::allowances_hold_across_replicas(&a, &b, "sqlite").await;
}

/// A replica (its own runtime, its own connection to the file) starts a task and dies
/// mid-run; another replica on the same file finds it with an expired lease and runs it.
#[test]
fn a_killed_replica_is_taken_over_through_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tasks.sqlite3");
    let config = TaskConfig::default()
        .with_poll_interval(Duration::from_millis(20))
        .with_lease(Duration::from_millis(400));
    let (f, c) = (file.clone(), config.clone());
    let id = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let id = rt.block_on(async move {
            let doomed = replica(&f, c).await;
            let r = rpc(
                &doomed,
                "tools/call",
                json!({"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "survived"}}),
            )
            .await;
            assert_eq!(r["result"]["resultType"], "task", "{r}");
            r["result"]["taskId"].as_str().unwrap().to_owned()
        });
        rt.shutdown_background();
        id
    })
    .join()
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let survivor = replica(&file, config).await;
        let done = wait_for(&survivor, &id).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(
            done["result"]["content"][0]["text"],
            "Computed survived after 0.3s"
        );
    });
}

/// `serve` over stdio, on the given files; stopped with SIGKILL on drop.
struct Serve {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Serve {
    fn start(dir: &std::path::Path) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_example_serve"))
            .arg("--db")
            .arg(dir.join("notes.sqlite3"))
            .arg("--store")
            .arg(format!("sqlite:{}", dir.join("tasks.sqlite3").display()))
            // the same state key across the restart, as a real deployment has
            .env("MCP_TOOL_STATE_KEY", format!("k1:{}", "ab".repeat(32)))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Serve {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn rpc(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta();
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").expect("write to serve");
        self.stdin.flush().expect("flush");
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read from serve");
            assert!(n > 0, "serve closed its output");
            let v: Value = serde_json::from_str(&line).expect("a JSON line");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn kill(mut self) {
        self.child.kill().expect("SIGKILL serve");
        self.child.wait().expect("reap serve");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_task_survives_a_restart_of_serve_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Serve::start(dir.path());
    let r = first.rpc(
        "tools/call",
        json!({"name": "slow_job", "arguments": {"seconds": 1.5, "label": "durable"}}),
    );
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"].as_str().unwrap().to_owned();
    let t = first.rpc("tasks/get", json!({"taskId": id}));
    assert_eq!(t["result"]["status"], "working", "{t}");
    // killed mid-run: no clean shutdown, the lease is left to expire
    first.kill();

    let restarted = Instant::now();
    let mut second = Serve::start(dir.path());
    let found = second.rpc("tasks/get", json!({"taskId": id}));
    assert!(
        found["result"]["status"].is_string(),
        "the task was not found after the restart: {found}"
    );
    let found_after = restarted.elapsed();
    let deadline = Instant::now() + Duration::from_secs(60);
    let done = loop {
        let t = second.rpc("tasks/get", json!({"taskId": id}));
        let st = t["result"]["status"].as_str().unwrap_or("").to_owned();
        if ["completed", "failed", "cancelled"].contains(&st.as_str()) {
            break t["result"].clone();
        }
        assert!(Instant::now() < deadline, "task stuck in {st}: {t}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Finished durable after 1.5s"
    );
    eprintln!(
        "task survived the restart: found {found_after:?} after serve started again, completed after {:?} (lease 10 s + 1.5 s of work)",
        restarted.elapsed()
    );
    second.kill();
}

fn balance(serve: &mut Serve) -> i64 {
    let r = serve.rpc("tools/call", json!({"name": "balance", "arguments": {}}));
    r["result"]["structuredContent"]["balance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no balance: {r}"))
}

#[test]
fn a_donation_replayed_after_a_restart_of_serve_on_sqlite_donates_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Serve::start(dir.path());
    assert_eq!(balance(&mut first), 0);
    let args = json!({"amount": 5});
    let r = first.rpc(
        "tools/call",
        json!({"name": "donate", "arguments": args.clone()}),
    );
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let state = r["result"]["requestState"].as_str().unwrap().to_owned();
    let key = r["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap();
    let confirm = json!({
        "name": "donate",
        "arguments": args,
        "requestState": state,
        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
    });
    let donated = first.rpc("tools/call", confirm.clone());
    assert_eq!(
        donated["result"]["structuredContent"]["donated"], true,
        "{donated}"
    );
    assert_eq!(balance(&mut first), 5);
    first.kill();

    let restarted = Instant::now();
    let mut second = Serve::start(dir.path());
    let replay = second.rpc("tools/call", confirm);
    assert_eq!(
        replay["result"].to_string(),
        donated["result"].to_string(),
        "the replay after the restart got another answer"
    );
    assert_eq!(balance(&mut second), 5, "the replay donated again");
    println!(
        "donate replayed after a restart of serve: the stored answer ({} bytes) {} ms after serve started again, balance 5 (donated once)",
        donated["result"].to_string().len(),
        restarted.elapsed().as_millis()
    );
    second.kill();
}

mod fleet;

/// Exactly once across processes on the embedded default: 64 concurrent presentations of
/// `donate`'s confirmed round over 3 `serve` processes sharing one SQLite store file donate
/// once, and every answer is the same bytes (`fleet::replay_across_replicas`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_donation_from_64_replays_over_3_replicas_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    fleet::replay_across_replicas(
        env!("CARGO_BIN_EXE_example_serve"),
        dir.path(),
        &["--store", &store],
        "sqlite",
    )
    .await;
}

/// The change feed on one file: two stores (as two processes), a hub connected to each
/// one's feed. The suite's burst (100 changes) and foreign bytes; then the latency over
/// 1,000 changes (one every 5 ms) and the CPU of idle pollers (20 more feeds listening for
/// 5 s, their threads' time on the CPU). Prints the figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_cross_processes_through_the_sqlite_feed() {
    use mcp_tool_runtime::store::Changes;
    use mcp_tool_store_sqlite::FeedOptions;
    use mcp_tool_tests::feed_suite;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("feed.sqlite3");
    let (s1, s2) = (
        SqliteStore::open(&file).await.expect("open"),
        SqliteStore::open(&file).await.expect("open"),
    );
    let interval = FeedOptions::default().interval;
    let mut p = feed_suite::connect(
        Arc::new(s1.feed().await.expect("feed")),
        Arc::new(s2.feed().await.expect("feed")),
    )
    .await;
    feed_suite::once_in_order(&mut p, "sqlite", 100, interval * 4).await;
    let (sent, arrived) = feed_suite::flood(&mut p, "sqlite", 2000).await;
    println!(
        "sqlite feed: 2,000 foreign messages (half of them 4,000 bytes) sent in {} ms; a change after them arrived {} ms later",
        sent.as_millis(),
        arrived.as_millis()
    );
    let lat = feed_suite::latency(&mut p, "sqlite", 1000, Duration::from_millis(5)).await;
    println!(
        "sqlite feed (poll every {} ms): publish on A -> receive on B over {} changes: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {:.0} bytes per change",
        interval.as_millis(),
        lat.n,
        lat.p50,
        lat.p99,
        lat.max,
        lat.bytes
    );
    // bounded by the interval (plus scheduling on a loaded machine)
    assert!(lat.p99 < (interval * 10).as_secs_f64() * 1000.0, "{lat:?}");

    // The cost of idle pollers: 20 more listening feeds, 5 s with nothing published.
    let mut idle = Vec::new();
    for _ in 0..20 {
        let hub = Changes::new();
        hub.connect(Arc::new(s1.feed().await.expect("feed")))
            .await
            .expect("listen");
        idle.push(hub);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pollers = 22.0;
    let before = feed_suite::cpu_of_threads("mcp-sqlite-feed");
    let window = Duration::from_secs(5);
    tokio::time::sleep(window).await;
    let used = feed_suite::cpu_of_threads("mcp-sqlite-feed") - before;
    let per_poller = used.as_secs_f64() / pollers / window.as_secs_f64();
    println!(
        "sqlite feed: an idle poller uses {:.3} ms of CPU per second ({:.4} % of a core; {} pollers, {} ms over {} s)",
        per_poller * 1000.0,
        per_poller * 100.0,
        pollers,
        used.as_millis(),
        window.as_secs()
    );
    assert!(
        per_poller < 0.01,
        "an idle poller uses more than 1 % of a core"
    );

    // the rows are pruned: a feed with a short retention empties the table
    let short = s1
        .feed_with(FeedOptions {
            interval: Duration::from_millis(20),
            retention: Duration::from_millis(200),
            batch: 1000,
        })
        .await
        .expect("feed");
    let hub = Changes::new();
    hub.connect(Arc::new(short)).await.expect("listen");
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let rows: i64 = rusqlite_count(&file);
    assert_eq!(rows, 0, "rows older than the retention are pruned");
    drop((idle, hub, p));
}

/// Rows in the feed's table.
fn rusqlite_count(file: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(file).expect("open");
    conn.query_row("SELECT count(*) FROM mcp_changes", [], |r| r.get(0))
        .expect("count")
}

/// Two `serve` replicas on one SQLite file (`--store sqlite:PATH`): a client listening on B
/// hears a note edited and tasks driven through A (`fleet::listen`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_another_replica_through_sqlite() {
    let exe = env!("CARGO_BIN_EXE_example_serve");
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.sqlite3").display());
    fleet::listen::a_listener_on_b_hears_what_is_done_through_a(
        exe,
        dir.path(),
        &["--store", &url],
        "sqlite",
    )
    .await;
}
