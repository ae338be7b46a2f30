use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t<T>(cx: &mut ToolContext, args: T) -> Result<String, ToolError> {
    let _ = (cx, args);
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
