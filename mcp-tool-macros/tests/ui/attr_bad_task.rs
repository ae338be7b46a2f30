use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[mcp_tool(task = "always")]
async fn t(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(task_start = "detach")]
async fn u(cx: &mut ToolContext) -> Result<String, ToolError> {
    cx.detach();
    cx.checkpoint().await?;
    Ok("done".into())
}

fn main() {
    let _ = t::tool();
    let _ = u::tool();
}
