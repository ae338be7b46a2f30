use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let owned = String::from("hi");
    let view: &str = &owned;
    let n: Name = cx.ask("who?").await?;
    Ok(format!("{} {view}", n.name))
}

fn main() {
    let _ = t::tool();
}
