use mcp_tool_runtime::{mcp_flow, mcp_tool, ToolContext, ToolError};

#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let _ = (cx, what);
    Ok(true)
}

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    let sure = confirm::<u8>(cx, "x".into()).await?;
    Ok(sure.to_string())
}

fn main() {
    let _ = t::tool();
}
