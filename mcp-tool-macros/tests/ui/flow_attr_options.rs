use mcp_tool_runtime::{mcp_flow, ToolContext, ToolError};

#[mcp_flow(max_rounds = 2)]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let _ = (cx, what);
    Ok(true)
}

fn main() {}
