use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let n = cx.ask::<Name>("a").key("a").await?.name + &cx.ask::<Name>("b").key("b").await?.name;
    Ok(n)
}

fn main() {
    let _ = t::tool();
}
