//! The example server: every example tool of `mcp-tool-examples`, over stdio (default) or
//! Streamable HTTP.
//!
//! ```text
//! serve                                  # stdio: one JSON-RPC message per line
//! serve --http 127.0.0.1:8080            # Streamable HTTP at http://127.0.0.1:8080/mcp
//! serve --repo ~/src/project             # summarize another directory
//! serve --db ~/notes.sqlite3             # keep the notes tools' notes in this file
//! serve --state-ttl 120                  # sealed states expire after two minutes
//! serve --store sqlite:/var/lib/mcp/tasks.sqlite3   # tasks and single-use claims in this SQLite file
//! serve --store postgres://mcp@db.internal/mcp      # … in PostgreSQL (TLS verify-full)
//! serve --store rediss://:pw@redis.internal:6380/   # … in Redis, over TLS
//! serve --store memory                   # … in this process only
//! serve --http 127.0.0.1:8080 --metrics 127.0.0.1:9464   # Prometheus scrapes /metrics
//! MCP_TOOL_STATE_KEY=k2:$(openssl rand -hex 32) MCP_TOOL_STATE_KEY_PREVIOUS=k1:<old hex> \
//!     serve --http 127.0.0.1:8081                                        # a replica, mid-rotation
//! ```
//!
//! Replicas that share `MCP_TOOL_STATE_KEY` (hex, at least 32 bytes, optionally `kid:hex`)
//! accept each other's `requestState`; `MCP_TOOL_STATE_KEY_PREVIOUS` (comma-separated
//! `kid:hex`) lists older keys that still open states but never seal. Without a key the
//! key is random per process (a warning says so); a key that is set but unusable (not
//! UTF-8, not hex, too short) refuses to start. Replicas that serve the notes tools share
//! the notes too when given the same `--db` file (SQLite in WAL mode: several processes may
//! use it at once); without `--db` each process keeps its notes in a file of its own in a
//! fresh temporary directory (logged at startup; removed when the server stops: at the end
//! of stdin, or on Ctrl-C or SIGTERM over HTTP, after the requests in progress have finished
//! (at most 15 s): a rolling restart loses no round). Over HTTP, `Authorization: Bearer <token>`
//! names the principal with the *demo* authenticator (`mcp_tool_examples::serving::DemoAuth`:
//! no verification — replace it with a real `Authenticator` in production); requests
//! without a token are anonymous. Because of that, `serve` refuses a non-loopback `--http`
//! address unless `--insecure-demo-auth-on-public-address` is given. Logs go to stderr
//! (`RUST_LOG` filters them).
//!
//! Telemetry: `--metrics ADDR` serves Prometheus metrics at `/metrics`; the standard
//! `OTEL_*` variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`,
//! `OTEL_TRACES_SAMPLER`, …) export the spans over OTLP (HTTP/protobuf, or gRPC with the
//! feature `grpc` of mcp-tool-otel) through the OpenTelemetry SDK. See
//! docs/OPERATIONS.md.
//!
//! The store: tasks (the Tasks extension: `slow_job` runs as a task when the client declares
//! the extension) and the ledger of single-use rounds (`donate`'s confirmed round is claimed
//! there before it runs). `--store` says where both live: `sqlite:PATH` (one file in WAL
//! mode, shared by the processes of one machine; tasks and claims survive a restart of
//! `serve`), `postgres://…` (shared by a fleet, tables `mcp_tasks` and `mcp_tasks_once`; TLS
//! as `--store-sslmode` and `--store-sslrootcert` say, libpq's names, `verify-full` with the
//! system's roots by default), `redis://…` or
//! `rediss://…` (shared by a fleet, keys under `mcp:`; `rediss://` is TLS verified against
//! the system's roots; run Redis with `appendonly yes` and `appendfsync always` so that
//! claims survive its restart) or `memory`. With `--db` the default is a SQLite file next to
//! the notes database (`notes.sqlite3` → `notes.tasks.sqlite3`); without it, `memory`: the
//! notes then live in a temporary directory that goes with the process, and so would a file
//! beside them (memory spares the start-up the file's creation). Replicas
//! (sharing `MCP_TOOL_STATE_KEY`) that share the store take over each other's tasks, and a
//! `donate` confirmation replayed to another of them gets the first answer and donates
//! nothing more. The store also carries the server's changes (list changes, resource
//! updates, task statuses) to the listeners of the other replicas: PostgreSQL
//! `LISTEN/NOTIFY`, Redis pub/sub, SQLite a table polled every 100 ms; `memory` keeps them
//! in the process. A store whose change feed cannot listen stops the start.
//!
//! Behind an identity provider, `--oauth-issuer URL --oauth-resource URL` replaces the demo
//! authenticator with an OAuth 2.1 resource server (`mcp_tool_oauth`): every request needs
//! a JWT access token from that issuer for that resource (checked against the issuer's
//! JWKS, discovered from its metadata or given with `--oauth-jwks-uri`), the RFC 9728
//! metadata is served at `/.well-known/oauth-protected-resource[/mcp]`, and a public
//! address needs no other flag:
//!
//! ```text
//! serve --http 0.0.0.0:8080 --oauth-issuer https://auth.example.com \
//!     --oauth-resource https://mcp.example.com/mcp --oauth-scopes "notes:read notes:write"
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use mcp_tool_examples::Scopes;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_examples::serving::{
    DemoAuth, OAuthArgs, check_listen_address, oauth_authenticator, sealer_from_env,
};
use mcp_tool_examples::store::{StoreUrl, Tls};
use mcp_tool_runtime::seal::SealConfig;
use mcp_tool_runtime::transport::http::{self, HttpConfig};
use mcp_tool_runtime::transport::stdio::{self, StdioConfig};

/// Serve the mcp-tool example tools (MCP 2026-07-28).
#[derive(Parser, Debug)]
#[command(name = "serve", version)]
struct Cli {
    /// Serve Streamable HTTP at ADDR (path /mcp) instead of stdio, e.g. 127.0.0.1:8080.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The repository `summarize_repo` reads (default: the embedded demo repository).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// The SQLite file of the notes tools, created if missing; replicas may share it
    /// (default: a file in a fresh temporary directory).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Where tasks and the single-use ledger live: `sqlite:PATH`, `postgres://…` (or
    /// `postgres:` and a libpq `key=value` string), `redis://…` / `rediss://…` (TLS) or `memory` (default: with `--db`,
    /// `sqlite:` with a file next to the notes database, NAME.tasks.sqlite3; without, `memory`).
    #[arg(long, value_name = "URL")]
    store: Option<mcp_tool_examples::store::StoreUrl>,
    /// TLS to a PostgreSQL `--store`, libpq's `sslmode`: verify-full, verify-ca, require or
    /// disable (only for loopback or a private network).
    #[arg(long, value_name = "MODE", default_value = "verify-full")]
    store_sslmode: String,
    /// The CA certificates (PEM file) a PostgreSQL `--store` is verified against, libpq's
    /// `sslrootcert`: a file, `system` (the default) or `webpki` (Mozilla's roots).
    #[arg(long, value_name = "PATH")]
    store_sslrootcert: Option<String>,
    /// Lifetime of sealed request states, in seconds (at most 3600).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    state_ttl: u64,
    /// An extra `Origin` accepted over HTTP (repeatable); by default only localhost origins
    /// are accepted, and only when listening on loopback.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Serve a non-loopback `--http` address with the demo authenticator, which admits
    /// anyone (no token is verified). Without it such an address is refused.
    #[arg(long, conflicts_with = "oauth_issuer")]
    insecure_demo_auth_on_public_address: bool,
    /// Verify OAuth 2.1 access tokens from this issuer (authorization server) instead of
    /// using the demo authenticator; needs --oauth-resource.
    #[arg(long, value_name = "URL", requires = "oauth_resource")]
    oauth_issuer: Option<String>,
    /// This server's canonical URI, the audience of its tokens and the `resource` of its
    /// RFC 9728 metadata, e.g. `https://mcp.example.com/mcp`; needs --oauth-issuer.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_resource: Option<String>,
    /// The issuer's JWKS (default: discovered from the issuer's metadata).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_jwks_uri: Option<String>,
    /// The `aud` the tokens carry, where it differs from --oauth-resource.
    #[arg(long, value_name = "AUD", requires = "oauth_issuer")]
    oauth_audience: Option<String>,
    /// Space-separated scopes for the metadata's `scopes_supported` and the 401 challenge.
    #[arg(long, value_name = "SCOPES", requires = "oauth_issuer")]
    oauth_scopes: Option<String>,
    /// Serve the server's metrics for Prometheus at http://ADDR/metrics, e.g.
    /// 127.0.0.1:9464 (port 0 picks one; the address is printed to stderr).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
}

impl Cli {
    /// The `--oauth-*` settings, when given.
    fn oauth(&self) -> Option<OAuthArgs> {
        Some(OAuthArgs {
            issuer: self.oauth_issuer.clone()?,
            resource: self.oauth_resource.clone()?,
            jwks_uri: self.oauth_jwks_uri.clone(),
            audience: self.oauth_audience.clone(),
            scopes: self.oauth_scopes.clone(),
        })
    }
}

/// Longest wait, on Ctrl-C or SIGTERM, for the HTTP requests in progress to finish.
const SHUTDOWN_DRAIN: Duration = Duration::from_secs(15);

/// Threads for blocking work (`summarize_repo`'s file system calls): a small, fixed pool
/// (the HTTP transport admits at most 32 requests at once anyway), kept alive rather than
/// recreated, so that thread churn does not leave stacks and allocator arenas behind.
const BLOCKING_THREADS: usize = 8;

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_keep_alive(Duration::from_secs(3600))
        .build()
        .context("starting the async runtime")?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let otlp = mcp_tool_examples::telemetry::init_tracing().map_err(anyhow::Error::msg)?;
    let cli = Cli::parse();
    let served = serve(cli).await;
    // The last spans, before the process ends.
    if let Some(guard) = otlp
        && let Err(e) = guard.shutdown()
    {
        eprintln!("{e}");
    }
    served
}

async fn serve(cli: Cli) -> anyhow::Result<()> {
    if let Some(addr) = cli.metrics {
        let bound = mcp_tool_examples::telemetry::serve_metrics(addr)
            .await
            .map_err(anyhow::Error::msg)?;
        eprintln!("metrics on http://{bound}/metrics");
    }
    let max_ttl = SealConfig::DEFAULT_MAX_TTL.as_secs();
    if cli.state_ttl == 0 || cli.state_ttl > max_ttl {
        anyhow::bail!(
            "--state-ttl must be between 1 and {max_ttl} seconds (the maximum state lifetime)"
        );
    }
    let oauth = match cli.oauth() {
        Some(args) if cli.http.is_some() => {
            Some(oauth_authenticator(&args).map_err(anyhow::Error::msg)?)
        }
        Some(_) => anyhow::bail!("--oauth-* needs --http (stdio has no tokens)"),
        None => None,
    };
    if let Some(addr) = &cli.http
        && oauth.is_none()
    {
        check_listen_address(addr, cli.insecure_demo_auth_on_public_address)
            .map_err(anyhow::Error::msg)?;
    }
    let repo = match &cli.repo {
        Some(path) => {
            let repo = Repo::open(path).with_context(|| format!("--repo {}", path.display()))?;
            tracing::info!(root = %repo.root().display(), "summarize_repo reads this repository");
            repo
        }
        None => Repo::embedded_demo().context("the embedded demo repository")?,
    };
    let notes = match &cli.db {
        Some(path) => Notes::open(path).with_context(|| format!("--db {}", path.display()))?,
        None => Notes::temporary().context("a temporary notes database")?,
    };
    tracing::info!(db = %notes.path().display(), "the notes tools keep their notes here");
    let (sealer, source) =
        sealer_from_env(Duration::from_secs(cli.state_ttl)).map_err(anyhow::Error::msg)?;
    tracing::debug!(?source, "state key");
    // The notes tools declare `notes:read` / `notes:write`. Behind the OAuth resource server
    // (`--oauth-*`) the token's scopes decide (403 insufficient_scope for a step-up); the demo
    // authenticator and stdio grant no scopes, so there they are not enforced.
    let scopes = if oauth.is_some() {
        Scopes::Enforced
    } else {
        Scopes::Ignored
    };
    // Temporary notes: a store file beside them would go with the process too.
    let store_url = cli.store.clone().unwrap_or_else(|| match &cli.db {
        Some(_) => StoreUrl::Sqlite(mcp_tool_examples::store::default_sqlite_path(notes.path())),
        None => StoreUrl::Memory,
    });
    let tls = Tls::from_libpq(&cli.store_sslmode, cli.store_sslrootcert.as_deref())
        .map_err(|e| anyhow::anyhow!("--store-sslmode: {e}"))?;
    let opened = mcp_tool_examples::store::open_with_feed(&store_url, tls)
        .await
        .map_err(anyhow::Error::msg)
        .context("--store")?;
    match &store_url {
        StoreUrl::Sqlite(path) => tracing::info!(
            store = %path.display(),
            "tasks and single-use claims are kept in this SQLite file"
        ),
        StoreUrl::Postgres(_) => tracing::info!(
            "tasks and single-use claims are kept in PostgreSQL (tables mcp_tasks, mcp_tasks_once)"
        ),
        StoreUrl::Memory => {
            tracing::info!("tasks and single-use claims are kept in memory (lost on restart)")
        }
        StoreUrl::Redis(_) => {
            tracing::info!("tasks and single-use claims are kept in Redis (keys under mcp:)")
        }
    }
    let mut builder = mcp_tool_examples::example_builder(Some(sealer), repo, notes, scopes);
    for tool in mcp_tool_examples::tools::task_tools() {
        builder = builder.tool(tool);
    }
    // dynamic: the registry may change what is served at run time, and clients are told
    // (`listChanged`; legacy sessions hear it on their GET stream or stdout)
    let server = builder
        .store(opened.store)
        .dynamic(true)
        .build()
        .context("registering tools")?;
    // Changes (list changes, resource updates, task statuses) reach the listeners of every
    // replica sharing the store. A store that opened but whose feed cannot listen stops
    // the start: a replica deaf to the others would serve stale subscriptions silently.
    if let Some(feed) = opened.feed {
        server
            .changes()
            .connect(feed)
            .await
            .context("--store: the change feed cannot listen")?;
        tracing::info!("changes reach the other replicas through the store");
    }

    match cli.http {
        None => {
            stdio::serve_stdio(server, StdioConfig::default()).await?;
        }
        Some(addr) => {
            let mut config = match oauth {
                Some(auth) => {
                    // Fetch the issuer's keys now, so that a misconfiguration shows in the
                    // log at once (the server starts anyway and fetches again on demand).
                    let early = auth.clone();
                    tokio::spawn(async move {
                        match early.prefetch().await {
                            Ok(()) => tracing::info!(
                                metadata = early.resource_metadata_url(),
                                "OAuth: the issuer's keys are in; protected resource metadata here"
                            ),
                            Err(e) => {
                                tracing::warn!(error = %e, "OAuth: the issuer's keys could not be fetched yet")
                            }
                        }
                    });
                    HttpConfig::default().authenticator(auth)
                }
                None => HttpConfig::default().authenticator(DemoAuth::new()),
            };
            for origin in cli.allow_origin {
                config = config.allow_origin(origin);
            }
            let handle = http::spawn(addr, server, config)
                .await
                .with_context(|| format!("binding {addr}"))?;
            // The handlers are in place before the line scripts (and the tests) wait for: a
            // SIGTERM sent right after it stops the server cleanly, it does not kill it.
            let stop = shutdown_signal()?;
            eprintln!("listening on {}", handle.url());
            stop.await;
            // Drain: stop accepting, let the requests in progress finish (a rolling restart
            // then loses no round: their answers reach the client, which sends the next
            // round to another replica), at most SHUTDOWN_DRAIN.
            tracing::info!("shutting down: finishing the requests in progress");
            match tokio::time::timeout(SHUTDOWN_DRAIN, handle.shutdown()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "the HTTP server ended with an error"),
                Err(_) => tracing::warn!(
                    "requests still in progress after {SHUTDOWN_DRAIN:?}: stopping anyway"
                ),
            }
        }
    }
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix: returning from `main` drops the server, so a temporary notes
/// file is removed. The handlers are installed at once; the future waits for a signal.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
