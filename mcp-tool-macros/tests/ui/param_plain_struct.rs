use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {}

/// A second arguments struct: not a `FromContext` parameter.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct More {}

#[mcp_tool]
async fn t(_cx: &mut ToolContext, _args: Args, _more: More) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
