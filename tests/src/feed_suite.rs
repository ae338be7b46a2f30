//! The feed suite: what every [`ChangeFeed`] (PostgreSQL `LISTEN/NOTIFY`, Redis pub/sub,
//! the polled SQLite table) must do, run against each backend from store_postgres.rs,
//! store_redis.rs and store_sqlite.rs. Two hubs ([`Changes`]) stand for two replicas, each
//! connected to a feed instance of its own on the same backend (its own connections).
//!
//! - [`once_in_order`]: a burst published on A reaches B once each, in order; A hears its
//!   own changes once (not echoed back by the feed); bytes that are not a change (another
//!   program on the channel) are dropped and break nothing;
//! - [`after_recovery`]: after the backend restarted, changes published once the feed is
//!   back arrive (the ones meanwhile may be lost: at most once);
//! - [`latency`]: publish on A → receive on B, p50/p99 over many changes, and the bytes one
//!   change takes on the feed (printed by the caller).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{Change, ChangeFeed, Changes, Deliver, FeedError};
use tokio::sync::broadcast;

/// A feed that counts what it publishes (messages and bytes), around the backend's.
pub struct Counting {
    inner: Arc<dyn ChangeFeed>,
    messages: AtomicUsize,
    bytes: AtomicUsize,
}

impl Counting {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ChangeFeed>) -> Arc<Counting> {
        Arc::new(Counting {
            inner,
            messages: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        })
    }

    /// Mean bytes per published message (0 before any).
    pub fn mean_bytes(&self) -> f64 {
        let n = self.messages.load(Ordering::Relaxed);
        if n == 0 {
            0.0
        } else {
            self.bytes.load(Ordering::Relaxed) as f64 / n as f64
        }
    }
}

impl ChangeFeed for Counting {
    fn publish<'a>(&'a self, message: &'a [u8]) -> BoxFuture<'a, Result<(), FeedError>> {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(message.len(), Ordering::Relaxed);
        self.inner.publish(message)
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Result<(), FeedError>> {
        self.inner.listen(deliver)
    }
}

/// Two replicas' hubs on one backend, and a listener on each.
pub struct Pair {
    /// Replica A's hub (connected to feed A, wrapped in [`Counting`]).
    pub a: Changes,
    /// Replica B's hub.
    pub b: Changes,
    /// A listener on A.
    pub ra: broadcast::Receiver<Arc<Change>>,
    /// A listener on B.
    pub rb: broadcast::Receiver<Arc<Change>>,
    /// Feed A, counting.
    pub counted: Arc<Counting>,
    /// Feed A itself (to publish raw bytes on the channel).
    pub raw_a: Arc<dyn ChangeFeed>,
}

/// Connects two fresh hubs to `feed_a` and `feed_b`.
///
/// # Panics
/// When a feed cannot listen (the test fails).
pub async fn connect(feed_a: Arc<dyn ChangeFeed>, feed_b: Arc<dyn ChangeFeed>) -> Pair {
    let (a, b) = (Changes::new(), Changes::new());
    let counted = Counting::new(feed_a.clone());
    a.connect(counted.clone()).await.expect("feed A listens");
    b.connect(feed_b).await.expect("feed B listens");
    let (ra, rb) = (a.subscribe(), b.subscribe());
    Pair {
        a,
        b,
        ra,
        rb,
        counted,
        raw_a: feed_a,
    }
}

fn updated(uri: String) -> Change {
    Change::ResourceUpdated { uri }
}

/// The next change on `rx` within `within`, or `None`.
pub async fn next(rx: &mut broadcast::Receiver<Arc<Change>>, within: Duration) -> Option<Change> {
    match tokio::time::timeout(within, rx.recv()).await {
        Ok(Ok(c)) => Some((*c).clone()),
        Ok(Err(e)) => panic!("listener: {e}"),
        Err(_) => None,
    }
}

/// Everything on `rx` until it is quiet for `quiet`.
pub async fn drain(rx: &mut broadcast::Receiver<Arc<Change>>, quiet: Duration) -> Vec<Change> {
    let mut got = Vec::new();
    while let Some(c) = next(rx, quiet).await {
        got.push(c);
    }
    got
}

/// A burst of `n` published on A arrives once each and in order on B; A's listener sees
/// each once (its own, not echoed); foreign bytes on the channel are dropped. `quiet`: how
/// long without a message means nothing more comes (a few poll intervals for a polled
/// feed).
pub async fn once_in_order(p: &mut Pair, label: &str, n: usize, quiet: Duration) {
    let want: Vec<Change> = (0..n)
        .map(|i| updated(format!("test://{label}/{i}")))
        .collect();
    for c in &want {
        p.a.publish(c.clone());
    }
    let mut got_b = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while got_b.len() < n && Instant::now() < deadline {
        match next(&mut p.rb, Duration::from_secs(5)).await {
            Some(c) => got_b.push(c),
            None => break,
        }
    }
    got_b.extend(drain(&mut p.rb, quiet).await);
    assert_eq!(got_b.len(), n, "{label}: B got {} of {n}", got_b.len());
    assert_eq!(got_b, want, "{label}: B got them out of order");
    let got_a = drain(&mut p.ra, quiet).await;
    assert_eq!(
        got_a, want,
        "{label}: A heard its own changes other than once"
    );

    // Another program writes to the channel: bytes that are not a change (not JSON, not
    // UTF-8, an unknown version, a truncated envelope) reach no listener; a change after
    // them does. A backend that only carries text may refuse the non-UTF-8 bytes.
    let foreign: [&[u8]; 5] = [
        b"not json",
        b"\xff\xfe\x00binary",
        br#"{"v":9,"o":"x","k":"tools"}"#,
        br#"{"v":1,"o":"x","k":"upd"#,
        b"",
    ];
    for bytes in foreign {
        let _ = p.raw_a.publish(bytes).await;
    }
    let after = updated(format!("test://{label}/after-foreign"));
    p.a.publish(after.clone());
    let got = next(&mut p.rb, Duration::from_secs(10)).await;
    assert_eq!(
        got,
        Some(after.clone()),
        "{label}: the change after foreign bytes"
    );
    assert_eq!(
        drain(&mut p.rb, quiet).await,
        vec![],
        "{label}: B after foreign bytes"
    );
    assert_eq!(
        drain(&mut p.ra, quiet).await,
        vec![after],
        "{label}: A after foreign bytes"
    );
}

/// Runs `restart` (the backend goes down and comes back), then publishes probes on A every
/// 200 ms until one reaches B (at most `within`), then a burst of 20 that must arrive
/// complete and in order. Returns how long after `restart` returned the first probe
/// arrived.
pub async fn after_recovery(
    p: &mut Pair,
    label: &str,
    restart: impl Future<Output = ()>,
    within: Duration,
) -> Duration {
    restart.await;
    let back = Instant::now();
    let mut i = 0u32;
    loop {
        assert!(
            back.elapsed() < within,
            "{label}: no change reached B within {within:?} of the restart"
        );
        p.a.publish(updated(format!("test://{label}/probe/{i}")));
        i += 1;
        if next(&mut p.rb, Duration::from_millis(200)).await.is_some() {
            break;
        }
    }
    let recovered = back.elapsed();
    // probes still in flight are not part of the burst
    let is_probe =
        |c: &Change| matches!(c, Change::ResourceUpdated { uri } if uri.contains("/probe/"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = drain(&mut p.rb, Duration::from_millis(200)).await;
    let want: Vec<Change> = (0..20)
        .map(|i| updated(format!("test://{label}/after/{i}")))
        .collect();
    for c in &want {
        p.a.publish(c.clone());
    }
    let mut got = Vec::new();
    while got.len() < want.len() {
        match next(&mut p.rb, Duration::from_secs(10)).await {
            Some(c) if is_probe(&c) => {}
            Some(c) => got.push(c),
            None => break,
        }
    }
    assert_eq!(got, want, "{label}: the burst after recovery");
    let _ = drain(&mut p.ra, Duration::from_millis(100)).await;
    recovered
}

/// Latencies of a feed, milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Latency {
    /// Changes measured.
    pub n: usize,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
    /// Mean bytes one change took on the feed.
    pub bytes: f64,
}

/// Publishes `n` changes on A, one every `spacing`, and times each from its publication
/// to its arrival on B. Every change must arrive.
pub async fn latency(p: &mut Pair, label: &str, n: usize, spacing: Duration) -> Latency {
    let sent: Arc<std::sync::Mutex<Vec<Option<Instant>>>> =
        Arc::new(std::sync::Mutex::new(vec![None; n]));
    let publisher = {
        let (a, sent, label) = (p.a.clone(), sent.clone(), label.to_owned());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(spacing);
            for i in 0..n {
                tick.tick().await;
                sent.lock().unwrap()[i] = Some(Instant::now());
                a.publish(updated(format!("test://{label}/lat/{i}")));
            }
        })
    };
    let mut ms = Vec::with_capacity(n);
    let prefix = format!("test://{label}/lat/");
    while ms.len() < n {
        let Some(c) = next(&mut p.rb, Duration::from_secs(10)).await else {
            panic!("{label}: {} of {n} changes arrived", ms.len());
        };
        let at = Instant::now();
        let Change::ResourceUpdated { uri } = c else {
            continue;
        };
        let Some(i) = uri
            .strip_prefix(&prefix)
            .and_then(|i| i.parse::<usize>().ok())
        else {
            continue;
        };
        let t0 = sent.lock().unwrap()[i].expect("published before received");
        ms.push(at.duration_since(t0).as_secs_f64() * 1000.0);
    }
    publisher.await.expect("publisher");
    let _ = drain(&mut p.ra, Duration::from_millis(100)).await;
    ms.sort_by(f64::total_cmp);
    let pct = |q: f64| ms[((ms.len() as f64 * q).ceil() as usize).clamp(1, ms.len()) - 1];
    Latency {
        n,
        p50: pct(0.50),
        p99: pct(0.99),
        max: ms[ms.len() - 1],
        bytes: p.counted.mean_bytes(),
    }
}

/// CPU time used so far by this process's threads named `name` (Linux: `/proc/self/task`,
/// each thread's `schedstat`, nanoseconds on the CPU; zero elsewhere).
pub fn cpu_of_threads(name: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let mut ns = 0u64;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
        ns += stat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(ns)
}

/// A foreign writer floods the channel with `n` messages that are not changes (as fast as
/// the backend takes them); a change published right after still reaches B, and nothing
/// else does. Returns how long the flood took to send and the change to arrive after it.
pub async fn flood(p: &mut Pair, label: &str, n: usize) -> (Duration, Duration) {
    let junk = vec![b'{'; 4000];
    let began = Instant::now();
    for i in 0..n {
        let msg: &[u8] = if i % 2 == 0 {
            &junk
        } else {
            b"{\"v\":1,\"o\":\"x\"}"
        };
        let _ = p.raw_a.publish(msg).await;
    }
    let sent = began.elapsed();
    let after = updated(format!("test://{label}/after-flood"));
    let t0 = Instant::now();
    p.a.publish(after.clone());
    // the first thing B hears is that change: nothing of the flood came through
    let got = next(&mut p.rb, Duration::from_secs(20)).await;
    let arrived = t0.elapsed();
    assert_eq!(got, Some(after), "{label}: after the flood");
    let _ = drain(&mut p.ra, Duration::from_millis(100)).await;
    (sent, arrived)
}
