use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    async fn inner(cx: &mut ToolContext) -> Result<Name, ToolError> {
        cx.ask::<Name>("who?").await
    }
    let _ = &cx;
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
