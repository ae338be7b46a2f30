//! Example tools written with `#[mcp_tool]`, plus what the demo, the server binary and the
//! interactive client share: the repository sandbox ([`repo`]), the notes store on SQLite
//! ([`notes`]) and the deterministic fake model ([`fake_model`]). The interactive client
//! itself is the `mcp-tool-cli` crate (binary `mcp-tool`; `client` here is a shim).
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
//! | [`tools::notes`]: `add_note`, `list_notes`, `delete_notes`, `edit_note` | application state on a real database (`State<`[`notes::Notes`]`>`, SQLite shared by replicas); `delete_notes`: a shared `#[mcp_flow]` ([`tools::confirm`]) per note inside a loop with run-time keys, notes changed or deleted by another replica between rounds |
//! | [`tools::donate`]: `donate`, `balance` | a single-use tool (`#[mcp_tool(once)]`): its confirmed round, replayed, answers the stored response and never donates twice; `balance` reads the total as structured content |
//! | [`tools::review`] | a prompt that asks before it answers (`review_file`), a resource template over the repository (`repo://files/{+path}`) with path completion |

#![warn(missing_docs)]

use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::seal::Sealer;
use mcp_tool_runtime::{RegistrationError, Server, ServerBuilder};
use mcp_tool_skills::SkillsExt as _;

pub mod balances;
pub mod fake_model;
pub mod load;
pub mod notes;
pub mod repo;
pub mod serving;
pub mod store;
pub mod telemetry;
pub mod tools;

use notes::Notes;
use repo::Repo;

/// The server's identity in `serverInfo`.
pub fn server_info() -> Implementation {
    Implementation::new("mcp-tool-examples", env!("CARGO_PKG_VERSION"))
}

/// Whether the example server enforces the scopes its tools declare (the notes tools:
/// `notes:read` for `list_notes`, `notes:write` for `add_note`, `edit_note` and
/// `delete_notes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scopes {
    /// Not enforced (`ServerBuilder::ignore_scopes`): for stdio, the demo authenticator
    /// and every other way of serving whose principals carry no scopes. The default.
    #[default]
    Ignored,
    /// Enforced: a caller without a tool's scopes is refused before the tool runs (HTTP
    /// 403 `insufficient_scope`). For an authenticator that grants scopes, such as the
    /// OAuth resource server mode of `serve` (`--oauth-*`).
    Enforced,
}

/// A server with every example tool, its declared scopes ignored ([`Scopes::Ignored`]; see
/// [`example_server_with`]). `sealer`: the state sealer (shared key between
/// replicas); `None` = a random key for this process. Application state: `repo`, the
/// repository `summarize_repo` reads (`State<Repo>`), e.g. [`Repo::embedded_demo`] or
/// [`Repo::open`]; `notes`, the notes store of the notes tools (`State<Notes>`), e.g.
/// [`Notes::temporary`] or [`Notes::open`] (replicas open the same file).
///
/// # Errors
/// When a tool fails registration (e.g. an elicitation schema outside the allowed subset).
pub fn example_server(
    sealer: Option<Sealer>,
    repo: Repo,
    notes: Notes,
) -> Result<Server, RegistrationError> {
    example_server_with(sealer, repo, notes, Scopes::Ignored)
}

/// [`example_server`] with the scope policy `scopes`: [`Scopes::Enforced`] when the
/// authenticator grants scopes (an OAuth access token's), [`Scopes::Ignored`] otherwise.
///
/// # Errors
/// When a tool fails registration.
pub fn example_server_with(
    sealer: Option<Sealer>,
    repo: Repo,
    notes: Notes,
    scopes: Scopes,
) -> Result<Server, RegistrationError> {
    example_builder(sealer, repo, notes, scopes).build()
}

/// The builder of [`example_server_with`], for a caller that adds to it (`serve`: the
/// task tools and a task store).
pub fn example_builder(
    sealer: Option<Sealer>,
    repo: Repo,
    notes: Notes,
    scopes: Scopes,
) -> ServerBuilder {
    let mut b = Server::builder(server_info())
        .enforce_scopes(scopes == Scopes::Enforced)
        .instructions(
            "Example tools of mcp-tool: summarize_repo (sampling), get_weather and link_accounts \
         (elicitation), sum_of_squares (load shedding), list_roots (roots), prune_branches \
         (confirmations in a loop), add_note, list_notes, delete_notes and edit_note (a notes \
         store; deleting and editing ask for confirmation), donate (single use, after a \
         confirmation) and balance. Prompt review_file asks which \
         repository file to review; resource template repo://files/{+path} reads one; notes://notes/{id} reads a note \
         (listen to it for changes). \
         Skill skill://notes/SKILL.md explains the notes tools.",
        );
    if let Some(s) = sealer {
        b = b.sealer(s);
    }
    b = b.state(repo).state(notes);
    for tool in tools::all() {
        b = b.tool(tool);
    }
    b = b
        .prompt(tools::review::review_file::prompt())
        .resource(tools::review::repo_file::resource())
        .resource(tools::notes::note::resource());
    // The bundled skill (examples/skills/notes) when the sources are at hand.
    if std::path::Path::new(SKILLS_DIR).is_dir() {
        b = b.skills(SKILLS_DIR);
    }
    b
}

/// The skills the example server serves (the Skills extension): `notes`, which teaches an
/// agent the notes tools. A path in the source tree, served when it exists.
pub const SKILLS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");
