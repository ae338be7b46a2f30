//! A shared store on Redis for fleets of `mcp-tool-runtime` servers: [`RedisStore`] keeps
//! both the tasks ([`TaskStore`]) and the ledger of single-use rounds ([`Ledger`]), so
//! every replica connected to the same Redis sees the same tasks and the same claims.
//!
//! **Layout.** Every key starts with a prefix (default `mcp:`, see [`Options::prefix`]):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `<prefix>schema` | string | the layout version ([`SCHEMA_VERSION`]); set on connect, a newer one is refused |
//! | `<prefix>task:<id>` | hash | `v` version, `b` body, `e` expiry (Unix ms, absent: never) |
//! | `<prefix>tasks:expiry` | sorted set | the ids of tasks with an expiry, scored by it |
//! | `<prefix>once:<id>` | hash | `p` principal, `o` outcome (absent while running); a Redis TTL at the state's expiry |
//!
//! Every write is one Lua script (atomic on the server): `create` writes the hash only if
//! the key is free; `swap` compares the stored version with the expected one and writes
//! hash and index together; `remove_expired` takes ids scored strictly below `now_ms` from
//! the index and deletes them with their hashes (in batches of [`REMOVE_BATCH`], each
//! atomic). Task expiry is *not* a Redis TTL: a task stays until `remove_expired` says so,
//! as with every other backend. A claim is a script (free id: the hash and its `PEXPIREAT`;
//! the same principal with an outcome: the outcome; otherwise running), `complete` fills
//! the outcome of an entry that exists and has none (keeping its TTL), `release` deletes an
//! entry without an outcome. Ledger entries expire by their Redis TTL, so
//! [`Ledger::remove_expired`] answers `Ok(0)`. Bodies and outcomes are bytes to Redis:
//! any byte string comes back unchanged.
//!
//! **Durability.** Exactly-once rounds rely on a claim that outlives a Redis restart: run
//! Redis with `appendonly yes` and `appendfsync always` (the default `everysec` may lose the
//! last second of claims on a crash, and without the append-only file a restart loses all
//! of them: a replayed state would run its round again). For the same reason set
//! `maxmemory-policy noeviction` (the default): a full Redis then refuses new claims (the
//! round does not run) instead of evicting held ones.
//!
//! **TLS.** `rediss://host:port/` connects over TLS (rustls with the *ring* provider,
//! which this crate installs as the process default when none is), verifying the server's
//! certificate against the operating system's trust store, or against the CA of
//! [`Options::ca_pem`]. The URL fragment `#insecure` (no verification) is refused. Use TLS
//! across any network: a plaintext connection carries the password, task bodies and
//! outcomes in clear. `redis+unix:///path/to/redis.sock` connects over a Unix socket.
//!
//! **Scope.** One Redis server (with replicas for failover), not Redis Cluster: the
//! scripts touch a task's hash and the shared expiry index together.
//!
//! **Change feed.** [`RedisStore::feed`] gives the [`RedisFeed`] of the store's deployment:
//! `PUBLISH`/`SUBSCRIBE` on the channel `<prefix>changes`, so that the runtime's changes
//! (list changes, resource updates, task statuses) reach every replica's listeners
//! (`server.changes().connect(Arc::new(store.feed()))`). Publishing goes through the
//! store's connection; listening holds a pub/sub connection of its own (same URL, same TLS
//! checks) that reconnects with the store's backoff. At most once: messages published while
//! it is away are lost (Redis pub/sub keeps nothing). A process that cannot hold a
//! connection (a Lambda function) cannot listen.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_tool_store_redis::RedisStore;
//! let store = RedisStore::connect("rediss://:secret@redis.internal:6380/0").await?;
//! let server = mcp_tool_runtime::Server::builder(mcp_tool_runtime::protocol::Implementation::new("s", "1"))
//!     .store(std::sync::Arc::new(store))
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```

#![warn(missing_docs)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{Claim, Ledger, LedgerError, ReconnectGate, backoff};
use mcp_tool_runtime::tasks::{Counted, StoreError, StoredTask, TaskAllowance, TaskStore};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisError, RedisResult, Script, Value};

mod feed;
pub use feed::RedisFeed;

/// The key layout this crate writes, stored in `<prefix>schema`. A store finding a higher
/// number refuses to connect ([`ConnectError::Schema`]): a newer release wrote it.
pub const SCHEMA_VERSION: u64 = 1;

/// How many expired tasks one `remove_expired` script deletes at most (it runs again until
/// fewer are left), so that a large sweep never blocks Redis for long.
pub const REMOVE_BATCH: usize = 500;

/// How the store connects and behaves while Redis is away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The start of every key. Default `mcp:`. Two services on one Redis use two prefixes.
    pub prefix: String,
    /// A command whose answer takes longer fails. Default 2 s.
    pub response_timeout: Duration,
    /// A connection attempt that takes longer fails. Default 2 s.
    pub connect_timeout: Duration,
    /// After a failure to reach Redis, operations fail at once (without dialling) for this
    /// long; it doubles per failure. Default 100 ms.
    pub backoff_initial: Duration,
    /// The longest such wait. Default 2 s.
    pub backoff_max: Duration,
    /// For `rediss://`: the CA certificates (PEM) the server's certificate must chain to,
    /// instead of the operating system's trust store.
    pub ca_pem: Option<Vec<u8>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefix: "mcp:".into(),
            response_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
            ca_pem: None,
        }
    }
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL is not usable: not `redis://`, `rediss://` or `redis+unix://`, asks for an
    /// unverified TLS connection (`#insecure`), or does not parse.
    #[error("redis URL: {0}")]
    Url(String),
    /// The keys under the prefix were written by a newer layout (or are not this store's).
    #[error("redis store layout: {0}")]
    Schema(String),
    /// Connecting or the first commands failed.
    #[error("redis: {0}")]
    Redis(#[from] RedisError),
}

/// The pauses between attempts to reach Redis: from [`Options::backoff_initial`], doubling
/// up to [`Options::backoff_max`], without end.
pub(crate) fn backoff_schedule(options: &Options) -> impl Iterator<Item = Duration> + use<> {
    backoff(options.backoff_initial, options.backoff_max)
}

/// The Lua scripts (see the crate documentation for the layout).
struct Scripts {
    schema: Script,
    create: Script,
    create_counted: Script,
    swap: Script,
    remove_expired: Script,
    claim: Script,
    complete: Script,
    release: Script,
}

impl Scripts {
    fn new() -> Self {
        Scripts {
            // KEYS: schema. ARGV: this version. Sets it when absent; returns the stored one.
            schema: Script::new(
                "local v = redis.call('GET', KEYS[1])
                 if not v then redis.call('SET', KEYS[1], ARGV[1]) return ARGV[1] end
                 return v",
            ),
            // KEYS: task, index. ARGV: id, version, body, expiry ('' for none).
            create: Script::new(
                "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
                 redis.call('HSET', KEYS[1], 'v', ARGV[2], 'b', ARGV[3])
                 if ARGV[4] ~= '' then
                   redis.call('HSET', KEYS[1], 'e', ARGV[4])
                   redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
                 end
                 return 1",
            ),
            // KEYS: task, index, counted (all), counted (the owner's). ARGV: id, version,
            // body, expiry ('' for none), now_ms, per owner, total. Forgets the counted
            // tasks expired before now_ms, then stores the task only if the owner's and all
            // counted tasks stay under their allowances: 0 stored, 1 the owner's allowance
            // is used up, 2 the total, 3 the id is taken.
            create_counted: Script::new(
                "local score = ARGV[4]
                 if score == '' then score = '+inf' end
                 redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[5])
                 redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[5])
                 if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return 2 end
                 if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[6]) then return 1 end
                 if redis.call('EXISTS', KEYS[1]) == 1 then return 3 end
                 redis.call('HSET', KEYS[1], 'v', ARGV[2], 'b', ARGV[3])
                 if ARGV[4] ~= '' then
                   redis.call('HSET', KEYS[1], 'e', ARGV[4])
                   redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
                 end
                 redis.call('ZADD', KEYS[3], score, ARGV[1])
                 redis.call('ZADD', KEYS[4], score, ARGV[1])
                 return 0",
            ),
            // KEYS: task, index. ARGV: id, expected version, new version, body, expiry.
            // Versions are compared as the decimal strings they are stored as.
            swap: Script::new(
                "if redis.call('HGET', KEYS[1], 'v') ~= ARGV[2] then return 0 end
                 redis.call('HSET', KEYS[1], 'v', ARGV[3], 'b', ARGV[4])
                 if ARGV[5] ~= '' then
                   redis.call('HSET', KEYS[1], 'e', ARGV[5])
                   redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
                 else
                   redis.call('HDEL', KEYS[1], 'e')
                   redis.call('ZREM', KEYS[2], ARGV[1])
                 end
                 return 1",
            ),
            // KEYS: index. ARGV: task key prefix, now_ms, batch. Deletes the tasks scored
            // strictly below now_ms, at most a batch; returns how many.
            remove_expired: Script::new(
                "local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
                 for _, id in ipairs(ids) do
                   redis.call('DEL', ARGV[1] .. id)
                   redis.call('ZREM', KEYS[1], id)
                 end
                 return #ids",
            ),
            // KEYS: entry. ARGV: principal, expiry (Unix ms).
            // Returns {0} claimed, {1} running, {2, outcome} done.
            claim: Script::new(
                "local e = redis.call('HMGET', KEYS[1], 'p', 'o')
                 if e[1] then
                   if e[1] == ARGV[1] and e[2] then return {2, e[2]} end
                   return {1}
                 end
                 redis.call('HSET', KEYS[1], 'p', ARGV[1])
                 redis.call('PEXPIREAT', KEYS[1], ARGV[2])
                 return {0}",
            ),
            // KEYS: entry. ARGV: outcome. Only an existing entry without an outcome; the
            // entry's TTL stays (HSETNX never touches it).
            complete: Script::new(
                "if redis.call('HEXISTS', KEYS[1], 'p') == 0 then return 0 end
                 return redis.call('HSETNX', KEYS[1], 'o', ARGV[1])",
            ),
            // KEYS: entry. Deletes it only while it has no outcome.
            release: Script::new(
                "if redis.call('HEXISTS', KEYS[1], 'p') == 1 and redis.call('HEXISTS', KEYS[1], 'o') == 0 then
                   return redis.call('DEL', KEYS[1])
                 end
                 return 0",
            ),
        }
    }
}

/// Tasks and single-use claims in Redis, over one multiplexed connection that reconnects.
///
/// **Outages.** Every command has a response timeout and every connection attempt a
/// connect timeout ([`Options`]); an operation while Redis cannot be reached fails with
/// [`StoreError::Backend`] / [`LedgerError`] (the runtime answers an internal error the
/// client may retry; a single-use round does not run). After such a failure, operations
/// fail at once for a backoff period ([`Options::backoff_initial`], doubling up to
/// [`Options::backoff_max`]); the first one after it dials again. Once Redis is back, the
/// same store works again: nobody reopens it. An operation whose connection broke after
/// the command was sent is not retried (a `swap` or a claim may have been applied).
pub struct RedisStore {
    con: ConnectionManager,
    /// The client the connection was made with: the change feed dials its own from it.
    client: redis::Client,
    options: Options,
    gate: ReconnectGate,
    scripts: Scripts,
    /// `<prefix>tasks:expiry`.
    index: Vec<u8>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.options.prefix)
            .finish_non_exhaustive()
    }
}

/// Unix milliseconds of `t` (0 before 1970).
fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A claim's `PEXPIREAT`: Unix ms, at most `i64::MAX` (Redis refuses more, and a refused
/// `PEXPIREAT` after the `HSET` of the script would leave an entry without a TTL).
fn expiry_ms(t: SystemTime) -> u64 {
    unix_ms(t).min(i64::MAX as u64)
}

/// Whether `e` says Redis could not be reached (as opposed to a command's own error).
fn is_unreachable(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.is_unrecoverable_error()
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        Value::SimpleString(s) => s.parse().ok(),
        _ => None,
    }
}

fn bytes(v: Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        _ => None,
    }
}

/// Checks the URL's scheme, refuses unverified TLS and makes the client.
fn client(url: &str, options: &Options) -> Result<redis::Client, ConnectError> {
    let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
    match scheme {
        "redis" | "redis+unix" | "unix" => {
            if options.ca_pem.is_some() {
                return Err(ConnectError::Url(
                    "a CA is given but the URL is not rediss:// (no TLS)".into(),
                ));
            }
            Ok(redis::Client::open(url)?)
        }
        "rediss" => {
            if url.contains('#') {
                return Err(ConnectError::Url(
                    "rediss:// with a fragment (#insecure) would skip certificate verification: refused"
                        .into(),
                ));
            }
            // redis' rustls configuration takes the process-wide provider; ring when
            // nobody chose one (an error here means another provider is installed: fine).
            let _ = rustls::crypto::ring::default_provider().install_default();
            Ok(match &options.ca_pem {
                Some(pem) => redis::Client::build_with_tls(
                    url,
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: Some(pem.clone()),
                    },
                )?,
                None => redis::Client::open(url)?,
            })
        }
        other => Err(ConnectError::Url(format!(
            "unsupported scheme `{other}`: use redis://, rediss:// or redis+unix://"
        ))),
    }
}

impl RedisStore {
    /// Connects to `url` (`redis://[user:password@]host[:port][/db]`, `rediss://…` for TLS,
    /// `redis+unix:///path`) with the default [`Options`] (prefix `mcp:`).
    ///
    /// # Errors
    /// As [`connect_with`](Self::connect_with).
    pub async fn connect(url: &str) -> Result<Self, ConnectError> {
        Self::connect_with(url, Options::default()).await
    }

    /// Connects with `options`: dials once (so that a wrong address, password or
    /// certificate shows at once), then reads or sets `<prefix>schema`.
    ///
    /// # Errors
    /// [`ConnectError::Url`] for an unusable URL, [`ConnectError::Redis`] when Redis cannot
    /// be reached or refuses, [`ConnectError::Schema`] when the prefix holds a newer (or a
    /// foreign) layout.
    pub async fn connect_with(url: &str, options: Options) -> Result<Self, ConnectError> {
        let client = client(url, &options)?;
        // One attempt per reconnect (no retries inside the manager: an operation never
        // waits out a backoff); the store's own gate spaces the attempts.
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(0)
            .set_response_timeout(Some(options.response_timeout))
            .set_connection_timeout(Some(options.connect_timeout));
        let limit = options.connect_timeout + options.response_timeout;
        let mut con =
            tokio::time::timeout(limit, client.get_connection_manager_with_config(config))
                .await
                .map_err(|_| {
                    ConnectError::Redis(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no connection within the timeouts",
                    )))
                })??;
        let scripts = Scripts::new();
        let schema_key = format!("{}schema", options.prefix);
        let found: Value = scripts
            .schema
            .key(&schema_key)
            .arg(SCHEMA_VERSION)
            .invoke_async(&mut con)
            .await?;
        let found = int(&found).and_then(|v| u64::try_from(v).ok());
        match found {
            Some(v) if v <= SCHEMA_VERSION => {}
            Some(v) => {
                return Err(ConnectError::Schema(format!(
                    "`{schema_key}` says layout {v}, this release knows {SCHEMA_VERSION}: upgrade, or use another prefix"
                )));
            }
            None => {
                return Err(ConnectError::Schema(format!(
                    "`{schema_key}` holds something other than a layout version: another program's key? use another prefix"
                )));
            }
        }
        let index = format!("{}tasks:expiry", options.prefix).into_bytes();
        Ok(RedisStore {
            con,
            client,
            gate: ReconnectGate::new(options.backoff_initial, options.backoff_max),
            options,
            scripts,
            index,
        })
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    fn key(&self, kind: &str, id: &str) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.options.prefix.len() + kind.len() + id.len());
        k.extend_from_slice(self.options.prefix.as_bytes());
        k.extend_from_slice(kind.as_bytes());
        k.extend_from_slice(id.as_bytes());
        k
    }

    /// Runs one script or command on the connection, through the fail-fast gate and
    /// bounded by the timeouts; the error text is for the log.
    async fn exec<F, Fut>(&self, op: F) -> Result<Value, String>
    where
        F: Fn(ConnectionManager) -> Fut,
        Fut: Future<Output = RedisResult<Value>>,
    {
        if !self.gate.is_open() {
            return Err("redis is unreachable (reconnecting)".into());
        }
        let limit =
            self.options.response_timeout + self.options.connect_timeout + Duration::from_secs(1);
        let attempt = || async {
            tokio::time::timeout(limit, op(self.con.clone()))
                .await
                .unwrap_or_else(|_| {
                    Err(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer from redis within {limit:?}"),
                    )))
                })
        };
        let mut result = attempt().await;
        // A refused connection sent nothing: the manager has started a fresh dial, which a
        // second attempt awaits (Redis may be back since the last failure).
        if let Err(e) = &result
            && e.is_connection_refusal()
        {
            result = attempt().await;
        }
        match result {
            Ok(v) => {
                if self.gate.reached() {
                    tracing::info!("redis store reconnected");
                }
                Ok(v)
            }
            Err(e) if is_unreachable(&e) => {
                let wait = self.gate.unreachable();
                tracing::warn!(error = %e, retry_in_ms = wait.as_millis() as u64, "redis store cannot reach redis");
                Err(e.to_string())
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

fn task_error(e: String) -> StoreError {
    StoreError::Backend(format!("redis: {e}"))
}

fn ledger_error(e: String) -> LedgerError {
    LedgerError(format!("redis: {e}"))
}

fn expiry_arg(e: Option<u64>) -> String {
    e.map(|e| e.to_string()).unwrap_or_default()
}

impl TaskStore for RedisStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key("task:", &task.id);
            let expiry = expiry_arg(task.expires_at_ms);
            let v = self
                .exec(|mut con| {
                    let (key, expiry) = (&key, &expiry);
                    async move {
                        self.scripts
                            .create
                            .key(key)
                            .key(&self.index)
                            .arg(&task.id)
                            .arg(task.version)
                            .arg(task.body.as_bytes())
                            .arg(expiry)
                            .invoke_async(&mut con)
                            .await
                    }
                })
                .await
                .map_err(task_error)?;
            match int(&v) {
                Some(1) => Ok(()),
                Some(0) => Err(StoreError::Exists),
                _ => Err(task_error(format!("unexpected answer to create: {v:?}"))),
            }
        })
    }

    /// Counts and stores in one script: every replica on the Redis counts the same sorted
    /// sets (`counted`, all tasks, and `owner:<owner>`, scored by expiry), so the allowances
    /// hold for all of them. Tasks stored before this build (by `create`) are not counted.
    fn create_counted<'a>(
        &'a self,
        task: &'a StoredTask,
        owner: &'a str,
        allowance: TaskAllowance,
    ) -> BoxFuture<'a, Result<Counted, StoreError>> {
        Box::pin(async move {
            let key = self.key("task:", &task.id);
            let all = self.key("counted", "");
            let mine = self.key("owner:", owner);
            let expiry = expiry_arg(task.expires_at_ms);
            let v = self
                .exec(|mut con| {
                    let (key, all, mine, expiry) = (&key, &all, &mine, &expiry);
                    async move {
                        self.scripts
                            .create_counted
                            .key(key)
                            .key(&self.index)
                            .key(all)
                            .key(mine)
                            .arg(&task.id)
                            .arg(task.version)
                            .arg(task.body.as_bytes())
                            .arg(expiry)
                            .arg(allowance.now_ms)
                            .arg(allowance.per_owner)
                            .arg(allowance.total)
                            .invoke_async(&mut con)
                            .await
                    }
                })
                .await
                .map_err(task_error)?;
            match int(&v) {
                Some(0) => Ok(Counted::Stored),
                Some(1) => Ok(Counted::OwnerFull),
                Some(2) => Ok(Counted::StoreFull),
                Some(3) => Err(StoreError::Exists),
                _ => Err(task_error(format!(
                    "unexpected answer to create_counted: {v:?}"
                ))),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        Box::pin(async move {
            let key = self.key("task:", id);
            let v = self
                .exec(|mut con| {
                    let key = &key;
                    async move {
                        redis::cmd("HMGET")
                            .arg(key)
                            .arg("v")
                            .arg("e")
                            .arg("b")
                            .query_async(&mut con)
                            .await
                    }
                })
                .await
                .map_err(task_error)?;
            let odd = || task_error(format!("task `{id}`: unexpected stored value"));
            let Value::Array(fields) = v else {
                return Err(odd());
            };
            let mut fields = fields.into_iter();
            let (Some(version), Some(expiry), Some(body)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(odd());
            };
            if version == Value::Nil {
                return Ok(None);
            }
            let version = int(&version)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(odd)?;
            let expires_at_ms = match expiry {
                Value::Nil => None,
                e => Some(
                    bytes(e)
                        .and_then(|b| String::from_utf8(b).ok())
                        .and_then(|s| s.parse::<u64>().ok())
                        .ok_or_else(odd)?,
                ),
            };
            let body = bytes(body)
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(odd)?;
            Ok(Some(StoredTask {
                id: id.to_owned(),
                version,
                expires_at_ms,
                body,
            }))
        })
    }

    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let Some(expected) = task.version.checked_sub(1).filter(|v| *v > 0) else {
                return Ok(false);
            };
            let key = self.key("task:", &task.id);
            let expiry = expiry_arg(task.expires_at_ms);
            let v = self
                .exec(|mut con| {
                    let (key, expiry) = (&key, &expiry);
                    async move {
                        self.scripts
                            .swap
                            .key(key)
                            .key(&self.index)
                            .arg(&task.id)
                            .arg(expected)
                            .arg(task.version)
                            .arg(task.body.as_bytes())
                            .arg(expiry)
                            .invoke_async(&mut con)
                            .await
                    }
                })
                .await
                .map_err(task_error)?;
            Ok(int(&v) == Some(1))
        })
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(async move {
            let task_prefix = self.key("task:", "");
            let mut total = 0u64;
            loop {
                let v = self
                    .exec(|mut con| {
                        let task_prefix = &task_prefix;
                        async move {
                            self.scripts
                                .remove_expired
                                .key(&self.index)
                                .arg(task_prefix)
                                .arg(now_ms)
                                .arg(REMOVE_BATCH)
                                .invoke_async(&mut con)
                                .await
                        }
                    })
                    .await
                    .map_err(task_error)?;
                let n = int(&v)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| task_error(format!("unexpected answer: {v:?}")))?;
                total += n;
                if n < REMOVE_BATCH as u64 {
                    return Ok(total);
                }
            }
        })
    }
}

impl Ledger for RedisStore {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        Box::pin(async move {
            let key = self.key("once:", id);
            let at = expiry_ms(expires);
            let v = self
                .exec(|mut con| {
                    let key = &key;
                    async move {
                        self.scripts
                            .claim
                            .key(key)
                            .arg(principal)
                            .arg(at)
                            .invoke_async(&mut con)
                            .await
                    }
                })
                .await
                .map_err(ledger_error)?;
            let odd = |v: &Value| ledger_error(format!("unexpected answer to a claim: {v:?}"));
            let Value::Array(parts) = v else {
                return Err(odd(&v));
            };
            match (parts.first().and_then(int), parts.get(1)) {
                (Some(0), None) => Ok(Claim::Claimed),
                (Some(1), None) => Ok(Claim::Running),
                (Some(2), Some(_)) => {
                    let outcome = parts.into_iter().nth(1).and_then(bytes);
                    outcome
                        .map(Claim::Done)
                        .ok_or_else(|| ledger_error("a stored outcome is not a string".into()))
                }
                _ => Err(odd(&Value::Array(parts))),
            }
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            let key = self.key("once:", id);
            self.exec(|mut con| {
                let (key, outcome) = (&key, &outcome);
                async move {
                    self.scripts
                        .complete
                        .key(key)
                        .arg(outcome.as_slice())
                        .invoke_async(&mut con)
                        .await
                }
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            let key = self.key("once:", id);
            self.exec(|mut con| {
                let key = &key;
                async move { self.scripts.release.key(key).invoke_async(&mut con).await }
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn remove_expired(&self, _now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        // Entries carry a Redis TTL: Redis deletes them itself.
        Box::pin(std::future::ready(Ok(0)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn urls_are_checked_before_dialling() {
        let o = Options::default();
        assert!(matches!(client("http://h", &o), Err(ConnectError::Url(_))));
        assert!(matches!(client("h:6379", &o), Err(ConnectError::Url(_))));
        assert!(matches!(
            client("rediss://h:6380/#insecure", &o),
            Err(ConnectError::Url(_))
        ));
        let with_ca = Options {
            ca_pem: Some(b"pem".to_vec()),
            ..Options::default()
        };
        assert!(matches!(
            client("redis://h", &with_ca),
            Err(ConnectError::Url(_))
        ));
        assert!(client("redis://127.0.0.1:1/0", &o).is_ok());
        assert!(client("rediss://localhost:1/0", &o).is_ok());
        assert!(client("redis+unix:///tmp/redis.sock", &o).is_ok());
    }

    #[test]
    fn times_and_answers_convert() {
        assert_eq!(unix_ms(UNIX_EPOCH + Duration::from_millis(1_234)), 1_234);
        assert_eq!(unix_ms(UNIX_EPOCH - Duration::from_secs(1)), 0);
        let far = UNIX_EPOCH + Duration::from_secs(u64::MAX / 1_000);
        assert_eq!(expiry_ms(far), i64::MAX as u64);
        assert_eq!(int(&Value::Int(7)), Some(7));
        assert_eq!(int(&Value::BulkString(b"42".to_vec())), Some(42));
        assert_eq!(int(&Value::BulkString(b"x".to_vec())), None);
        assert_eq!(expiry_arg(None), "");
        assert_eq!(expiry_arg(Some(5)), "5");
    }

    #[tokio::test]
    async fn nothing_listening_fails_within_the_timeouts() {
        let options = Options {
            connect_timeout: Duration::from_millis(300),
            response_timeout: Duration::from_millis(300),
            ..Options::default()
        };
        let started = Instant::now();
        let r = RedisStore::connect_with("redis://127.0.0.1:1/", options).await;
        assert!(matches!(r, Err(ConnectError::Redis(_))), "{r:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
