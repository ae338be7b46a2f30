//! Tasks and single-use claims on a real shared store: PostgreSQL (Debian's `postgresql`
//! package), started by this test in a temporary data directory on a free loopback port and
//! stopped at the end. Replicas are `Server`s with the same keyring, each with its own
//! connection to the database. When PostgreSQL is not installed, the test installs it with
//! apt-get (as root); only when that is impossible does it skip, loudly.
//!
//! - the store suite, tasks and ledger (`mcp_tool_tests::store_suite::run`) on two stores
//!   connected to one database (two replicas);
//! - a single-use round replayed on another replica runs nothing there
//!   (`mcp_tool_tests::once_replicas`);
//! - schema versions: a newer schema is refused, replicas connecting at once all succeed
//!   (one migrates, the others wait for its lock), an unversioned tasks table of the
//!   earlier store is adopted;
//! - a restart of the database: tasks and claims fail fast during the outage and work
//!   again after it, on the same store value.
//!
//! The change feed (`mcp_tool_tests::feed_suite`, its own PostgreSQL): `LISTEN/NOTIFY`
//! between two stores, once and in order, another table's channel apart, the latency over
//! 1,000 changes, and a restart of the database survived; over TLS in the TLS test.
//!
//! The store's TLS (issue 18, item 13): a second server runs with `ssl=on`, a certificate
//! from a CA made in the test (rcgen) and `hostssl` as its only TCP rule, and the store
//! connects to it verifying that CA; the plain server shows that a store asking for TLS
//! refuses a server without it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_tool_runtime::Principal;
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::server::Server;
use mcp_tool_runtime::store::{Claim, Ledger};
use mcp_tool_runtime::tasks::{StoreError, StoredTask, TaskConfig, TaskStore};
use mcp_tool_store_postgres::{ConnectError, PostgresStore, Roots, Tls};
use mcp_tool_tests::fixture;
use mcp_tool_tests::services::{free_port, install_debian_package, is_root};
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A PostgreSQL server of our own; stopped and deleted on drop.
struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres_user: bool,
    /// The server's options (`pg_ctl -o`), to start it again after [`Postgres::stop`].
    opts: String,
}

fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions.pop()
}

/// A server certificate and its key, PEM.
struct ServerTls {
    cert: String,
    key: String,
}

impl Postgres {
    fn start() -> Result<Postgres, String> {
        Self::start_with(None)
    }

    /// With `tls`: `ssl=on` with that certificate, and TCP connections only over TLS
    /// (`hostssl`; a plaintext one finds no `pg_hba.conf` rule).
    fn start_with(tls: Option<&ServerTls>) -> Result<Postgres, String> {
        let bin = match find_bin() {
            Some(b) => b,
            None => {
                install_debian_package("postgresql")?;
                find_bin().ok_or("postgresql installed but no initdb found")?
            }
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("mcp-tasks-pg-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        // PostgreSQL refuses to run as root: run it as the package's `postgres` user.
        let as_postgres_user = is_root();
        if as_postgres_user {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .map_err(|e| e.to_string())?
                .success();
            if !ok {
                return Err("cannot chown the data directory to postgres".into());
            }
        }
        let pg = Postgres {
            bin,
            dir,
            port: free_port(),
            as_postgres_user,
            opts: String::new(),
        };
        pg.run(
            "initdb",
            &[
                "-D",
                pg.data(),
                "-U",
                "mcp",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "-N",
            ],
        )?;
        let mut pg = pg;
        let mut opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            pg.port,
            pg.data()
        );
        if let Some(tls) = tls {
            // PostgreSQL's defaults: server.crt and server.key in the data directory, the
            // key readable by its owner only.
            pg.write_owned("server.crt", &tls.cert, 0o644)?;
            pg.write_owned("server.key", &tls.key, 0o600)?;
            pg.write_owned(
                "pg_hba.conf",
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
                0o600,
            )?;
            opts.push_str(" -c ssl=on");
        }
        pg.opts = opts;
        pg.start_again()?;
        Ok(pg)
    }

    /// Starts the (stopped) server again on the same data directory and port.
    fn start_again(&self) -> Result<(), String> {
        let log = self.dir.join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &self.opts,
                "-w",
                "-t",
                "60",
                "start",
            ],
        )
    }

    /// Stops the server at once (`-m immediate`: every connection is cut, as in a crash).
    fn stop(&self) -> Result<(), String> {
        self.run(
            "pg_ctl",
            &["-D", self.data(), "-m", "immediate", "-w", "stop"],
        )
    }

    /// Writes a file into the data directory, owned by the server's user, with `mode`.
    fn write_owned(&self, name: &str, text: &str, mode: u32) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{name}: {e}"))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{name}: {e}"))?;
        if self.as_postgres_user {
            let ok = Command::new("chown")
                .arg("postgres:postgres")
                .arg(&path)
                .status()
                .map_err(|e| e.to_string())?
                .success();
            if !ok {
                return Err(format!("cannot chown {name} to postgres"));
            }
        }
        Ok(())
    }

    fn data(&self) -> &str {
        self.dir.to_str().expect("utf-8 temp dir")
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(tool);
        let mut cmd = if self.as_postgres_user {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(Path::new("/"))
            .output()
            .map_err(|e| format!("{tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Runs `sql` with `psql` (as the `mcp` superuser); its unaligned output.
    fn psql(&self, sql: &str) -> Result<String, String> {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
            ])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "mcp",
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(format!("psql: {}", String::from_utf8_lossy(&out.stderr)))
        }
    }

    fn config(&self) -> String {
        format!("host=127.0.0.1 port={} user=mcp dbname=postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &["-D", self.data(), "-m", "immediate", "-w", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn sealer() -> Sealer {
    Sealer::new(
        Keyring::new("fleet", vec![9u8; 32]).expect("keyring"),
        SealConfig::default(),
    )
}

async fn replica(pg: &str, table: &str, config: TaskConfig) -> Server {
    replica_with(pg, table, config, Tls::Disable).await
}

async fn replica_with(pg: &str, table: &str, config: TaskConfig, tls: Tls) -> Server {
    let store = PostgresStore::connect(pg, table, tls)
        .await
        .expect("connect");
    fixture::builder(Some(sealer()))
        .store(Arc::new(store))
        .task_config(config)
        .build()
        .expect("server")
}

/// A duration in milliseconds, with fractions.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn fast() -> TaskConfig {
    TaskConfig::default().with_poll_interval(Duration::from_millis(20))
}

async fn rpc(s: &Server, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
    });
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    s.handle(msg, &Principal::named("carol"))
        .await
        .expect("a response")
        .to_value()
}

async fn start(s: &Server, tool: &str, args: Value) -> String {
    let r = rpc(s, "tools/call", json!({"name": tool, "arguments": args})).await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn wait_for(s: &Server, id: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = rpc(s, "tasks/get", json!({"taskId": id})).await;
        let t = r["result"].clone();
        let st = t["status"].as_str().unwrap_or("").to_owned();
        if st == want || ["completed", "failed", "cancelled"].contains(&st.as_str()) {
            return t;
        }
        assert!(Instant::now() < deadline, "task {id} stuck in {st}: {r}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn store_semantics(pg: &str) {
    let s = PostgresStore::connect(pg, "semantics", Tls::Disable)
        .await
        .unwrap();
    let t = |version: u64, exp: Option<u64>| StoredTask {
        id: "t1".into(),
        version,
        expires_at_ms: exp,
        body: format!("{{\"v\":{version}}}"),
    };
    s.create(&t(1, Some(1_000))).await.unwrap();
    assert_eq!(s.create(&t(1, None)).await, Err(StoreError::Exists));
    assert!(s.swap(&t(2, Some(1_000))).await.unwrap());
    assert!(
        !s.swap(&t(2, Some(1_000))).await.unwrap(),
        "a stale writer must lose"
    );
    let got = s.get("t1").await.unwrap().unwrap();
    assert_eq!((got.version, got.body.as_str()), (2, "{\"v\":2}"));
    assert_eq!(s.get("nope").await.unwrap(), None);
    // Two writers racing from the same version: exactly one wins.
    let (x, y) = (t(3, None), t(3, Some(5_000)));
    let (a, b) = tokio::join!(s.swap(&x), s.swap(&y));
    assert!(a.unwrap() ^ b.unwrap());
    s.create(&StoredTask {
        id: "t2".into(),
        version: 1,
        expires_at_ms: Some(10),
        body: "{}".into(),
    })
    .await
    .unwrap();
    assert_eq!(TaskStore::remove_expired(&s, 11).await.unwrap(), 1);
    assert!(s.get("t2").await.unwrap().is_none());
    assert!(matches!(
        PostgresStore::connect(pg, "bad; name", Tls::Disable).await,
        Err(mcp_tool_store_postgres::ConnectError::InvalidTable(_))
    ));
}

/// The database is stopped (every connection cut) and started again while a store is in
/// use: operations during the outage, tasks and single-use claims alike, fail with an
/// error, quickly; once the server is back the same store value succeeds again (no
/// reconnect by the caller), and the tasks and claims written before the outage are there.
/// Prints the figures.
async fn the_store_recovers_from_a_database_restart(pg: &Postgres) {
    use mcp_tool_store_postgres::PoolOptions;
    let options = PoolOptions {
        size: 2,
        backoff_initial: Duration::from_millis(50),
        backoff_max: Duration::from_millis(500),
        ..PoolOptions::default()
    };
    let s = PostgresStore::connect_with(&pg.config(), "restart", Tls::Disable, options)
        .await
        .expect("connect");
    let t = |id: &str, version: u64| StoredTask {
        id: id.into(),
        version,
        expires_at_ms: None,
        body: format!("{{\"v\":{version}}}"),
    };
    s.create(&t("before", 1)).await.unwrap();
    // a claim done and one still held before the outage
    let later = std::time::SystemTime::now() + Duration::from_secs(600);
    let outcome = b"\x00paid\xff".to_vec();
    assert_eq!(
        s.claim("done-before", "alice", later).await,
        Ok(Claim::Claimed)
    );
    s.complete("done-before", outcome.clone()).await.unwrap();
    assert_eq!(
        s.claim("held-before", "alice", later).await,
        Ok(Claim::Claimed)
    );
    // both connections of the pool are open before the outage
    for _ in 0..4 {
        assert!(s.get("before").await.unwrap().is_some());
    }
    pg.stop().expect("stop postgres");
    let (mut failed, mut slowest) = (0u32, Duration::ZERO);
    let (mut claims_failed, mut slowest_claim) = (0u32, Duration::ZERO);
    for i in 0..20 {
        let began = Instant::now();
        let r = s.get("before").await;
        slowest = slowest.max(began.elapsed());
        assert!(
            matches!(r, Err(StoreError::Backend(_))),
            "operation {i} during the outage: {r:?}"
        );
        failed += 1;
        assert!(
            s.create(&t(&format!("during-{i}"), 1)).await.is_err(),
            "a write during the outage"
        );
        // the ledger: a claim (nothing may run without it), a complete, a release
        let began = Instant::now();
        let c = s.claim(&format!("during-{i}"), "alice", later).await;
        slowest_claim = slowest_claim.max(began.elapsed());
        assert!(c.is_err(), "claim {i} during the outage: {c:?}");
        claims_failed += 1;
        assert!(s.complete("held-before", b"x".to_vec()).await.is_err());
        assert!(s.release("held-before").await.is_err());
        assert!(
            Ledger::remove_expired(&s, std::time::SystemTime::now())
                .await
                .is_err()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        slowest < Duration::from_secs(2),
        "slowest failure {slowest:?}"
    );
    assert!(
        slowest_claim < Duration::from_secs(2),
        "slowest failed claim {slowest_claim:?}"
    );
    let back = Instant::now();
    pg.start_again().expect("start postgres again");
    let started = back.elapsed();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        match s.get("before").await {
            Ok(found) => {
                assert_eq!(found, Some(t("before", 1)), "written before the outage");
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "the store did not recover: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    let recovered = back.elapsed();
    // every connection of the pool works again: writes, compare-and-swap, reads
    for i in 0..6 {
        let id = format!("after-{i}");
        s.create(&t(&id, 1))
            .await
            .expect("create after the restart");
        assert!(s.swap(&t(&id, 2)).await.expect("swap after the restart"));
        assert_eq!(s.get(&id).await.unwrap().unwrap().version, 2);
    }
    // the ledger works again on every connection, and kept what it had: the stored
    // outcome byte for byte, the held claim still held (none of the failed calls touched it)
    let ledger_back = Instant::now();
    for _ in 0..4 {
        assert_eq!(
            s.claim("done-before", "alice", later).await,
            Ok(Claim::Done(outcome.clone()))
        );
        assert_eq!(
            s.claim("held-before", "alice", later).await,
            Ok(Claim::Running)
        );
    }
    s.complete("held-before", b"late".to_vec()).await.unwrap();
    assert_eq!(
        s.claim("held-before", "alice", later).await,
        Ok(Claim::Done(b"late".to_vec()))
    );
    for i in 0..6 {
        let id = format!("after-{i}");
        assert_eq!(s.claim(&id, "alice", later).await, Ok(Claim::Claimed));
        s.release(&id).await.expect("release after the restart");
        assert_eq!(s.claim(&id, "alice", later).await, Ok(Claim::Claimed));
    }
    // the claims refused during the outage were never taken
    assert_eq!(
        s.claim("during-0", "alice", later).await,
        Ok(Claim::Claimed)
    );
    Ledger::remove_expired(&s, std::time::SystemTime::now())
        .await
        .expect("sweep after the restart");
    let ledger_ms = ledger_back.elapsed().as_millis();
    println!(
        "postgres restart: during the outage {failed} reads (and as many writes) failed, the slowest in {:.2} ms; \
         {claims_failed} claims (and as many completes, releases and sweeps) failed, the slowest claim in {:.2} ms; \
         the server took {:.0} ms to start again, the store answered {:.0} ms after the start began ({attempts} attempts); \
         then 8 claims kept from before, 13 new claims, 6 releases and a sweep took {ledger_ms} ms",
        ms(slowest),
        ms(slowest_claim),
        ms(started),
        ms(recovered)
    );
}

/// The store suite, tasks and ledger (`mcp_tool_tests::store_suite::run`), as memory and
/// SQLite run it: two stores on one table, each with its own connections (two replicas).
async fn the_store_suite(pg: &str) {
    let a = PostgresStore::connect(pg, "suite", Tls::Disable)
        .await
        .expect("connect");
    let b = PostgresStore::connect(pg, "suite", Tls::Disable)
        .await
        .expect("connect");
    let began = Instant::now();
    mcp_tool_tests::store_suite::run(&a, &b, "postgres").await;
    println!(
        "postgres store suite (tasks and ledger, two stores): {} ms",
        began.elapsed().as_millis()
    );
}

/// A single-use state confirmed on one replica and replayed on another (each with its own
/// store, connected to one database) runs once (`mcp_tool_tests::once_replicas`).
async fn a_single_use_state_replayed_on_another_replica_runs_once(pg: &str) {
    let a = PostgresStore::connect(pg, "once_fleet", Tls::Disable)
        .await
        .expect("connect");
    let b = PostgresStore::connect(pg, "once_fleet", Tls::Disable)
        .await
        .expect("connect");
    let f = mcp_tool_tests::once_replicas::a_replay_on_another_replica_runs_nothing(
        Arc::new(a),
        Arc::new(b),
    )
    .await;
    println!(
        "postgres, two replicas: {} racing presentations, {} busy, the effect ran {} time(s), slowest answer {} ms",
        f.racing,
        f.busy,
        f.effects,
        f.slowest.as_millis()
    );
}

/// Schema versions: replicas connecting at once to a fresh database all succeed (one
/// migrates under the advisory lock, the others find it done); a schema newer than this
/// build is refused with a clear error; a tasks table made by the earlier, unversioned
/// store is adopted as version 1 and migrated, its tasks kept.
async fn schema_versions(pg: &Postgres) {
    let config = pg.config();
    let known = PostgresStore::SCHEMA_VERSION;
    assert_eq!(known, 3);
    // 6 replicas starting together on a table nobody made yet
    let began = Instant::now();
    let racing = (0..6).map(|_| PostgresStore::connect(&config, "schema_race", Tls::Disable));
    let stores = futures_util::future::join_all(racing).await;
    let racing_ms = began.elapsed().as_millis();
    let stores: Vec<PostgresStore> = stores
        .into_iter()
        .map(|s| s.expect("every replica connects"))
        .collect();
    for s in &stores {
        assert_eq!(s.schema_version().await.unwrap(), known);
    }
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    assert_eq!(
        stores[0].claim("schema-1", "alice", later).await,
        Ok(Claim::Claimed)
    );
    assert_eq!(
        stores[5].claim("schema-1", "alice", later).await,
        Ok(Claim::Running)
    );
    assert_eq!(
        pg.psql("SELECT count(*) FROM mcp_schema WHERE component = 'schema_race'")
            .unwrap(),
        "1"
    );
    drop(stores);

    // a newer schema (a newer build migrated it): refused, nothing touched
    pg.psql("UPDATE mcp_schema SET version = 4 WHERE component = 'schema_race'")
        .unwrap();
    match PostgresStore::connect(&config, "schema_race", Tls::Disable).await {
        Err(
            e @ ConnectError::NewerSchema {
                found: 4, known: 3, ..
            },
        ) => {
            let text = e.to_string();
            assert!(
                text.contains("schema_race") && text.contains("newer than this build's 3"),
                "{text}"
            );
            println!("postgres schema: a newer schema is refused: {text}");
        }
        other => panic!("a newer schema was not refused: {other:?}"),
    }
    assert_eq!(
        pg.psql("SELECT version FROM mcp_schema WHERE component = 'schema_race'")
            .unwrap(),
        "4"
    );
    pg.psql("UPDATE mcp_schema SET version = 3 WHERE component = 'schema_race'")
        .unwrap();
    PostgresStore::connect(&config, "schema_race", Tls::Disable)
        .await
        .expect("version 3 again");

    // the earlier store's table, made with CREATE TABLE IF NOT EXISTS and no version
    pg.psql(
        "CREATE TABLE legacy_tasks (id TEXT PRIMARY KEY, version BIGINT NOT NULL,
             expires_at_ms BIGINT, body TEXT NOT NULL);
         CREATE INDEX legacy_tasks_expires ON legacy_tasks (expires_at_ms)
             WHERE expires_at_ms IS NOT NULL;
         INSERT INTO legacy_tasks VALUES ('old', 3, NULL, '{\"kept\":true}');",
    )
    .unwrap();
    // another application's table of that name (other columns) is left alone, refused
    pg.psql("CREATE TABLE not_ours (id TEXT PRIMARY KEY, payload TEXT)")
        .unwrap();
    match PostgresStore::connect(&config, "not_ours", Tls::Disable).await {
        Err(ConnectError::ForeignTable(t)) => assert_eq!(t, "not_ours"),
        other => panic!("a foreign table was adopted: {other:?}"),
    }
    assert!(matches!(
        PostgresStore::connect(&config, "legacy_tasks_once", Tls::Disable).await,
        Err(ConnectError::InvalidTable(_))
    ));
    let (x, y) = tokio::join!(
        PostgresStore::connect(&config, "legacy_tasks", Tls::Disable),
        PostgresStore::connect(&config, "legacy_tasks", Tls::Disable)
    );
    let (x, y) = (x.expect("adopted"), y.expect("adopted"));
    assert_eq!(x.schema_version().await.unwrap(), known);
    let old = y.get("old").await.unwrap().expect("the old task is kept");
    assert_eq!((old.version, old.body.as_str()), (3, "{\"kept\":true}"));
    assert_eq!(x.claim("adopted", "bob", later).await, Ok(Claim::Claimed));
    assert_eq!(y.claim("adopted", "bob", later).await, Ok(Claim::Running));
    println!(
        "postgres schema: 6 replicas connected at once to a fresh table in {racing_ms} ms (one schema row, version {known}); \
         an unversioned tasks table was adopted and migrated by 2 replicas at once"
    );
}

async fn input_round_through_the_other_replica(pg: &str) {
    let a = replica(pg, "fleet_input", fast()).await;
    let b = replica(pg, "fleet_input", fast()).await;
    let id = start(&a, "confirm_delete", json!({"filename": "report.pdf"})).await;
    let t = wait_for(&b, &id, "input_required").await;
    assert_eq!(t["status"], "input_required", "{t}");
    let key = t["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let ack = rpc(
        &b,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    let done = wait_for(&a, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Deleted report.pdf");
    // Cancel through one replica stops a run on the other (at its next lease renewal).
    let config = fast().with_lease(Duration::from_millis(300));
    let a = replica(pg, "fleet_cancel", config.clone()).await;
    let b = replica(pg, "fleet_cancel", config).await;
    let id = start(&a, "slow_compute", json!({"seconds": 30})).await;
    assert_eq!(a.running_tasks(), 1);
    let ack = rpc(&b, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    assert_eq!(wait_for(&a, &id, "cancelled").await["status"], "cancelled");
    let deadline = Instant::now() + Duration::from_secs(5);
    while a.running_tasks() > 0 {
        assert!(
            Instant::now() < deadline,
            "the run on the other replica did not stop"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Starts `tool` on a replica living in its own runtime (with its own connection), then
/// shuts that runtime down: the replica dies mid-task.
fn on_doomed_replica(
    pg: String,
    table: &'static str,
    config: TaskConfig,
    tool: &'static str,
    args: Value,
) -> String {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let id = rt.block_on(async move {
            let doomed = replica(&pg, table, config).await;
            start(&doomed, tool, args).await
        });
        rt.shutdown_background();
        id
    })
    .join()
    .unwrap()
}

async fn a_killed_replica_is_taken_over(pg: &str) {
    let config = fast().with_lease(Duration::from_millis(400));
    let id = on_doomed_replica(
        pg.to_owned(),
        "fleet_kill",
        config.clone(),
        "slow_compute",
        json!({"seconds": 0.3, "label": "survived"}),
    );
    let survivor = replica(pg, "fleet_kill", config).await;
    let done = wait_for(&survivor, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Computed survived after 0.3s"
    );

    // With no second start allowed, the task fails with the reason instead.
    let config = fast()
        .with_lease(Duration::from_millis(400))
        .with_max_attempts(1);
    let id = on_doomed_replica(
        pg.to_owned(),
        "fleet_kill_max1",
        config.clone(),
        "slow_compute",
        json!({"seconds": 30}),
    );
    let survivor = replica(pg, "fleet_kill_max1", config).await;
    let t = wait_for(&survivor, &id, "failed").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert!(
        t["statusMessage"]
            .as_str()
            .unwrap()
            .contains("stopped before it finished")
    );
}

#[test]
fn tasks_on_a_shared_postgres_store() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_test_writer()
        .try_init();
    let pg = match Postgres::start() {
        Ok(pg) => pg,
        Err(why) => {
            eprintln!(
                "\n\n*** SKIPPED tasks_on_a_shared_postgres_store: PostgreSQL unavailable: {why} ***\n\n"
            );
            return;
        }
    };
    let config = pg.config();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        store_semantics(&config).await;
        the_store_suite(&config).await;
        task_allowances_hold_across_replicas(&config).await;
        schema_versions(&pg).await;
        a_single_use_state_replayed_on_another_replica_runs_once(&config).await;
        tls_is_refused_by_a_server_without_it(&config).await;
        input_round_through_the_other_replica(&config).await;
        a_killed_replica_is_taken_over(&config).await;
        the_store_recovers_from_a_database_restart(&pg).await;
        a_fleet_on_postgres(&pg).await;
    });
    drop(rt);
    drop(pg);
}

/// Two replicas on one table: a principal's task allowance and the store's total count the
/// tasks of both (each counted on its own, the fleet allowed twice as much).
async fn task_allowances_hold_across_replicas(pg: &str) {
    let config = TaskConfig::default()
        .with_max_tasks_per_principal(3)
        .with_max_stored_tasks(5);
    let a = replica(pg, "allowances", config.clone()).await;
    let b = replica(pg, "allowances", config).await;
    mcp_tool_tests::store_suite::allowances_hold_across_replicas(&a, &b, "postgres").await;
}

/// A store that asks for TLS never falls back to plaintext: the plain server is refused,
/// whatever the roots.
async fn tls_is_refused_by_a_server_without_it(pg: &str) {
    for tls in [
        Tls::Require(Roots::WebPki),
        Tls::VerifyFull(Roots::WebPki),
        Tls::from_libpq("require", Some("webpki")).unwrap(),
    ] {
        match PostgresStore::connect(pg, "tls_refused", tls.clone()).await {
            Err(ConnectError::Postgres(e)) => {
                assert!(
                    format!("{e:?}").contains("does not support TLS"),
                    "{tls:?}: {e:?}"
                )
            }
            other => panic!("{tls:?}: {other:?}"),
        }
    }
}

/// A certificate authority made for the test: its issuer and its certificate (PEM).
fn test_ca(name: &str) -> (rcgen::Issuer<'static, rcgen::KeyPair>, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (rcgen::Issuer::new(params, key), cert.pem())
}

/// The database's certificate, for `db.test` and 127.0.0.1, signed by `ca`.
fn server_cert(ca: &rcgen::Issuer<'static, rcgen::KeyPair>) -> ServerTls {
    let mut params = rcgen::CertificateParams::new(vec!["db.test".to_owned()]).unwrap();
    params
        .subject_alt_names
        .push(rcgen::SanType::IpAddress([127, 0, 0, 1].into()));
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "db.test");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, ca).unwrap();
    ServerTls {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// `connect` failed in the handshake (a certificate that does not verify).
fn refused_certificate(r: Result<PostgresStore, ConnectError>, what: &str) {
    match r {
        Err(ConnectError::Postgres(e)) => {
            let text = format!("{e:?}");
            assert!(
                text.contains("certificate") || text.contains("Certificate"),
                "{what}: {text}"
            )
        }
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn tasks_over_tls_verified_against_a_test_ca() {
    let (ca, ca_pem) = test_ca("mcp-tool test CA");
    let pg = match Postgres::start_with(Some(&server_cert(&ca))) {
        Ok(pg) => pg,
        Err(why) => {
            eprintln!(
                "\n\n*** SKIPPED tasks_over_tls_verified_against_a_test_ca: PostgreSQL unavailable: {why} ***\n\n"
            );
            return;
        }
    };
    let ca_file = std::env::temp_dir().join(format!("mcp-tasks-pg-ca-{}.pem", std::process::id()));
    std::fs::write(&ca_file, &ca_pem).unwrap();
    let at = |host: &str| {
        format!(
            "host={host} hostaddr=127.0.0.1 port={} user=mcp dbname=postgres",
            pg.port
        )
    };
    let (named, by_ip, other) = (at("db.test"), at("127.0.0.1"), at("other.test"));
    let ours = || Roots::CaPem(ca_pem.clone().into_bytes());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // verify-full with the CA file: a task round trip over TLS
        let tls = Tls::from_libpq("verify-full", ca_file.to_str()).unwrap();
        assert_eq!(tls, Tls::VerifyFull(Roots::CaFile(ca_file.clone())));
        let s = replica_with(&named, "tls_tasks", fast(), tls).await;
        let id = start(
            &s,
            "slow_compute",
            json!({"seconds": 0.05, "label": "over TLS"}),
        )
        .await;
        let done = wait_for(&s, &id, "completed").await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(
            done["result"]["content"][0]["text"],
            "Computed over TLS after 0.05s"
        );
        // the change feed listens over TLS too (its own connection, dialled like the
        // store's: plaintext would find no rule): a change crosses between two stores
        let feed_store = || async {
            Arc::new(
                PostgresStore::connect(&named, "tls_feed", Tls::VerifyFull(ours()))
                    .await
                    .expect("verify-full"),
            )
        };
        let (f1, f2) = (feed_store().await, feed_store().await);
        let mut p =
            mcp_tool_tests::feed_suite::connect(Arc::new(f1.feed()), Arc::new(f2.feed())).await;
        mcp_tool_tests::feed_suite::once_in_order(
            &mut p,
            "postgres-tls",
            10,
            Duration::from_millis(300),
        )
        .await;
        // the certificate's IP address verifies too
        PostgresStore::connect(&by_ip, "tls_ip", Tls::VerifyFull(ours()))
            .await
            .expect("verify-full by IP address");
        // the server admits TCP only over TLS (hostssl), so the round trip above was
        // encrypted: plaintext finds no rule
        match PostgresStore::connect(&named, "tls_plain", Tls::Disable).await {
            Err(ConnectError::Postgres(e)) => {
                assert!(format!("{e:?}").contains("no encryption"), "{e:?}")
            }
            other => panic!("plaintext was admitted: {other:?}"),
        }
        // a name the certificate does not carry: verify-full refuses, require (the chain
        // only) accepts
        refused_certificate(
            PostgresStore::connect(&other, "tls_name", Tls::VerifyFull(ours())).await,
            "verify-full, another name",
        );
        PostgresStore::connect(&other, "tls_name", Tls::Require(ours()))
            .await
            .expect("require checks the chain, not the name");
        // another CA, or Mozilla's roots: refused in both modes
        let (_, stranger) = test_ca("stranger CA");
        let strangers = || Roots::CaPem(stranger.clone().into_bytes());
        for tls in [
            Tls::VerifyFull(strangers()),
            Tls::Require(strangers()),
            Tls::VerifyFull(Roots::WebPki),
            Tls::Require(Roots::WebPki),
        ] {
            let what = format!("{tls:?}");
            refused_certificate(PostgresStore::connect(&named, "tls_ca", tls).await, &what);
        }
    });
    drop(rt);
    let _ = std::fs::remove_file(&ca_file);
    drop(pg);
}

mod fleet;

/// Three `serve` processes on one PostgreSQL store (`--store postgres:…`): 64 replays of a
/// confirmed `donate` round donate once with one distinct answer; then single-use calls and
/// tasks in flight while the database is killed (`-m immediate`) and started again: no
/// donation twice, retried calls answered, tasks completed, no server restarted.
async fn a_fleet_on_postgres(pg: &Postgres) {
    let exe = env!("CARGO_BIN_EXE_example_serve");
    let url = format!("postgres:{}", pg.config());
    let store = ["--store", &url, "--store-sslmode", "disable"];
    let dir = tempfile::tempdir().unwrap();
    fleet::replay_across_replicas(exe, dir.path(), &store, "postgres").await;
    // the ledger holds one entry per single-use round, not one per presentation
    let held = || tokio::task::block_in_place(|| pg.psql("SELECT count(*) FROM mcp_tasks_once"));
    assert_eq!(held().expect("count"), "1", "64 presentations, one entry");

    let dir = tempfile::tempdir().unwrap();
    let outage = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let down = Instant::now();
        tokio::task::block_in_place(|| pg.stop()).expect("stop postgres");
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        tokio::task::block_in_place(|| pg.start_again()).expect("start postgres again");
        println!(
            "postgres fleet: the database was down for {} ms",
            down.elapsed().as_millis()
        );
    };
    let report =
        fleet::donations_through_an_outage(exe, dir.path(), &store, "postgres-outage", outage)
            .await;
    report.assert_recovered();
    let entries = held().expect("count");
    println!(
        "postgres fleet: the shared ledger holds {entries} entries after 32 single-use rounds \
         presented {} times",
        64 + 31 + report.busy_retried + report.errors_retried
    );
    assert_eq!(entries, "32", "one entry per round: 1 + 30 + 1");
}

/// The change feed on PostgreSQL (`mcp_tool_tests::feed_suite`): two stores (two
/// replicas), a hub connected to each one's feed. The suite's burst (100 changes) and
/// foreign bytes (non-UTF-8 ones are refused by `publish`: a `NOTIFY` payload is text); a
/// store with another table hears nothing; the latency over 1,000 changes (one every
/// 2 ms); then the database stopped at once (`-m immediate`) and started again: changes
/// published after the feed is back arrive. Prints the figures.
#[test]
fn changes_cross_replicas_through_postgres_notify() {
    use mcp_tool_runtime::store::{Change, ChangeFeed, Changes};
    use mcp_tool_store_postgres::PoolOptions;
    use mcp_tool_tests::feed_suite;

    let pg = match Postgres::start() {
        Ok(pg) => pg,
        Err(why) => {
            eprintln!(
                "\n\n*** SKIPPED changes_cross_replicas_through_postgres_notify: PostgreSQL unavailable: {why} ***\n\n"
            );
            return;
        }
    };
    let config = pg.config();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let options = PoolOptions {
            connect_timeout: Duration::from_secs(2),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_millis(500),
            ..PoolOptions::default()
        };
        let store = |table: &'static str| {
            let (config, options) = (config.clone(), options.clone());
            async move {
                Arc::new(
                    PostgresStore::connect_with(&config, table, Tls::Disable, options)
                        .await
                        .expect("connect"),
                )
            }
        };
        let (s1, s2) = (store("feed_tasks").await, store("feed_tasks").await);
        assert_eq!(s1.feed().channel(), "feed_tasks_changes");
        let mut p = feed_suite::connect(Arc::new(s1.feed()), Arc::new(s2.feed())).await;
        // NOTIFY carries text: bytes that are not UTF-8 are refused, not sent
        assert!(s1.feed().publish(b"\xff\xfe").await.is_err());
        assert!(s1.feed().publish(&[b'x'; 8000]).await.is_err());

        let other = store("other_tasks").await;
        let deaf = Changes::new();
        deaf.connect(Arc::new(other.feed())).await.expect("listen");
        let mut rd = deaf.subscribe();

        feed_suite::once_in_order(&mut p, "postgres", 100, Duration::from_millis(300)).await;
        let (sent, arrived) = feed_suite::flood(&mut p, "postgres", 2000).await;
        println!(
            "postgres feed: 2,000 foreign messages (half of them 4,000 bytes) sent in {} ms; a change after them arrived {} ms later",
            sent.as_millis(),
            arrived.as_millis()
        );
        let lat = feed_suite::latency(&mut p, "postgres", 1000, Duration::from_millis(2)).await;
        println!(
            "postgres feed: publish on A -> receive on B over {} changes: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.0} bytes per change",
            lat.n, lat.p50, lat.p99, lat.max, lat.bytes
        );
        assert_eq!(
            feed_suite::drain(&mut rd, Duration::from_millis(200)).await,
            Vec::<Change>::new(),
            "another table heard this deployment's changes"
        );

        let restart = async {
            tokio::task::block_in_place(|| pg.stop()).expect("stop postgres");
            tokio::time::sleep(Duration::from_millis(500)).await;
            tokio::task::block_in_place(|| pg.start_again()).expect("start postgres again");
        };
        let recovered =
            feed_suite::after_recovery(&mut p, "postgres", restart, Duration::from_secs(30)).await;
        println!(
            "postgres feed: changes flow again {} ms after the database was back",
            recovered.as_millis()
        );
    });
    drop(rt);
    drop(pg);
}

/// Two `serve` replicas on one PostgreSQL: a client listening on B hears a note edited and
/// tasks driven through A (`fleet::listen`).
#[test]
fn a_listener_hears_another_replica_through_postgres() {
    let pg = match Postgres::start() {
        Ok(pg) => pg,
        Err(why) => {
            eprintln!("\n\n*** SKIPPED: PostgreSQL unavailable: {why} ***\n\n");
            return;
        }
    };
    let exe = env!("CARGO_BIN_EXE_example_serve");
    let url = format!("postgres:{}", pg.config());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        fleet::listen::a_listener_on_b_hears_what_is_done_through_a(
            exe,
            dir.path(),
            &["--store", &url, "--store-sslmode", "disable"],
            "postgres",
        )
        .await;
    });
    drop(rt);
    drop(pg);
}
