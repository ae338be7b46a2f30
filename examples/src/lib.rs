//! Example tools written with `#[mcp_tool]`, plus what the demo, the server binary and the
//! interactive client share: the repository sandbox ([`repo`]), the deterministic fake model
//! ([`fake_model`]) and the terminal answering logic ([`interactive`], [`client_cli`]).
//!
//! [`example_server`] registers every example tool on one [`Server`]:
//!
//! | tool | shows |
//! | --- | --- |
//! | [`tools::summarize_repo`] | the lesson: sampling rounds, untrusted model output validated before file access |
//! | [`tools::get_weather`] | the SEP's form elicitation `github_login`; decline/cancel answered politely |
//! | [`tools::link_accounts`] | the SEP's rolling upgrade: two questions in one round, a third later |
//! | [`tools::sum_of_squares`] | the SEP's load shedding: `requestState`-only checkpoints |
//! | [`tools::list_roots`] | a `roots/list` round |
//! | [`tools::prune_branches`] | an elicitation inside a `for` loop |

#![warn(missing_docs)]

use std::sync::OnceLock;

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::Sealer;
use mcp_tool_runtime::{RegistrationError, Server, ToolError};

pub mod client_cli;
pub mod fake_model;
pub mod interactive;
pub mod repo;
pub mod serving;
pub mod tools;

use repo::Repo;

static REPOSITORY: OnceLock<Repo> = OnceLock::new();

/// Sets the repository `summarize_repo` reads (once per process, before the first call).
///
/// # Errors
/// Gives the repository back when one was already set (or the default was already used).
pub fn set_repository(repo: Repo) -> Result<(), Repo> {
    REPOSITORY.set(repo)
}

/// The repository `summarize_repo` reads: the one given to [`set_repository`], else the
/// embedded demo repository (materialised on first use).
///
/// # Errors
/// `ToolError::Failed` when the demo repository cannot be materialised.
pub fn repository() -> Result<&'static Repo, ToolError> {
    if let Some(r) = REPOSITORY.get() {
        return Ok(r);
    }
    let demo = Repo::embedded_demo().map_err(|e| ToolError::Failed(e.to_string()))?;
    // Another thread may have won the race; either way one repository is in place.
    let _ = REPOSITORY.set(demo);
    REPOSITORY
        .get()
        .ok_or_else(|| ToolError::Internal("repository not initialised".into()))
}

/// The server's identity in `serverInfo`.
pub fn server_info() -> Implementation {
    Implementation::new("mcp-tool-examples", env!("CARGO_PKG_VERSION"))
}

/// A server with every example tool. `sealer`: the state sealer (shared key between
/// replicas); `None` = a random key for this process.
///
/// # Errors
/// When a tool fails registration (e.g. an elicitation schema outside the allowed subset).
pub fn example_server(sealer: Option<Sealer>) -> Result<Server, RegistrationError> {
    let mut b = Server::builder(server_info()).instructions(
        "Example tools of mcp-tool: summarize_repo (sampling), get_weather and link_accounts \
         (elicitation), sum_of_squares (load shedding), list_roots (roots), prune_branches \
         (confirmations in a loop).",
    );
    if let Some(s) = sealer {
        b = b.sealer(s);
    }
    for tool in tools::all() {
        b = b.tool_arc(tool);
    }
    b.build()
}
