use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    // a `&'static str` cannot come back out of the requestState
    let greeting = "hello";
    let n: Name = cx.ask("who?").await?;
    Ok(format!("{greeting} {}", n.name))
}

fn main() {
    let _ = t::tool();
}
