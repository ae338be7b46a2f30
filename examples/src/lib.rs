//! Example tools written with `#[mcp_tool]`, plus what the demo, the server binary and the
//! interactive client share: the repository sandbox ([`repo`]), the deterministic fake model
//! ([`fake_model`]) and the terminal answering logic ([`interactive`]).

pub mod fake_model;
pub mod interactive;
pub mod repo;
