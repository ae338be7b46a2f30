use mcp_tool_runtime::{mcp_flow, ToolContext, ToolError};

#[mcp_flow]
async fn confirm<T: std::fmt::Display + Send>(cx: &mut ToolContext, what: T) -> Result<bool, ToolError> {
    let _ = (cx, what.to_string());
    Ok(true)
}

fn main() {}
