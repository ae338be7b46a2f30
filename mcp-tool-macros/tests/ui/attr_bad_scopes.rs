use mcp_tool_runtime::protocol::PromptMessage;
use mcp_tool_runtime::{mcp_prompt, mcp_resource, mcp_tool, ToolContext, ToolError};

#[mcp_tool(scopes = "")]
async fn empty(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(scopes = "notes:read notes\"write")]
async fn quote(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(scopes = "notes:read  notes:write")]
async fn two_spaces(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(scopes = ["notes:read notes:write"])]
async fn space_in_array(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(scopes = [])]
async fn empty_array(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_tool(scopes = notes_write)]
async fn not_a_string(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[mcp_prompt(scopes = "prompts:é")]
async fn non_ascii(_cx: &mut ToolContext) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![])
}

#[mcp_resource(uri = "test://motd", scopes = "motd motd")]
async fn twice(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("hi".into())
}

fn main() {}
