//! Agent Skills from a directory for [`mcp_tool_runtime`] (the Skills extension,
//! `io.modelcontextprotocol/skills`).
//!
//! The runtime serves skills held in memory ([`Skill`], [`ServerBuilder::skill`]); this crate
//! reads them from the file system: every directory below the skills directory holding a
//! `SKILL.md` is a skill, and every file of it a `skill://<path>/<file>` resource.
//!
//! ```no_run
//! use mcp_tool_runtime::protocol::Implementation;
//! use mcp_tool_runtime::server::Server;
//! use mcp_tool_skills::SkillsExt as _;
//!
//! let server = Server::builder(Implementation::new("notes", "1.0"))
//!     .skills("skills") // skills/notes/SKILL.md, skills/notes/references/examples.md
//!     .build()?;
//! # Ok::<(), mcp_tool_runtime::RegistrationError>(())
//! ```
//!
//! The directory is read once, when `.skills(dir)` is called, into memory: requests never
//! touch the file system, so no request parameter can reach a path outside the directory.
//! [`load`] refuses (links, special files, names that are not URI segments, the bounds
//! [`MAX_TOTAL_FILES`], [`MAX_TOTAL_BYTES`], [`MAX_DEPTH`]) and [`parse_frontmatter`]
//! refuses (aliases, duplicate keys, tags, deep nesting, ...) surface at
//! [`ServerBuilder::build`] as [`RegistrationError::Skill`], naming the path and the rule.
//!
//! [`Skill`]: mcp_tool_runtime::resource::skills::Skill
//! [`ServerBuilder::skill`]: mcp_tool_runtime::server::ServerBuilder::skill
//! [`ServerBuilder::build`]: mcp_tool_runtime::server::ServerBuilder::build
//! [`RegistrationError::Skill`]: mcp_tool_runtime::RegistrationError::Skill

mod frontmatter;
mod load;

use std::path::Path;

use mcp_tool_runtime::server::ServerBuilder;

pub use frontmatter::{MAX_FRONTMATTER_BYTES, parse_frontmatter};
pub use load::{MAX_DEPTH, MAX_TOTAL_BYTES, MAX_TOTAL_FILES, load};

/// `.skills(dir)` on the server builder.
pub trait SkillsExt: Sized {
    /// Serves the Agent Skills under `dir`: [`load`]s them, and registers each with
    /// [`ServerBuilder::skill`]. A directory [`load`] refuses, or a skill the runtime
    /// refuses (a `name` that is not its directory's name or breaks the naming rules, no
    /// `description`, more than 512 files or 16 MiB in one skill), is refused at
    /// [`ServerBuilder::build`] with [`RegistrationError::Skill`](mcp_tool_runtime::RegistrationError::Skill).
    fn skills(self, dir: impl AsRef<Path>) -> Self;
}

impl SkillsExt for ServerBuilder {
    fn skills(self, dir: impl AsRef<Path>) -> Self {
        match load(dir) {
            Ok(skills) => skills.into_iter().fold(self, ServerBuilder::skill),
            Err(e) => self.refuse(e),
        }
    }
}
