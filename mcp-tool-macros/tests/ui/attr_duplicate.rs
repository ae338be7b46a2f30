use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool(title = "A", title = "B")]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let n: Name = cx.ask("name?").await?;
    Ok(n.name)
}

fn main() {
    let _ = t::tool();
}
