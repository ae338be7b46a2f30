//! Tasks and single-use claims on a real Redis (Debian's `redis-server`), started by each
//! test in a temporary directory on a free loopback port, with the append-only file synced
//! on every write (`appendonly yes`, `appendfsync always`: what exactly-once claims need to
//! survive a restart), and stopped at the end. When `redis-server` is missing the test
//! installs it with apt-get (as root); if that is impossible it skips loudly, except under
//! CI (`CI=true`), where it fails.
//!
//! The shared suite (plainly and over TLS against a CA made here), a `kill -9` and restart,
//! a stalled (`SIGSTOP`) server, a single-use round presented on two replicas at once, and
//! a Unix socket. Each test prints its figures.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcp_tool_runtime::store::{Claim, Ledger};
use mcp_tool_runtime::tasks::{StoreError, StoredTask, TaskStore};
use mcp_tool_store_redis::{ConnectError, Options, RedisStore, SCHEMA_VERSION};
use mcp_tool_tests::services::{free_port, install_debian_package};

/// A `redis-server` of our own; killed and its directory deleted on drop.
struct Redis {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// More options (TLS).
    extra: Vec<String>,
    child: Option<Child>,
}

fn find_bin() -> Option<PathBuf> {
    ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

impl Redis {
    /// With more `redis-server` options (the plain `port` stays open for the readiness PING).
    fn start_with(extra: Vec<String>) -> Result<Redis, String> {
        let bin = match find_bin() {
            Some(b) => b,
            None => {
                install_debian_package("redis-server")?;
                find_bin().ok_or("redis-server installed but not found")?
            }
        };
        let dir = tempfile::Builder::new()
            .prefix("mcp-store-redis-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut redis = Redis {
            bin,
            dir,
            port: free_port(),
            extra,
            child: None,
        };
        redis.start_again()?;
        Ok(redis)
    }

    /// Starts the server (again) on the same port and directory: it loads the append-only
    /// file written before.
    fn start_again(&mut self) -> Result<(), String> {
        let log =
            std::fs::File::create(self.dir.path().join("redis.log")).map_err(|e| e.to_string())?;
        let child = Command::new(&self.bin)
            .arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--protected-mode", "yes"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .args(["--save", "", "--daemonize", "no"])
            .args(&self.extra)
            .stdout(Stdio::from(log.try_clone().map_err(|e| e.to_string())?))
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("{}: {e}", self.bin.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if ping(self.port) {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                return Err(format!(
                    "redis-server exited ({status}): {}",
                    std::fs::read_to_string(self.dir.path().join("redis.log")).unwrap_or_default()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("redis-server did not answer PING within 20 s".into())
    }

    /// `kill -9`: no shutdown, no last write; what survives is what the append-only file
    /// already had.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to the server.
    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id();
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "kill -{signal} {pid}");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A raw `PING` (RESP inline command): true once the server answers `+PONG` (not while it
/// is still loading its data, when it answers `-LOADING`).
fn ping(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 16];
    matches!(s.read(&mut buf), Ok(n) if buf[..n].starts_with(b"+PONG"))
}

/// The server, or `None` after a loud skip (outside CI only).
fn redis_or_skip(test: &str) -> Option<Redis> {
    redis_or_skip_with(test, Vec::new())
}

/// [`redis_or_skip`] with more `redis-server` options.
fn redis_or_skip_with(test: &str, extra: Vec<String>) -> Option<Redis> {
    match Redis::start_with(extra) {
        Ok(r) => Some(r),
        Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("\n\n*** SKIPPED {test}: redis-server unavailable: {why} ***\n\n");
            None
        }
        Err(why) => panic!("{test}: redis-server unavailable under CI: {why}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn task(id: &str, version: u64) -> StoredTask {
    StoredTask {
        id: id.into(),
        version,
        expires_at_ms: None,
        body: format!("{{\"v\":{version}}}"),
    }
}

/// The shared suite (`mcp_tool_tests::store_suite`, tasks and ledger) with two stores,
/// each with its own connection (two replicas); then what is particular to Redis: the
/// prefix keeps two services apart, the layout version is written and a newer one refused.
#[test]
fn the_store_suite_on_redis() {
    let Some(redis) = redis_or_skip("the_store_suite_on_redis") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let a = RedisStore::connect(&url).await.expect("connect a");
        let b = RedisStore::connect(&url).await.expect("connect b");
        let began = Instant::now();
        mcp_tool_tests::store_suite::run(&a, &b, "redis").await;
        println!("redis store suite: passed in {:?}", began.elapsed());

        // another prefix is another store: neither sees the other's tasks or claims
        let other = Options {
            prefix: "other:".into(),
            ..Options::default()
        };
        let c = RedisStore::connect_with(&url, other)
            .await
            .expect("connect c");
        assert_eq!(c.get("redis-create").await.expect("get"), None);
        assert!(a.get("redis-create").await.expect("get").is_some());
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(
            c.claim("redis-claim", "alice", later).await,
            Ok(Claim::Claimed)
        );
        c.release("redis-claim").await.expect("release");

        // the layout version is stored under the prefix; a newer one is refused, clearly
        let raw = redis::Client::open(url.as_str()).expect("client");
        let mut con = raw
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let stored: String = redis::cmd("GET")
            .arg("mcp:schema")
            .query_async(&mut con)
            .await
            .expect("GET schema");
        assert_eq!(stored, SCHEMA_VERSION.to_string());
        let () = redis::cmd("SET")
            .arg("future:schema")
            .arg(SCHEMA_VERSION + 1)
            .query_async(&mut con)
            .await
            .expect("SET");
        let future = Options {
            prefix: "future:".into(),
            ..Options::default()
        };
        match RedisStore::connect_with(&url, future).await {
            Err(ConnectError::Schema(m)) => {
                assert!(m.contains("future:schema"), "{m}");
                println!("redis store: a newer layout is refused: {m}");
            }
            other => panic!("a newer layout must be refused: {other:?}"),
        }
        // a task's fields are what the documentation says (the layout is a contract)
        let fields: Vec<Option<String>> = redis::cmd("HMGET")
            .arg("mcp:task:redis-create")
            .arg("v")
            .arg("e")
            .query_async(&mut con)
            .await
            .expect("HMGET");
        assert_eq!(
            fields,
            vec![Some("1".into()), Some((u64::MAX / 2).to_string())]
        );
        // a claim carries a Redis TTL at the state's expiry
        assert_eq!(
            a.claim("redis-ttl", "alice", later).await,
            Ok(Claim::Claimed)
        );
        let ttl: i64 = redis::cmd("PTTL")
            .arg("mcp:once:redis-ttl")
            .query_async(&mut con)
            .await
            .expect("PTTL");
        assert!((50_000..=60_000).contains(&ttl), "ttl {ttl}");
        // completing keeps it
        a.complete("redis-ttl", vec![0, 1, 2])
            .await
            .expect("complete");
        let ttl: i64 = redis::cmd("PTTL")
            .arg("mcp:once:redis-ttl")
            .query_async(&mut con)
            .await
            .expect("PTTL");
        assert!((50_000..=60_000).contains(&ttl), "ttl after complete {ttl}");
        // an expiry past what Redis accepts is clamped, never an entry without a TTL
        let far = std::time::UNIX_EPOCH + Duration::from_secs(u64::MAX / 1_000);
        assert_eq!(a.claim("redis-far", "alice", far).await, Ok(Claim::Claimed));
        let ttl: i64 = redis::cmd("PTTL")
            .arg("mcp:once:redis-far")
            .query_async(&mut con)
            .await
            .expect("PTTL");
        assert!(ttl > 0, "ttl of a far claim {ttl}");
        assert_eq!(
            b.claim("redis-far", "alice", later).await,
            Ok(Claim::Running)
        );
    });
    drop(redis);
}

/// `kill -9` of Redis in the middle of a run, then a start on the same port and directory.
/// During the outage task and ledger operations fail, fast; after it the same store values
/// work again without being reopened; a claim completed before the kill is still `Done`
/// with its outcome, and one held before it still `Running` (the append-only file, synced
/// on every write). Prints the figures.
#[test]
fn claims_survive_a_redis_restart_and_the_store_recovers() {
    let Some(mut redis) = redis_or_skip("claims_survive_a_redis_restart_and_the_store_recovers")
    else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let options = Options {
            response_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(500),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_millis(500),
            ..Options::default()
        };
        let s = Arc::new(
            RedisStore::connect_with(&url, options.clone())
                .await
                .expect("connect"),
        );
        let other = RedisStore::connect_with(&url, options).await.expect("connect");
        let later = SystemTime::now() + Duration::from_secs(600);
        let outcome: Vec<u8> = (0..=255u8).chain([0, 0xff]).collect();
        s.create(&task("before", 1)).await.expect("create");
        assert_eq!(s.claim("done", "alice", later).await, Ok(Claim::Claimed));
        s.complete("done", outcome.clone()).await.expect("complete");
        assert_eq!(s.claim("held", "alice", later).await, Ok(Claim::Claimed));

        redis.kill();
        let (mut failed, mut slowest) = (0u32, Duration::ZERO);
        let outage = Instant::now();
        for i in 0..20 {
            let ops: [(&str, Result<(), String>, Duration); 4] = [
                {
                    let t = Instant::now();
                    let r = s.get("before").await;
                    ("get", r.map(|_| ()).map_err(|e| e.to_string()), t.elapsed())
                },
                {
                    let t = Instant::now();
                    let r = other.create(&task(&format!("during-{i}"), 1)).await;
                    ("create", r.map_err(|e| e.to_string()), t.elapsed())
                },
                {
                    let t = Instant::now();
                    let r = s.claim(&format!("during-{i}"), "alice", later).await;
                    ("claim", r.map(|_| ()).map_err(|e| e.to_string()), t.elapsed())
                },
                {
                    let t = Instant::now();
                    let r = other.complete("held", b"never".to_vec()).await;
                    ("complete", r.map_err(|e| e.to_string()), t.elapsed())
                },
            ];
            for (what, r, took) in ops {
                assert!(r.is_err(), "{what} {i} during the outage: {r:?}");
                slowest = slowest.max(took);
                failed += 1;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let outage_len = outage.elapsed();
        assert!(
            slowest < Duration::from_secs(1),
            "slowest failure during the outage: {slowest:?}"
        );

        let back = Instant::now();
        redis.start_again().expect("start redis again");
        let started = back.elapsed();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            match s.get("before").await {
                Ok(found) => {
                    assert_eq!(found, Some(task("before", 1)), "written before the kill");
                    break;
                }
                Err(StoreError::Backend(e)) => {
                    assert!(Instant::now() < deadline, "the store did not recover: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
        let recovered = back.elapsed();
        // the claims of before the kill, through both store values
        for h in [&*s as &dyn Ledger, &other] {
            let deadline = Instant::now() + Duration::from_secs(10);
            let got = loop {
                match h.claim("done", "alice", later).await {
                    Err(e) if Instant::now() < deadline => {
                        eprintln!("not yet: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    r => break r,
                }
            };
            assert_eq!(got, Ok(Claim::Done(outcome.clone())), "completed before the kill");
            assert_eq!(h.claim("held", "alice", later).await, Ok(Claim::Running));
        }
        // nothing of the outage was written; everything works again
        for i in 0..3 {
            let id = format!("after-{i}");
            other.create(&task(&id, 1)).await.expect("create after");
            assert!(s.swap(&task(&id, 2)).await.expect("swap after"));
            assert_eq!(other.get(&id).await.unwrap().unwrap().version, 2);
            assert_eq!(s.get(&format!("during-{i}")).await.unwrap(), None);
            assert_eq!(
                other.claim(&format!("after-{i}"), "bob", later).await,
                Ok(Claim::Claimed)
            );
        }
        println!(
            "redis kill -9: {failed} task and ledger operations during the {outage_len:?} outage failed, \
             the slowest in {slowest:?}; redis took {started:?} to start again (append-only file loaded), \
             the store answered {recovered:?} after the start began ({attempts} attempts); \
             the claim completed before the kill is Done with its {} bytes",
            outcome.len()
        );
        assert!(
            std::fs::read_dir(redis.dir())
                .map(|d| d.count() > 0)
                .unwrap_or(false),
            "the append-only files are in the test's directory"
        );
    });
}

/// A Redis that stops answering without closing its connections (`SIGSTOP`: the kernel
/// still accepts, nobody reads): operations fail within the response timeout instead of
/// hanging; after `SIGCONT` the same store answers again, each answer to its own command
/// (the late answers to the timed-out commands are not taken for later ones).
#[test]
fn a_stalled_redis_fails_within_the_response_timeout() {
    let Some(redis) = redis_or_skip("a_stalled_redis_fails_within_the_response_timeout") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let options = Options {
            response_timeout: Duration::from_millis(300),
            connect_timeout: Duration::from_millis(300),
            backoff_initial: Duration::from_millis(20),
            backoff_max: Duration::from_millis(100),
            ..Options::default()
        };
        let s = RedisStore::connect_with(&url, options).await.expect("connect");
        for id in ["a", "b", "c"] {
            s.create(&task(id, 1)).await.expect("create");
        }
        redis.signal("STOP");
        let mut slowest = Duration::ZERO;
        let later = SystemTime::now() + Duration::from_secs(60);
        for i in 0..5 {
            let t = Instant::now();
            assert!(s.get("a").await.is_err(), "get {i} while stalled");
            slowest = slowest.max(t.elapsed());
            let t = Instant::now();
            assert!(
                s.claim(&format!("stalled-{i}"), "alice", later).await.is_err(),
                "claim {i} while stalled"
            );
            slowest = slowest.max(t.elapsed());
        }
        assert!(
            slowest < Duration::from_millis(1_500),
            "slowest failure while stalled: {slowest:?}"
        );
        redis.signal("CONT");
        let back = Instant::now();
        let deadline = back + Duration::from_secs(10);
        loop {
            match s.get("b").await {
                Ok(found) => {
                    assert_eq!(found, Some(task("b", 1)));
                    break;
                }
                Err(e) => {
                    assert!(Instant::now() < deadline, "no recovery: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
        let recovered = back.elapsed();
        for _ in 0..3 {
            for id in ["a", "b", "c"] {
                assert_eq!(s.get(id).await.expect("get"), Some(task(id, 1)), "{id}");
            }
        }
        // the claims sent while stalled may have been applied when Redis resumed (a
        // timeout does not say a command was not run): never Done, never another's
        for i in 0..5 {
            let got = s.claim(&format!("stalled-{i}"), "alice", later).await;
            assert!(matches!(got, Ok(Claim::Claimed | Claim::Running)), "{got:?}");
        }
        println!(
            "redis SIGSTOP: 10 operations failed, the slowest in {slowest:?} (response timeout 300 ms); \
             after SIGCONT the store answered in {recovered:?}"
        );
    });
}

/// A certificate authority made for the test: its issuer and its certificate (PEM).
fn test_ca(name: &str) -> (rcgen::Issuer<'static, rcgen::KeyPair>, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("self-signed");
    (rcgen::Issuer::new(params, key), cert.pem())
}

/// `rediss://`: a Redis with a TLS port and a certificate for `localhost` from a CA made
/// here. The store verifies it against that CA (`Options::ca_pem`) and passes the suite
/// over TLS; a store trusting another CA, a plaintext `redis://` to the TLS port and an
/// unverified `#insecure` URL are all refused.
#[test]
fn the_store_suite_over_tls() {
    let (ca, ca_pem) = test_ca("mcp-tool redis test CA");
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost");
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &ca).expect("signed");
    let files = tempfile::tempdir().expect("tempdir");
    let (cert_file, key_file, ca_file) = (
        files.path().join("redis.crt"),
        files.path().join("redis.key"),
        files.path().join("ca.crt"),
    );
    std::fs::write(&cert_file, cert.pem()).expect("write");
    std::fs::write(&key_file, key.serialize_pem()).expect("write");
    std::fs::write(&ca_file, &ca_pem).expect("write");
    let tls_port = free_port();
    let path = |p: &Path| p.display().to_string();
    let extra = vec![
        "--tls-port".into(),
        tls_port.to_string(),
        "--tls-cert-file".into(),
        path(&cert_file),
        "--tls-key-file".into(),
        path(&key_file),
        "--tls-ca-cert-file".into(),
        path(&ca_file),
        "--tls-auth-clients".into(),
        "no".into(),
    ];
    let Some(redis) = redis_or_skip_with("the_store_suite_over_tls", extra) else {
        return;
    };
    let tls_url = format!("rediss://localhost:{tls_port}/");
    runtime().block_on(async {
        let ours = || Options {
            ca_pem: Some(ca_pem.clone().into_bytes()),
            ..Options::default()
        };
        let a = RedisStore::connect_with(&tls_url, ours())
            .await
            .expect("connect a over TLS");
        let b = RedisStore::connect_with(&tls_url, ours())
            .await
            .expect("connect b over TLS");
        let began = Instant::now();
        mcp_tool_tests::store_suite::run(&a, &b, "redis-tls").await;
        println!(
            "redis store suite over TLS: passed in {:?}",
            began.elapsed()
        );
        // the change feed subscribes over TLS too (its own connection, the same client)
        let (a, b) = (Arc::new(a), Arc::new(b));
        let mut p =
            mcp_tool_tests::feed_suite::connect(Arc::new(a.feed()), Arc::new(b.feed())).await;
        mcp_tool_tests::feed_suite::once_in_order(
            &mut p,
            "redis-tls",
            10,
            Duration::from_millis(300),
        )
        .await;

        // a certificate from another CA does not verify
        let (_, other_pem) = test_ca("another CA");
        let theirs = Options {
            ca_pem: Some(other_pem.into_bytes()),
            ..Options::default()
        };
        let refused = RedisStore::connect_with(&tls_url, theirs).await;
        assert!(
            matches!(refused, Err(ConnectError::Redis(_))),
            "{refused:?}"
        );
        println!(
            "redis TLS: another CA is refused: {}",
            refused.err().map(|e| e.to_string()).unwrap_or_default()
        );
        // plaintext to the TLS port gets no answer it can read
        let short = Options {
            connect_timeout: Duration::from_millis(500),
            response_timeout: Duration::from_millis(500),
            ..Options::default()
        };
        let plain =
            RedisStore::connect_with(&format!("redis://127.0.0.1:{tls_port}/"), short).await;
        assert!(plain.is_err(), "plaintext to the TLS port: {plain:?}");
        // no verification is never an option
        let insecure = RedisStore::connect_with(&format!("{tls_url}#insecure"), ours()).await;
        assert!(
            matches!(insecure, Err(ConnectError::Url(_))),
            "{insecure:?}"
        );
    });
    drop(redis);
}

/// How many times `pay`'s effect ran, over every replica of the test.
#[derive(Default)]
struct Payments(std::sync::atomic::AtomicUsize);

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct PayArgs {
    amount: u32,
}

#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Go {
    go: bool,
}

/// Asks for a confirmation, then pays (counted): single use.
#[mcp_tool_runtime::mcp_tool(once, max_rounds = 1)]
async fn pay(
    cx: &mut mcp_tool_runtime::ToolContext,
    args: PayArgs,
    payments: mcp_tool_runtime::State<Payments>,
) -> Result<String, mcp_tool_runtime::ToolError> {
    let _go = cx.elicit::<Go>("pay?").await?;
    let n = payments.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    Ok(format!("paid {} (run {n})", args.amount))
}

/// Two replicas (one keyring, each its own connection to Redis, `ServerBuilder::store`)
/// get the confirmed round of a single-use tool 16 times each, at once: the effect runs
/// once in the fleet and every answer is the same bytes; a later replay on either replica
/// too.
/// Two replicas on one Redis: a principal's task allowance and the store's total count the
/// tasks of both (each counted on its own, the fleet allowed twice as much).
#[test]
fn task_allowances_hold_across_replicas_on_redis() {
    use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
    use mcp_tool_runtime::tasks::TaskConfig;

    let Some(redis) = redis_or_skip("task_allowances_hold_across_replicas_on_redis") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let mut replicas = Vec::new();
        for _ in 0..2 {
            let options = Options {
                prefix: "allowances:".into(),
                ..Options::default()
            };
            let store = RedisStore::connect_with(&url, options)
                .await
                .expect("connect");
            let server = mcp_tool_tests::fixture::builder(Some(Sealer::new(
                Keyring::new("fleet", vec![7u8; 32]).expect("keyring"),
                SealConfig::default(),
            )))
            .store(Arc::new(store))
            .task_config(
                TaskConfig::default()
                    .with_max_tasks_per_principal(3)
                    .with_max_stored_tasks(5),
            )
            .build()
            .expect("server");
            replicas.push(server);
        }
        mcp_tool_tests::store_suite::allowances_hold_across_replicas(
            &replicas[0],
            &replicas[1],
            "redis",
        )
        .await;
    });
}

#[test]
fn a_single_use_round_runs_once_across_two_replicas() {
    use mcp_tool_runtime::Principal;
    use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
    use mcp_tool_runtime::server::Server;
    use serde_json::{Value, json};

    let Some(redis) = redis_or_skip("a_single_use_round_runs_once_across_two_replicas") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let payments = Arc::new(Payments::default());
        let mut replicas = Vec::new();
        for _ in 0..2 {
            let store = RedisStore::connect(&url).await.expect("connect");
            let server = Server::builder(mcp_tool_runtime::protocol::Implementation::new(
                "fleet", "1",
            ))
            .sealer(Sealer::new(
                Keyring::new("fleet", vec![7u8; 32]).expect("keyring"),
                SealConfig::default(),
            ))
            .state(payments.clone())
            .tool(pay::tool())
            .store(Arc::new(store))
            .build()
            .expect("server");
            replicas.push(server);
        }
        let alice = Principal::named("alice");
        let call = |extra: Value| {
            let mut params = json!({
                "name": "pay",
                "arguments": {"amount": 5},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                },
            });
            if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
                p.extend(e);
            }
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
        };
        let first = replicas[0]
            .handle(call(json!({})), &alice)
            .await
            .expect("a response")
            .to_value();
        let result = &first["result"];
        assert_eq!(result["resultType"], "input_required", "{first}");
        let key = result["inputRequests"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .expect("one request");
        let confirmed = call(json!({
            "requestState": result["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"go": true}}},
        }));
        let began = Instant::now();
        let presentations = (0..32).map(|i| {
            let server = replicas[i % 2].clone();
            let (msg, alice) = (confirmed.clone(), alice.clone());
            tokio::spawn(async move {
                let r = server.handle(msg, &alice).await.expect("a response");
                serde_json::to_string(&r).expect("serializes")
            })
        });
        let mut answers = Vec::new();
        for p in presentations.collect::<Vec<_>>() {
            answers.push(p.await.expect("joined"));
        }
        let took = began.elapsed();
        assert_eq!(
            payments.0.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the effect ran once in the fleet"
        );
        assert!(answers[0].contains("paid 5 (run 1)"), "{}", answers[0]);
        assert!(
            answers.iter().all(|a| *a == answers[0]),
            "every presentation gets the same bytes: {answers:?}"
        );
        for server in &replicas {
            let later = server
                .handle(confirmed.clone(), &alice)
                .await
                .expect("a response");
            assert_eq!(serde_json::to_string(&later).expect("serializes"), answers[0]);
        }
        assert_eq!(payments.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        println!(
            "redis fleet: 32 presentations of one single-use round over 2 replicas in {took:?}: 1 run, 32 identical answers ({} bytes)",
            answers[0].len()
        );
    });
    drop(redis);
}

/// `redis+unix://`: the same store over a Unix socket (no network at all).
#[test]
fn a_store_over_a_unix_socket() {
    let sockets = tempfile::tempdir().expect("tempdir");
    let socket = sockets.path().join("redis.sock");
    let extra = vec![
        "--unixsocket".into(),
        socket.display().to_string(),
        "--unixsocketperm".into(),
        "700".into(),
    ];
    let Some(redis) = redis_or_skip_with("a_store_over_a_unix_socket", extra) else {
        return;
    };
    runtime().block_on(async {
        let url = format!("redis+unix://{}", socket.display());
        let s = RedisStore::connect(&url)
            .await
            .expect("connect over the socket");
        s.create(&task("unix", 1)).await.expect("create");
        assert_eq!(s.get("unix").await.expect("get"), Some(task("unix", 1)));
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(s.claim("unix", "alice", later).await, Ok(Claim::Claimed));
        s.complete("unix", vec![0xff, 0]).await.expect("complete");
        // the TCP store sees what the socket store wrote: one Redis
        let tcp = RedisStore::connect(&redis.url())
            .await
            .expect("connect over TCP");
        assert_eq!(
            tcp.claim("unix", "alice", later).await,
            Ok(Claim::Done(vec![0xff, 0]))
        );
        // the change feed over the socket reaches a feed over TCP: one Redis
        let (s, tcp) = (Arc::new(s), Arc::new(tcp));
        let mut p =
            mcp_tool_tests::feed_suite::connect(Arc::new(s.feed()), Arc::new(tcp.feed())).await;
        mcp_tool_tests::feed_suite::once_in_order(
            &mut p,
            "redis-unix",
            10,
            Duration::from_millis(300),
        )
        .await;
        println!("redis store over a Unix socket: {url}");
    });
    drop(redis);
}

mod fleet;

/// Three `serve` processes on one Redis (`--store redis://…`): 64 replays of a confirmed
/// `donate` round donate once with one distinct answer; then single-use calls and tasks in
/// flight while Redis is killed (`kill -9`) and started again on its append-only file: no
/// donation twice, retried calls answered, tasks completed, no server restarted.
#[test]
fn a_fleet_on_redis() {
    let Some(mut redis) = redis_or_skip("a_fleet_on_redis") else {
        return;
    };
    let exe = env!("CARGO_BIN_EXE_example_serve");
    let url = redis.url();
    let store = ["--store", url.as_str()];
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        fleet::replay_across_replicas(exe, dir.path(), &store, "redis").await;

        let dir = tempfile::tempdir().unwrap();
        let outage = async {
            tokio::time::sleep(Duration::from_millis(700)).await;
            let down = Instant::now();
            redis.kill();
            tokio::time::sleep(Duration::from_millis(1_000)).await;
            tokio::task::block_in_place(|| redis.start_again()).expect("start redis again");
            println!(
                "redis fleet: Redis was down for {} ms",
                down.elapsed().as_millis()
            );
        };
        let report =
            fleet::donations_through_an_outage(exe, dir.path(), &store, "redis-outage", outage)
                .await;
        report.assert_recovered();
    });
}

/// The change feed on Redis (`mcp_tool_tests::feed_suite`): two stores (two replicas), a
/// hub connected to each one's feed. The suite's burst (100 changes) and foreign bytes; a
/// store with another prefix hears nothing; the latency over 1,000 changes (one every
/// 2 ms); then Redis killed (`kill -9`) and started again: changes published after the
/// feed is back arrive. Prints the figures.
#[test]
fn changes_cross_replicas_through_redis_pubsub() {
    use mcp_tool_runtime::store::{Change, Changes};
    use mcp_tool_tests::feed_suite;

    let Some(mut redis) = redis_or_skip("changes_cross_replicas_through_redis_pubsub") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let options = Options {
            prefix: "feed:".into(),
            response_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(500),
            backoff_initial: Duration::from_millis(50),
            backoff_max: Duration::from_millis(500),
            ..Options::default()
        };
        let store = || async {
            Arc::new(
                RedisStore::connect_with(&url, options.clone())
                    .await
                    .expect("connect"),
            )
        };
        let (s1, s2) = (store().await, store().await);
        assert_eq!(s1.feed().channel(), b"feed:changes");
        let mut p = feed_suite::connect(Arc::new(s1.feed()), Arc::new(s2.feed())).await;

        // another prefix, another channel
        let other = Arc::new(
            RedisStore::connect_with(
                &url,
                Options {
                    prefix: "other:".into(),
                    ..options.clone()
                },
            )
            .await
            .expect("connect"),
        );
        let deaf = Changes::new();
        deaf.connect(Arc::new(other.feed())).await.expect("listen");
        let mut rd = deaf.subscribe();

        feed_suite::once_in_order(&mut p, "redis", 100, Duration::from_millis(300)).await;
        let (sent, arrived) = feed_suite::flood(&mut p, "redis", 2000).await;
        println!(
            "redis feed: 2,000 foreign messages (half of them 4,000 bytes) sent in {} ms; a change after them arrived {} ms later",
            sent.as_millis(),
            arrived.as_millis()
        );
        let lat = feed_suite::latency(&mut p, "redis", 1000, Duration::from_millis(2)).await;
        println!(
            "redis feed: publish on A -> receive on B over {} changes: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.0} bytes per change",
            lat.n, lat.p50, lat.p99, lat.max, lat.bytes
        );
        assert_eq!(
            feed_suite::drain(&mut rd, Duration::from_millis(200)).await,
            Vec::<Change>::new(),
            "another prefix heard this deployment's changes"
        );

        let restart = async {
            redis.kill();
            tokio::time::sleep(Duration::from_millis(500)).await;
            tokio::task::block_in_place(|| redis.start_again()).expect("start redis again");
        };
        let recovered =
            feed_suite::after_recovery(&mut p, "redis", restart, Duration::from_secs(30)).await;
        println!(
            "redis feed: changes flow again {} ms after Redis was back",
            recovered.as_millis()
        );
    });
}

/// Two `serve` replicas on one Redis: a client listening on B hears a note edited and tasks
/// driven through A (`fleet::listen`).
#[test]
fn a_listener_hears_another_replica_through_redis() {
    let Some(redis) = redis_or_skip("a_listener_hears_another_replica_through_redis") else {
        return;
    };
    let exe = env!("CARGO_BIN_EXE_example_serve");
    let url = redis.url();
    runtime().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        fleet::listen::a_listener_on_b_hears_what_is_done_through_a(
            exe,
            dir.path(),
            &["--store", &url],
            "redis",
        )
        .await;
    });
    drop(redis);
}

/// A store that opens but whose feed cannot listen stops `serve` at start-up, clearly: a
/// Redis user allowed every key and command but no pub/sub channel (Redis 7's default for
/// a new user, `resetchannels`) connects the store, then `SUBSCRIBE` is refused (NOPERM).
#[test]
fn serve_refuses_to_start_when_the_feed_cannot_listen() {
    let Some(redis) = redis_or_skip("serve_refuses_to_start_when_the_feed_cannot_listen") else {
        return;
    };
    let url = redis.url();
    runtime().block_on(async {
        let raw = redis::Client::open(url.as_str()).expect("client");
        let mut con = raw
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection");
        let () = redis::cmd("ACL")
            .arg(
                &[
                    "SETUSER",
                    "nochannels",
                    "on",
                    ">pw",
                    "~*",
                    "+@all",
                    "resetchannels",
                ][..],
            )
            .query_async(&mut con)
            .await
            .expect("ACL SETUSER");
    });
    let limited = format!("redis://nochannels:pw@127.0.0.1:{}/", redis.port);
    // the store itself works for that user
    runtime().block_on(async {
        let s = RedisStore::connect(&limited)
            .await
            .expect("store for the user");
        s.create(&task("acl", 1)).await.expect("create");
    });
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_example_serve"))
        .args(["--http", "127.0.0.1:0", "--store", &limited])
        .arg("--db")
        .arg(dir.path().join("notes.sqlite3"))
        .env("MCP_TOOL_STATE_KEY", format!("k1:{}", "cd".repeat(32)))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run serve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "serve started: {stderr}");
    assert!(
        stderr.contains("the change feed cannot listen")
            && stderr.to_ascii_lowercase().contains("noperm"),
        "{stderr}"
    );
    assert!(!stderr.contains("listening on"), "{stderr}");
    println!(
        "serve without a feed: {}",
        stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" | ")
    );
}
