//! The example tools on AWS Lambda (`mcp_tool_lambda`): every round of a multi round-trip
//! call is its own invocation, on whichever instance the platform picks.
//!
//! Configured by environment variables only (a function has no command line):
//!
//! | variable | what |
//! | --- | --- |
//! | `MCP_TOOL_STATE_KEY` | **required**: the sealing key, hex or `kid:hex`, at least 32 bytes, the same on every instance (as `serve`'s; a random key per instance would strand every call whose next round reaches another instance, so the function refuses to start without it) |
//! | `MCP_TOOL_STATE_KEY_PREVIOUS` | older keys that still open states, `kid:hex,…` (rotation) |
//! | `MCP_TOOL_STATE_TTL` | lifetime of sealed states in seconds (default 600, at most 3600) |
//! | `MCP_TOOL_STORE` | where tasks and single-use claims live, `serve --store`'s values: `postgres://…` or `redis://…` / `rediss://…` for a function (instances share nothing else); `memory` (the default, with a warning) keeps them per instance, so a `donate` confirmation replayed to another instance would donate again; `sqlite:` is refused (a file in an instance's `/tmp` is no more shared than memory) |
//! | `MCP_TOOL_STORE_SSLMODE`, `MCP_TOOL_STORE_SSLROOTCERT` | TLS to a PostgreSQL store, as `serve --store-sslmode` / `--store-sslrootcert` |
//! | `MCP_TOOL_OAUTH_ISSUER`, `MCP_TOOL_OAUTH_RESOURCE` (and `MCP_TOOL_OAUTH_JWKS_URI`, `MCP_TOOL_OAUTH_AUDIENCE`, `MCP_TOOL_OAUTH_SCOPES`) | verify OAuth 2.1 access tokens, as `serve --oauth-*` |
//! | `MCP_TOOL_INSECURE_DEMO_AUTH=1` | without OAuth: the demo authenticator (the bearer token *is* the principal, nothing verified), only for a function behind IAM auth or for local tests; without either the function refuses to start |
//! | `MCP_TOOL_ALLOW_ORIGIN` | extra accepted `Origin`s, comma-separated |
//! | `RUST_LOG` | log filter (default `info`) |
//!
//! Keys come from the environment as `serve`'s do (a secrets manager is out of scope: put the
//! key in the function's encrypted environment, or fetch it in your own entry point). The
//! endpoint path is `/mcp`. Deployment: the README, "Deploying" ("A function platform").

use std::time::Duration;

use anyhow::Context;
use mcp_tool_examples::Scopes;
use mcp_tool_examples::notes::Notes;
use mcp_tool_examples::repo::Repo;
use mcp_tool_examples::serving::{
    DemoAuth, KeySource, OAuthArgs, STATE_KEY_ENV, oauth_authenticator, sealer_from_env,
};
use mcp_tool_examples::store::{StoreUrl, Tls};
use mcp_tool_runtime::seal::SealConfig;
use mcp_tool_runtime::transport::http::HttpConfig;

/// The variable that names the store (`serve --store`).
const STORE_ENV: &str = "MCP_TOOL_STORE";

fn var(name: &str) -> anyhow::Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v.trim().to_owned())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => anyhow::bail!("{name} is not UTF-8"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();

    let max_ttl = SealConfig::DEFAULT_MAX_TTL.as_secs();
    let ttl = match var("MCP_TOOL_STATE_TTL")? {
        None => 600,
        Some(v) => v
            .parse::<u64>()
            .ok()
            .filter(|t| (1..=max_ttl).contains(t))
            .with_context(|| format!("MCP_TOOL_STATE_TTL must be 1..={max_ttl} seconds"))?,
    };
    let (sealer, source) = sealer_from_env(Duration::from_secs(ttl)).map_err(anyhow::Error::msg)?;
    if source == KeySource::Random {
        anyhow::bail!(
            "{STATE_KEY_ENV} is not set: on a function platform every round may reach a fresh \
             instance, which could not open a state sealed with another instance's random key; \
             set it (hex, at least 32 bytes) in the function's environment"
        );
    }

    let oauth = match (
        var("MCP_TOOL_OAUTH_ISSUER")?,
        var("MCP_TOOL_OAUTH_RESOURCE")?,
    ) {
        (Some(issuer), Some(resource)) => Some(
            oauth_authenticator(&OAuthArgs {
                issuer,
                resource,
                jwks_uri: var("MCP_TOOL_OAUTH_JWKS_URI")?,
                audience: var("MCP_TOOL_OAUTH_AUDIENCE")?,
                scopes: var("MCP_TOOL_OAUTH_SCOPES")?,
            })
            .map_err(anyhow::Error::msg)?,
        ),
        (None, None) => None,
        _ => anyhow::bail!("MCP_TOOL_OAUTH_ISSUER and MCP_TOOL_OAUTH_RESOURCE go together"),
    };
    let demo = var("MCP_TOOL_INSECURE_DEMO_AUTH")?.is_some_and(|v| v == "1");
    if oauth.is_none() && !demo {
        anyhow::bail!(
            "no authenticator: set MCP_TOOL_OAUTH_ISSUER and MCP_TOOL_OAUTH_RESOURCE, or \
             MCP_TOOL_INSECURE_DEMO_AUTH=1 (admits anyone: only behind IAM auth or locally)"
        );
    }

    let store_url: StoreUrl = match var(STORE_ENV)? {
        None => {
            tracing::warn!(
                "{STORE_ENV} is not set: tasks and single-use claims are kept in this \
                 instance's memory; set it to postgres://… or redis://… so that instances share them"
            );
            StoreUrl::Memory
        }
        Some(v) => v
            .parse()
            .map_err(|e: String| anyhow::anyhow!("{STORE_ENV}: {e}"))?,
    };
    if let StoreUrl::Sqlite(_) = store_url {
        anyhow::bail!(
            "{STORE_ENV}: sqlite: on a function platform is a file in one instance's /tmp, no \
             more shared than memory; use postgres://… or redis://…"
        );
    }
    let sslmode = var("MCP_TOOL_STORE_SSLMODE")?.unwrap_or_else(|| "verify-full".into());
    let tls = Tls::from_libpq(&sslmode, var("MCP_TOOL_STORE_SSLROOTCERT")?.as_deref())
        .map_err(|e| anyhow::anyhow!("MCP_TOOL_STORE_SSLMODE: {e}"))?;
    let store = mcp_tool_examples::store::open(&store_url, tls)
        .await
        .map_err(anyhow::Error::msg)
        .context(STORE_ENV)?;

    let scopes = if oauth.is_some() {
        Scopes::Enforced
    } else {
        Scopes::Ignored
    };
    // The repository and the notes live in the instance (the embedded demo repository; notes
    // in /tmp, per instance): they are the examples' application state, not the protocol's.
    let repo = Repo::embedded_demo().context("the embedded demo repository")?;
    let notes = Notes::temporary().context("a temporary notes database")?;
    let mut builder = mcp_tool_examples::example_builder(Some(sealer), repo, notes, scopes);
    for tool in mcp_tool_examples::tools::task_tools() {
        builder = builder.tool(tool);
    }
    let server = builder
        .store(store)
        .modern_only()
        .build()
        .context("registering tools")?;

    let mut config = match oauth {
        Some(auth) => HttpConfig::default().authenticator(auth),
        None => HttpConfig::default().authenticator(DemoAuth::new()),
    };
    for origin in var("MCP_TOOL_ALLOW_ORIGIN")?
        .iter()
        .flat_map(|o| o.split(','))
    {
        config = config.allow_origin(origin.trim());
    }
    tracing::info!("serving the example tools on the Lambda Runtime API");
    mcp_tool_lambda::run(server, config)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
}
