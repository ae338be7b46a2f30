use mcp_tool_runtime::{mcp_prompt, mcp_resource, mcp_tool, ToolContext, ToolError};

#[mcp_tool(once, task = "optional")]
async fn t(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(once = "yes")]
async fn u(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_prompt(once)]
async fn p(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_resource(uri = "demo://r", once)]
async fn r(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

fn main() {
    let _ = t::tool();
    let _ = u::tool();
}
