#![doc = include_str!("reference.md")]
#![warn(missing_docs)]

mod analyse;
mod errors;
mod expand;
mod fallback;
mod parse;
mod pipeline;
mod rt;

use proc_macro::TokenStream;

/// Compiles a linear async tool function into a resumable MCP tool.
///
/// The attribute reference, for `#[mcp_tool]` and the other three attributes:
///
#[doc = include_str!("reference.md")]
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_tool(attr.into(), item.into()).into()
}

/// Compiles a linear async prompt function (it may ask before it answers) into an MCP prompt.
/// Written and checked like a tool: see the attribute reference on [`mcp_tool`].
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_prompt(attr.into(), item.into()).into()
}

/// Compiles a linear async resource function (it may ask before it answers) into an MCP
/// resource at a fixed URI or an RFC 6570 URI template. Written and checked like a tool: see
/// the attribute reference on [`mcp_tool`].
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_resource(attr.into(), item.into()).into()
}

/// Compiles a helper async function with suspension points into a sub-flow that tools and
/// other flows call as `let v = name(cx, args…).await?;`. See *Flows* in the attribute
/// reference on [`mcp_tool`].
#[proc_macro_attribute]
pub fn mcp_flow(attr: TokenStream, item: TokenStream) -> TokenStream {
    pipeline::expand_flow(attr.into(), item.into()).into()
}
