use mcp_tool_runtime::{mcp_flow, mcp_tool, ToolContext, ToolError};

#[mcp_tool(crate = "my framework::mcp")]
async fn t(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("x".into())
}

#[mcp_flow(crate = my_framework)]
async fn f(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("x".into())
}

fn main() {}
