use mcp_tool_runtime::{mcp_flow, ToolContext, ToolError};

#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: &'static str, how: impl AsRef<str> + Send) -> Result<bool, ToolError> {
    let _ = (cx, what, how.as_ref());
    Ok(true)
}

fn main() {}
