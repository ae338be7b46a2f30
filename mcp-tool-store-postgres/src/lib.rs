//! A shared [`Store`](mcp_tool_runtime::store::Store) on PostgreSQL for fleets of
//! `mcp-tool-runtime` servers: tasks ([`TaskStore`]) and the ledger of single-use rounds
//! ([`Ledger`]). Every replica connects to the same database (and holds the same keyring),
//! so a task started on one replica is polled, answered, cancelled or taken over on any
//! other, and a single-use state claimed on one replica is claimed for the fleet: a replay
//! on another replica gets the stored outcome and runs nothing.
//!
//! **Tasks.** One row per task (`id`, `version`, `expires_at_ms`, `body`) in the table the
//! caller names: `create` is an `INSERT … ON CONFLICT DO NOTHING`, `swap` an `UPDATE …
//! WHERE version = expected` (a writer that lost the race changes nothing and retries on
//! the fresh row), `remove_expired` a `DELETE` on an index. The body is the runtime's JSON
//! record; the store does not read it.
//!
//! **Ledger.** One row per claimed single-use id (`id`, `principal`, `expires_ms`,
//! `outcome BYTEA`, NULL while the round runs) in the table `<table>_once`. A claim is one
//! statement, atomic across connections and replicas (of concurrent claims of one id,
//! PostgreSQL lets exactly one insert or take over the row; the others wait for its lock
//! and then find it held):
//!
//! ```sql
//! INSERT INTO t_once AS o (id, principal, expires_ms, outcome) VALUES ($1, $2, $3, NULL)
//!   ON CONFLICT (id) DO UPDATE SET principal = EXCLUDED.principal,
//!     expires_ms = EXCLUDED.expires_ms, outcome = NULL
//!   WHERE o.expires_ms <= $4          -- now: only an expired entry is taken over
//!   RETURNING 1
//! ```
//!
//! A row back means [`Claim::Claimed`]; none means the id is held, and a `SELECT` of the row
//! says by whom: [`Claim::Done`] with the outcome for the same principal once it is stored,
//! else [`Claim::Running`]. When the row went in between (released, expired, swept), the
//! claim starts over, at most [`PostgresStore::CLAIM_ATTEMPTS`] times. `complete` fills only
//! a held row (`outcome IS NULL`), `release` deletes only a row without outcome,
//! `remove_expired` deletes the rows whose expiry has passed.
//!
//! **Schema versions.** The table `mcp_schema (component, version)` records the version of
//! each store's schema (the component is the tasks table's name): version 1 is the tasks
//! table, version 2 adds `<table>_once`. Connecting applies the missing migrations in one
//! transaction under a transaction-level advisory lock (`pg_advisory_xact_lock`), so
//! replicas that start together migrate once; a tasks table made by the earlier,
//! unversioned store is adopted as version 1. A schema newer than this build knows is
//! refused ([`ConnectError::NewerSchema`]): an old binary never writes a schema it does not
//! understand.
//!
//! **TLS.** The connection is protected as [`Tls`] says, a choice every caller makes
//! (there is no default): [`Tls::VerifyFull`] (encrypted, the server's certificate chains to
//! the given roots and names the host: use this across any network), [`Tls::Require`]
//! (encrypted, the chain is verified but not the host name: libpq's `verify-ca`, which is
//! also what libpq's `require` does when given a root certificate), or [`Tls::Disable`]
//! (plaintext: only on loopback, a Unix socket or a private network you trust). With TLS the
//! connection never falls back to plaintext: a server without TLS is refused. The roots
//! ([`Roots`]) are a PEM file with the server's CA (libpq's `sslrootcert=PATH`), Mozilla's
//! roots compiled in, or the operating system's store (libpq's `sslrootcert=system`).
//! [`Tls::from_libpq`] reads the libpq names (`sslmode`, `sslrootcert`) for a command line
//! or the environment. TLS is rustls with the *ring* provider.
//!
//! **Change feed.** [`PostgresStore::feed`] gives the [`PostgresFeed`] of the store's
//! deployment: `LISTEN/NOTIFY` on the channel `<table>_changes`, so that the runtime's
//! changes (list changes, resource updates, task statuses) reach every replica's listeners
//! (`server.changes().connect(Arc::new(store.feed()))`). Publishing goes through the pool;
//! listening holds a connection of its own, dialled like the store's (same TLS), that
//! reconnects with the pool's backoff. At most once: notifications sent while it is away are
//! lost. A process that cannot hold a connection (a Lambda function) cannot listen.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcp_tool_store_postgres::{PostgresStore, Roots, Tls};
//! let tls = Tls::VerifyFull(Roots::CaFile("/etc/mcp/db-ca.pem".into()));
//! let store = PostgresStore::connect("host=db.internal port=5432 user=mcp dbname=mcp", "mcp_tasks", tls).await?;
//! // tasks in `mcp_tasks`, single-use claims in `mcp_tasks_once`
//! let server = mcp_tool_runtime::Server::builder(mcp_tool_runtime::protocol::Implementation::new("s", "1"))
//!     .store(Arc::new(store))
//!     .build()?;
//! # let _ = server; Ok(()) }
//! ```

#![warn(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deadpool_postgres::{Manager, Object, Pool, PoolError, Runtime};
use mcp_tool_runtime::manual::BoxFuture;
use mcp_tool_runtime::store::{Claim, Ledger, LedgerError, ReconnectGate, backoff};
use mcp_tool_runtime::tasks::{Counted, StoreError, StoredTask, TaskAllowance, TaskStore};
use rustls::RootCertStore;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_postgres::config::SslMode;
use tokio_postgres::{Client, NoTls};

mod feed;
pub use feed::PostgresFeed;

/// The migrations of a store's schema, in order, for the tasks table `t`: entry `i` takes
/// the schema from version `i` to `i + 1`. Append only; never edit a released entry.
fn migrations(t: &str) -> [String; 3] {
    [
        // 1: tasks (what the unversioned store made with `CREATE TABLE IF NOT EXISTS`)
        format!(
            "CREATE TABLE {t} (
                id TEXT PRIMARY KEY,
                version BIGINT NOT NULL,
                expires_at_ms BIGINT,
                body TEXT NOT NULL
            );
            CREATE INDEX {t}_expires ON {t} (expires_at_ms)
                WHERE expires_at_ms IS NOT NULL;"
        ),
        // 2: the ledger of single-use rounds
        format!(
            "CREATE TABLE {t}_once (
                id TEXT PRIMARY KEY,
                principal TEXT NOT NULL,
                expires_ms BIGINT NOT NULL,
                outcome BYTEA
            );
            CREATE INDEX {t}_once_expires ON {t}_once (expires_ms);"
        ),
        // 3: the owner of each task, and the function that counts and stores a new one in
        // one step (`create_counted`): under a lock of the table's tasks, each statement of
        // a volatile function reads what committed before it (READ COMMITTED), so the
        // count sees every task stored by another replica before the lock was taken
        format!(
            "ALTER TABLE {t} ADD COLUMN owner TEXT;
            CREATE INDEX {t}_owner ON {t} (owner, expires_at_ms) WHERE owner IS NOT NULL;
            CREATE FUNCTION {t}_create_counted(p_id TEXT, p_version BIGINT, p_expires BIGINT,
                p_body TEXT, p_owner TEXT, p_now BIGINT, p_per_owner BIGINT, p_total BIGINT)
            RETURNS INT LANGUAGE plpgsql VOLATILE AS $$
            DECLARE
                v_total BIGINT;
                v_mine BIGINT;
                v_rows INT;
            BEGIN
                PERFORM pg_advisory_xact_lock({COUNT_LOCK}, hashtext('{t}'));
                SELECT count(*), count(*) FILTER (WHERE owner = p_owner)
                    INTO v_total, v_mine FROM {t}
                    WHERE expires_at_ms IS NULL OR expires_at_ms >= p_now;
                IF v_total >= p_total THEN RETURN 2; END IF;
                IF v_mine >= p_per_owner THEN RETURN 1; END IF;
                INSERT INTO {t} (id, version, expires_at_ms, body, owner)
                    VALUES (p_id, p_version, p_expires, p_body, p_owner)
                    ON CONFLICT (id) DO NOTHING;
                GET DIAGNOSTICS v_rows = ROW_COUNT;
                IF v_rows = 0 THEN RETURN 3; END IF;
                RETURN 0;
            END $$;"
        ),
    ]
}

/// The first key of the advisory lock under which tasks are counted and created (the
/// second is the tasks table's name, hashed): "mcpt" in ASCII.
const COUNT_LOCK: i32 = 0x6d63_7074;

/// The key of the advisory lock migrations are applied under (one for every store of the
/// database: "mcp_sche" in ASCII).
const SCHEMA_LOCK: i64 = 0x6d63_705f_7363_6865;

/// Brings the schema of the store whose tasks table is `table` to
/// [`PostgresStore::SCHEMA_VERSION`]: one transaction under [`SCHEMA_LOCK`]. Returns the
/// version found (an unversioned tasks table counts as 1); a newer one is refused.
async fn migrate(client: &mut Client, table: &str) -> Result<i64, ConnectError> {
    let tx = client.transaction().await?;
    // Held to the end of the transaction: replicas connecting at once wait here, then find
    // the schema migrated.
    tx.batch_execute(&format!(
        "SELECT pg_advisory_xact_lock({SCHEMA_LOCK});
         CREATE TABLE IF NOT EXISTS mcp_schema (
            component TEXT PRIMARY KEY,
            version BIGINT NOT NULL
         );"
    ))
    .await?;
    let recorded = tx
        .query_opt(
            "SELECT version FROM mcp_schema WHERE component = $1",
            &[&table],
        )
        .await?
        .map(|r| r.try_get::<_, i64>(0))
        .transpose()?;
    let found = match recorded {
        Some(v) => v,
        None => {
            // No record: a fresh database (0), or a tasks table of the earlier, unversioned
            // store (1), recognised by its columns; any other table of that name is not ours.
            let row = tx
                .query_one(
                    "SELECT to_regclass($1::text) IS NOT NULL,
                        (SELECT count(*) FROM pg_attribute
                          WHERE attrelid = to_regclass($1::text) AND attnum > 0
                            AND NOT attisdropped
                            AND attname IN ('id', 'version', 'expires_at_ms', 'body'))",
                    &[&table],
                )
                .await?;
            let (exists, columns): (bool, i64) = (row.try_get(0)?, row.try_get(1)?);
            match (exists, columns) {
                (false, _) => 0,
                (true, 4) => 1,
                (true, _) => return Err(ConnectError::ForeignTable(table.to_owned())),
            }
        }
    };
    let known = PostgresStore::SCHEMA_VERSION;
    if found > known {
        return Err(ConnectError::NewerSchema {
            table: table.to_owned(),
            found,
            known,
        });
    }
    if recorded == Some(known) {
        tx.commit().await?;
        return Ok(found);
    }
    let steps = migrations(table);
    for step in steps.iter().skip(usize::try_from(found).unwrap_or(0)) {
        tx.batch_execute(step).await?;
    }
    tx.execute(
        "INSERT INTO mcp_schema (component, version) VALUES ($1, $2)
         ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version",
        &[&table, &known],
    )
    .await?;
    tx.commit().await?;
    if found < known {
        tracing::info!(table, from = found, to = known, "store schema migrated");
    }
    Ok(found)
}

/// How the store's connection to PostgreSQL is protected (libpq's `sslmode`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tls {
    /// No TLS: the connection (credentials included) is plaintext. Only for loopback, a
    /// Unix socket or a private network you trust (libpq's `disable`).
    Disable,
    /// TLS required; the server's certificate must chain to `Roots`, its host name is not
    /// checked (libpq's `verify-ca`, and libpq's `require` when it has a root certificate).
    /// Refuses a server without TLS.
    Require(Roots),
    /// TLS required; the server's certificate must chain to `Roots` and name the host the
    /// configuration gives (`host=`, which may differ from `hostaddr=`), as a DNS name or an
    /// IP address (libpq's `verify-full`). Refuses a server without TLS.
    VerifyFull(Roots),
}

/// The certificate authorities [`Tls::Require`] and [`Tls::VerifyFull`] trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// The CA certificates in a PEM file (libpq's `sslrootcert=PATH`), e.g. the private CA
    /// that signed the database's certificate.
    CaFile(PathBuf),
    /// The CA certificates as PEM text.
    CaPem(Vec<u8>),
    /// Mozilla's root certificates, compiled in (`webpki-roots`): a database with a
    /// certificate from a public CA.
    WebPki,
    /// The operating system's trust store (`rustls-native-certs`; libpq's
    /// `sslrootcert=system`).
    Native,
}

impl Tls {
    /// Reads libpq's names: `sslmode` is `disable`, `require`, `verify-ca` (the same as
    /// `require` here: a root is always verified) or `verify-full`; `sslrootcert` is a PEM
    /// file, `system` (the operating system's store) or `webpki` (Mozilla's roots), and
    /// defaults to `system` when TLS is asked for. `allow` and `prefer`, which fall back to
    /// plaintext without telling, are refused.
    ///
    /// # Errors
    /// [`ConnectError::Tls`] for another `sslmode`.
    pub fn from_libpq(sslmode: &str, sslrootcert: Option<&str>) -> Result<Tls, ConnectError> {
        let roots = || match sslrootcert {
            None | Some("system") => Roots::Native,
            Some("webpki") => Roots::WebPki,
            Some(path) => Roots::CaFile(path.into()),
        };
        match sslmode {
            "disable" => Ok(Tls::Disable),
            "require" | "verify-ca" => Ok(Tls::Require(roots())),
            "verify-full" => Ok(Tls::VerifyFull(roots())),
            other => Err(ConnectError::Tls(format!(
                "sslmode `{other}` is not supported: use disable, require, verify-ca or verify-full"
            ))),
        }
    }

    /// Whether the connection is encrypted.
    pub fn is_required(&self) -> bool {
        !matches!(self, Tls::Disable)
    }
}

impl Roots {
    /// The trust anchors.
    fn load(&self) -> Result<RootCertStore, ConnectError> {
        let tls = |m: String| ConnectError::Tls(m);
        let mut store = RootCertStore::empty();
        let pems: Vec<CertificateDer<'static>> = match self {
            Roots::WebPki => {
                store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                return Ok(store);
            }
            Roots::Native => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = store.add_parsable_certificates(found.certs);
                if added == 0 {
                    return Err(tls(format!(
                        "no usable certificate in the system's trust store ({} errors)",
                        found.errors.len()
                    )));
                }
                return Ok(store);
            }
            Roots::CaFile(path) => CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<_, _>>())
                .map_err(|e| tls(format!("CA file {}: {e}", path.display())))?,
            Roots::CaPem(pem) => CertificateDer::pem_slice_iter(pem)
                .collect::<Result<_, _>>()
                .map_err(|e| tls(format!("CA certificates: {e}")))?,
        };
        for cert in pems {
            store
                .add(cert)
                .map_err(|e| tls(format!("CA certificate: {e}")))?;
        }
        if store.is_empty() {
            return Err(tls("no CA certificate in the given PEM".into()));
        }
        Ok(store)
    }
}

/// rustls' configuration for `tls` (which requires TLS): the ring provider, safe defaults,
/// the roots, and for [`Tls::Require`] a verifier that checks the chain but not the name.
fn client_config(tls: &Tls) -> Result<rustls::ClientConfig, ConnectError> {
    let (roots, check_name) = match tls {
        Tls::Disable => return Err(ConnectError::Tls("TLS is disabled".into())),
        Tls::Require(roots) => (roots, false),
        Tls::VerifyFull(roots) => (roots, true),
    };
    let roots = roots.load()?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::Tls(e.to_string()))?;
    Ok(if check_name {
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnly {
                roots: Arc::new(roots),
                provider,
            }))
            .with_no_client_auth()
    })
}

/// [`Tls::Require`]'s verifier: the certificate chain to the roots (validity dates, key
/// usage, signatures: everything webpki checks) and the handshake signatures, not the
/// name.
#[derive(Debug)]
struct ChainOnly {
    roots: Arc<RootCertStore>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &cert,
            &self.roots,
            intermediates,
            now,
            self.provider.signature_verification_algorithms.all,
        )?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// How the store keeps its connections: how many, how long a statement may run, how
/// long a connection attempt may take, and how it backs off while the database is away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// The most connections open at once (the pool's size; an operation takes one and gives
    /// it back); at least 1. Default 4.
    pub size: usize,
    /// The server cancels a statement that runs longer (`statement_timeout`; a lock held
    /// by a stuck transaction, an overloaded server). Default 5 s.
    pub statement_timeout: Duration,
    /// A connection attempt that takes longer fails, unless the configuration string sets
    /// its own `connect_timeout`. Default 5 s.
    pub connect_timeout: Duration,
    /// The first wait after a failed connection attempt, before the store dials again
    /// (operations meanwhile fail at once); it doubles per failure. Default 100 ms.
    pub backoff_initial: Duration,
    /// The longest wait between attempts. Default 2 s.
    pub backoff_max: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            size: 4,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
        }
    }
}

/// The pauses between attempts to reach the database: from [`PoolOptions::backoff_initial`],
/// doubling up to [`PoolOptions::backoff_max`], without end.
pub(crate) fn backoff_schedule(options: &PoolOptions) -> impl Iterator<Item = Duration> + use<> {
    backoff(options.backoff_initial, options.backoff_max)
}

/// Dials PostgreSQL: the parsed configuration and the TLS connector (the pool's, and the
/// change feed's own connection).
#[derive(Clone)]
struct Dialer {
    pg: tokio_postgres::Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
}

/// Tasks and single-use claims in two PostgreSQL tables (`<table>` and `<table>_once`), over
/// a `deadpool-postgres` pool of connections: a [`TaskStore`] and a [`Ledger`], so a
/// [`Store`](mcp_tool_runtime::store::Store) for
/// [`ServerBuilder::store`](mcp_tool_runtime::ServerBuilder::store).
///
/// **Reconnect.** A connection that breaks (the database restarted, a network cut) is
/// dropped when the pool next hands it out (its recycling checks that it is open); the
/// operation it was in, and like every operation while
/// the database cannot be reached, fails with [`StoreError::Backend`] (a ledger operation
/// with [`LedgerError`]; the runtime answers either as an internal error the client may
/// retry, and a single-use round whose claim fails runs nowhere; it never waits for the
/// database). After a failed dial the store dials again at most once per backoff period
/// ([`PoolOptions::backoff_initial`], doubling to [`PoolOptions::backoff_max`]); operations
/// in between fail at once without dialling. Once the database is back the next operation after the wait succeeds: the
/// store recovers by itself, nobody recreates it. An operation whose connection broke
/// mid-statement is not retried (a `swap` may have been applied): the runtime's own
/// compare-and-swap loop reads the task again (and a claim cut mid-statement answers an
/// error: the round does not run, a retry of the state claims again).
///
pub struct PostgresStore {
    pool: Pool,
    gate: ReconnectGate,
    dialer: Dialer,
    options: PoolOptions,
    table: String,
    /// The ledger's table, `<table>_once`.
    once: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("table", &self.table)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The table name is not `[a-z_][a-z0-9_]{0,49}` (up to 50 characters, so that the
    /// ledger's `<table>_once_expires` fits PostgreSQL's 63), ends with `_once` (the
    /// ledger's suffix: one store's ledger table is never another store's tasks table), or
    /// is `mcp_schema`.
    #[error(
        "invalid table name `{0}`: use 1 to 50 of a-z, 0-9 and _, not starting with a digit, not ending with _once, not mcp_schema"
    )]
    InvalidTable(String),
    /// A table of that name exists without a schema record and is not a tasks table of the
    /// earlier, unversioned store (other columns): another application's table, left alone.
    #[error(
        "table `{0}` exists but is not a task table of this store (no schema record, other columns): choose another table name"
    )]
    ForeignTable(String),
    /// The TLS setting is unusable (no CA certificate, an unreadable CA file, an unknown
    /// `sslmode`) or contradicts the configuration string's `sslmode`.
    #[error("postgres TLS: {0}")]
    Tls(String),
    /// The database's schema of this store is newer than this build knows (a newer build
    /// migrated it): refused, so that an old binary never writes a schema it does not
    /// understand.
    #[error(
        "postgres store `{table}`: schema version {found} is newer than this build's {known}: run a newer build, or use another table"
    )]
    NewerSchema {
        /// The tasks table (the component in `mcp_schema`).
        table: String,
        /// The version in the database.
        found: i64,
        /// The newest version this build knows ([`PostgresStore::SCHEMA_VERSION`]).
        known: i64,
    },
    /// Connecting or migrating the schema failed.
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// The connection pool could not be set up or gave no connection for another reason
    /// than the database's (`deadpool-postgres`).
    #[error("postgres pool: {0}")]
    Pool(String),
}

/// Whether the configuration string's `sslmode` (libpq's default `prefer` when absent) agrees
/// with `tls`: `prefer` leaves the choice to `tls`, `disable` and `require` must match it.
fn check_sslmode(mode: SslMode, tls: &Tls) -> Result<(), ConnectError> {
    match (mode, tls.is_required()) {
        (SslMode::Disable, true) => Err(ConnectError::Tls(
            "the configuration says sslmode=disable but TLS is required".into(),
        )),
        (SslMode::Require, false) => Err(ConnectError::Tls(
            "the configuration says sslmode=require but TLS is disabled".into(),
        )),
        _ => Ok(()),
    }
}

fn valid_table(t: &str) -> bool {
    let mut chars = t.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && t.len() <= 50
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && t != "mcp_schema"
        && !t.ends_with("_once")
}

fn backend(e: tokio_postgres::Error) -> StoreError {
    // The server's message and code, not its DETAIL (which may quote values of the row).
    StoreError::Backend(match e.as_db_error() {
        Some(db) => format!(
            "{e}: {} {} ({})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        None => e.to_string(),
    })
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn ledger_error(e: StoreError) -> LedgerError {
    LedgerError(match e {
        StoreError::Backend(m) => format!("postgres: {m}"),
        other => other.to_string(),
    })
}

/// Milliseconds since the Unix epoch (0 before it, `i64::MAX` far after it).
fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// What a claim that lost finds in the row that holds the id; `None` when the row no
/// longer holds it (expired), and the claim must start over.
fn held_by(found: (String, i64, Option<Vec<u8>>), principal: &str, now_ms: i64) -> Option<Claim> {
    let (holder, expires_ms, outcome) = found;
    if expires_ms <= now_ms {
        None
    } else if holder != principal {
        // another principal's id (cannot happen with sealed ids): never its outcome
        Some(Claim::Running)
    } else {
        Some(outcome.map_or(Claim::Running, Claim::Done))
    }
}

impl PostgresStore {
    /// The newest schema version of this build (1: tasks; 2: tasks and the ledger; 3: tasks
    /// counted by owner).
    pub const SCHEMA_VERSION: i64 = 3;

    /// How many times a claim starts over when the row it lost to went away before it was
    /// read (released, or expired and swept, in between); then the claim fails.
    pub const CLAIM_ATTEMPTS: usize = 3;

    /// Connects with a libpq-style configuration string, protected as `tls` says (the
    /// string's own `sslmode`, if any, must agree: `disable` with [`Tls::Disable`],
    /// `require` with TLS), and brings the schema of the store whose tasks live in `table`
    /// (single-use claims in `<table>_once`) to [`SCHEMA_VERSION`](Self::SCHEMA_VERSION);
    /// the pool's defaults ([`PoolOptions::default`]).
    ///
    /// # Errors
    /// [`ConnectError::InvalidTable`], [`ConnectError::Tls`] (unusable roots, a contradicting
    /// `sslmode`), [`ConnectError::NewerSchema`], [`ConnectError::ForeignTable`],
    /// [`ConnectError::Postgres`] (the
    /// configuration string does not parse, the server cannot be reached, refuses TLS or
    /// presents a certificate that does not verify, or the schema cannot be migrated).
    pub async fn connect(config: &str, table: &str, tls: Tls) -> Result<Self, ConnectError> {
        Self::connect_with(config, table, tls, PoolOptions::default()).await
    }

    /// [`connect`](Self::connect) with the pool's `options`. The first connection is made
    /// here (so that a wrong address, credential or certificate shows at once), the others
    /// on first use.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(
        config: &str,
        table: &str,
        tls: Tls,
        options: PoolOptions,
    ) -> Result<Self, ConnectError> {
        if !valid_table(table) {
            return Err(ConnectError::InvalidTable(table.to_owned()));
        }
        let mut pg: tokio_postgres::Config = config.parse()?;
        check_sslmode(pg.get_ssl_mode(), &tls)?;
        // The server applies `statement_timeout` to every statement of the session.
        let timeout = format!(
            "-c statement_timeout={}",
            options.statement_timeout.as_millis().max(1)
        );
        let opts = match pg.get_options() {
            Some(o) if !o.trim().is_empty() => format!("{o} {timeout}"),
            _ => timeout,
        };
        pg.options(opts);
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(options.connect_timeout);
        }
        let tls = if tls.is_required() {
            // `Require`: never the plaintext fallback of libpq's default `prefer`.
            pg.ssl_mode(SslMode::Require);
            Some(tokio_postgres_rustls::MakeRustlsConnect::new(
                client_config(&tls)?,
            ))
        } else {
            pg.ssl_mode(SslMode::Disable);
            None
        };
        let manager = match &tls {
            Some(connector) => Manager::new(pg.clone(), connector.clone()),
            None => Manager::new(pg.clone(), NoTls),
        };
        let pool = Pool::builder(manager)
            .max_size(options.size.max(1))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| ConnectError::Pool(e.to_string()))?;
        let mut client = pool.get().await.map_err(|e| match e {
            PoolError::Backend(e) => ConnectError::Postgres(e),
            other => ConnectError::Pool(other.to_string()),
        })?;
        migrate(&mut client, table).await?;
        drop(client);
        Ok(PostgresStore {
            pool,
            gate: ReconnectGate::new(options.backoff_initial, options.backoff_max),
            dialer: Dialer { pg, tls },
            options,
            table: table.to_owned(),
            once: format!("{table}_once"),
        })
    }

    /// A connection of the pool: an idle open one, or a new one (unless the store is still
    /// waiting out its backoff after a failed dial).
    async fn client(&self) -> Result<Object, StoreError> {
        if !self.gate.is_open() {
            return Err(StoreError::Backend(
                "the database is unreachable (reconnecting)".into(),
            ));
        }
        match self.pool.get().await {
            Ok(client) => {
                if self.gate.reached() {
                    tracing::info!("store reconnected");
                }
                Ok(client)
            }
            Err(PoolError::Backend(e)) => {
                let wait = self.gate.unreachable();
                tracing::warn!(error = %e, retry_in_ms = wait.as_millis() as u64, "store cannot reach the database");
                Err(backend(e))
            }
            Err(e) => Err(StoreError::Backend(format!("postgres pool: {e}"))),
        }
    }

    /// Runs one operation, bounded on the client side as well (a connection whose peer
    /// vanished without a reset would otherwise wait for TCP keepalive): the statement
    /// timeout, plus the connect timeout, plus a second.
    async fn bounded<T>(
        &self,
        op: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let limit =
            self.options.statement_timeout + self.options.connect_timeout + Duration::from_secs(1);
        tokio::time::timeout(limit, op).await.unwrap_or_else(|_| {
            Err(StoreError::Backend(format!(
                "no answer from the database within {limit:?}"
            )))
        })
    }

    /// The pool's options.
    pub fn options(&self) -> &PoolOptions {
        &self.options
    }

    /// The tasks table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The ledger's table, `<table>_once`.
    pub fn ledger_table(&self) -> &str {
        &self.once
    }

    /// The schema version recorded in the database for this store.
    ///
    /// # Errors
    /// [`StoreError::Backend`] when the database cannot be reached or has no record.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        self.bounded(async {
            self.client()
                .await?
                .query_one(
                    "SELECT version FROM mcp_schema WHERE component = $1",
                    &[&self.table],
                )
                .await
                .and_then(|r| r.try_get(0))
                .map_err(backend)
        })
        .await
    }

    /// One attempt of [`Ledger::claim`]: the upsert, and when it lost, the row it lost to.
    /// `None`: that row went (or expired) in between; the caller starts over.
    async fn claim_once(
        &self,
        id: &str,
        principal: &str,
        expires_ms: i64,
    ) -> Result<Option<Claim>, StoreError> {
        let now_ms = epoch_ms(SystemTime::now());
        let client = self.client().await?;
        let upsert = format!(
            "INSERT INTO {t} AS o (id, principal, expires_ms, outcome) VALUES ($1, $2, $3, NULL)
             ON CONFLICT (id) DO UPDATE SET principal = EXCLUDED.principal,
                 expires_ms = EXCLUDED.expires_ms, outcome = NULL
             WHERE o.expires_ms <= $4
             RETURNING 1",
            t = self.once
        );
        let won = client
            .query_opt(&upsert, &[&id, &principal, &expires_ms, &now_ms])
            .await
            .map_err(backend)?
            .is_some();
        if won {
            return Ok(Some(Claim::Claimed));
        }
        let read = format!(
            "SELECT principal, expires_ms, outcome FROM {} WHERE id = $1",
            self.once
        );
        let Some(row) = client.query_opt(&read, &[&id]).await.map_err(backend)? else {
            return Ok(None);
        };
        // `try_get`: a table altered by hand is an error, never a panic.
        let found = (
            row.try_get(0).map_err(backend)?,
            row.try_get(1).map_err(backend)?,
            row.try_get(2).map_err(backend)?,
        );
        Ok(held_by(found, principal, now_ms))
    }
}

impl TaskStore for PostgresStore {
    fn create<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.bounded(async move {
            let sql = format!(
                "INSERT INTO {} (id, version, expires_at_ms, body) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (id) DO NOTHING",
                self.table
            );
            let n = self
                .client()
                .await?
                .execute(
                    &sql,
                    &[
                        &task.id,
                        &to_i64(task.version),
                        &task.expires_at_ms.map(to_i64),
                        &task.body,
                    ],
                )
                .await
                .map_err(backend)?;
            if n == 0 {
                Err(StoreError::Exists)
            } else {
                Ok(())
            }
        }))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredTask>, StoreError>> {
        Box::pin(self.bounded(async move {
            let sql = format!(
                "SELECT version, expires_at_ms, body FROM {} WHERE id = $1",
                self.table
            );
            let row = self
                .client()
                .await?
                .query_opt(&sql, &[&id])
                .await
                .map_err(backend)?;
            // `try_get`: a table altered by hand is an error, never a panic.
            row.map(|r| {
                Ok(StoredTask {
                    id: id.to_owned(),
                    version: to_u64(r.try_get::<_, i64>(0).map_err(backend)?),
                    expires_at_ms: r.try_get::<_, Option<i64>>(1).map_err(backend)?.map(to_u64),
                    body: r.try_get(2).map_err(backend)?,
                })
            })
            .transpose()
        }))
    }

    fn swap<'a>(&'a self, task: &'a StoredTask) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.bounded(async move {
            let Some(expected) = task.version.checked_sub(1) else {
                return Ok(false);
            };
            let sql = format!(
                "UPDATE {} SET version = $2, expires_at_ms = $3, body = $4
                 WHERE id = $1 AND version = $5",
                self.table
            );
            let n = self
                .client()
                .await?
                .execute(
                    &sql,
                    &[
                        &task.id,
                        &to_i64(task.version),
                        &task.expires_at_ms.map(to_i64),
                        &task.body,
                        &to_i64(expected),
                    ],
                )
                .await
                .map_err(backend)?;
            Ok(n == 1)
        }))
    }

    /// Counts and stores in one call of the table's function, under an advisory lock of the
    /// table's tasks: the allowances hold for every replica on the database.
    fn create_counted<'a>(
        &'a self,
        task: &'a StoredTask,
        owner: &'a str,
        allowance: TaskAllowance,
    ) -> BoxFuture<'a, Result<Counted, StoreError>> {
        Box::pin(self.bounded(async move {
            let sql = format!(
                "SELECT {}_create_counted($1, $2, $3, $4, $5, $6, $7, $8)",
                self.table
            );
            let at_most = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            let row = self
                .client()
                .await?
                .query_one(
                    &sql,
                    &[
                        &task.id,
                        &to_i64(task.version),
                        &task.expires_at_ms.map(to_i64),
                        &task.body,
                        &owner,
                        &to_i64(allowance.now_ms),
                        &at_most(allowance.per_owner),
                        &at_most(allowance.total),
                    ],
                )
                .await
                .map_err(backend)?;
            match row.try_get::<_, i32>(0).map_err(backend)? {
                0 => Ok(Counted::Stored),
                1 => Ok(Counted::OwnerFull),
                2 => Ok(Counted::StoreFull),
                3 => Err(StoreError::Exists),
                n => Err(StoreError::Backend(format!("create_counted answered {n}"))),
            }
        }))
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<u64, StoreError>> {
        Box::pin(self.bounded(async move {
            let sql = format!("DELETE FROM {} WHERE expires_at_ms < $1", self.table);
            self.client()
                .await?
                .execute(&sql, &[&to_i64(now_ms)])
                .await
                .map_err(backend)
        }))
    }
}

impl Ledger for PostgresStore {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        let expires_ms = epoch_ms(expires);
        Box::pin(async move {
            for _ in 0..Self::CLAIM_ATTEMPTS {
                let attempt = self.bounded(self.claim_once(id, principal, expires_ms));
                if let Some(claim) = attempt.await.map_err(ledger_error)? {
                    return Ok(claim);
                }
            }
            Err(LedgerError(format!(
                "postgres: the row holding a single-use id went away {} times in a row",
                Self::CLAIM_ATTEMPTS
            )))
        })
    }

    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            let sql = format!(
                "UPDATE {} SET outcome = $2 WHERE id = $1 AND outcome IS NULL",
                self.once
            );
            self.bounded(async {
                self.client()
                    .await?
                    .execute(&sql, &[&id, &outcome])
                    .await
                    .map_err(backend)
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(async move {
            let sql = format!(
                "DELETE FROM {} WHERE id = $1 AND outcome IS NULL",
                self.once
            );
            self.bounded(async {
                self.client()
                    .await?
                    .execute(&sql, &[&id])
                    .await
                    .map_err(backend)
            })
            .await
            .map_err(ledger_error)?;
            Ok(())
        })
    }

    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        let now_ms = epoch_ms(now);
        Box::pin(async move {
            let sql = format!("DELETE FROM {} WHERE expires_ms < $1", self.once);
            self.bounded(async {
                self.client()
                    .await?
                    .execute(&sql, &[&now_ms])
                    .await
                    .map_err(backend)
            })
            .await
            .map_err(ledger_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_names_are_read_and_fallbacks_to_plaintext_refused() {
        assert_eq!(Tls::from_libpq("disable", None).unwrap(), Tls::Disable);
        assert_eq!(
            Tls::from_libpq("verify-full", Some("/ca.pem")).unwrap(),
            Tls::VerifyFull(Roots::CaFile("/ca.pem".into()))
        );
        assert_eq!(
            Tls::from_libpq("require", None).unwrap(),
            Tls::Require(Roots::Native)
        );
        assert_eq!(
            Tls::from_libpq("verify-ca", Some("webpki")).unwrap(),
            Tls::Require(Roots::WebPki)
        );
        for weak in ["prefer", "allow", "", "verify_full"] {
            assert!(matches!(
                Tls::from_libpq(weak, None),
                Err(ConnectError::Tls(_))
            ));
        }
    }

    #[test]
    fn roots_must_hold_a_certificate() {
        let dir = std::env::temp_dir().join(format!("mcp-pg-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        for roots in [
            Roots::CaFile(empty),
            Roots::CaFile(dir.join("missing.pem")),
            Roots::CaPem(
                b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".to_vec(),
            ),
            Roots::CaPem(Vec::new()),
        ] {
            assert!(
                matches!(roots.load(), Err(ConnectError::Tls(_))),
                "{roots:?}"
            );
            assert!(client_config(&Tls::VerifyFull(roots)).is_err());
        }
        assert!(!Roots::WebPki.load().unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_contradicting_sslmode_is_refused_before_connecting() {
        // port 1 on loopback: nothing listens, but nothing is ever dialled
        let plain = "host=127.0.0.1 port=1 user=x sslmode=require";
        assert!(matches!(
            PostgresStore::connect(plain, "t", Tls::Disable).await,
            Err(ConnectError::Tls(_))
        ));
        let off = "host=127.0.0.1 port=1 user=x sslmode=disable";
        assert!(matches!(
            PostgresStore::connect(off, "t", Tls::VerifyFull(Roots::WebPki)).await,
            Err(ConnectError::Tls(_))
        ));
        assert!(matches!(
            PostgresStore::connect("host=127.0.0.1 port=1 user=x", "bad name", Tls::Disable).await,
            Err(ConnectError::InvalidTable(_))
        ));
    }

    #[test]
    fn table_names_are_checked() {
        assert!(valid_table("mcp_tasks"));
        assert!(valid_table("_t2"));
        assert!(!valid_table("2t"));
        assert!(!valid_table("tasks; DROP TABLE x"));
        assert!(!valid_table(""));
        assert!(valid_table(&"a".repeat(50)));
        assert!(!valid_table(&"a".repeat(51)));
        assert!(!valid_table("mcp_schema"));
        assert!(!valid_table("tasks_once"));
        assert!(valid_table("once"));
    }
}
