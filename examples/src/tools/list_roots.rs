//! `list_roots`: one `roots/list` round, then a report of the client's roots. The roots are
//! client data (untrusted): they are reported, bounded, never opened.

use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most roots reported.
pub const MAX_ROOTS: usize = 32;

/// Arguments of `list_roots` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct RootsArgs {}

/// One root as reported.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RootReport {
    /// The root's URI.
    pub uri: String,
    /// Its display name, if any.
    pub name: Option<String>,
    /// Whether it is a local directory (`file://`).
    pub local: bool,
}

/// The client's roots.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RootsReport {
    /// How many roots the client sent.
    pub count: usize,
    /// The first few of them.
    pub roots: Vec<RootReport>,
}

/// List the directories (roots) your client shares with this server.
#[mcp_tool(max_rounds = 1, read_only)]
pub async fn list_roots(cx: &mut ToolContext, args: RootsArgs) -> Result<RootsReport, ToolError> {
    let _ = args;
    let roots = cx.roots().await?;
    Ok(RootsReport {
        count: roots.len(),
        roots: roots
            .iter()
            .take(MAX_ROOTS)
            .map(|r| RootReport {
                uri: super::bounded(&r.uri, 512),
                name: r.name.as_deref().map(|n| super::bounded(n, 100)),
                local: r.uri.starts_with("file://"),
            })
            .collect(),
    })
}
