use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let ready = true;
    let both = ready && cx.ask::<Name>("who?").key("who").await?.name.is_empty();
    Ok(both.to_string())
}

fn main() {
    let _ = t::tool();
}
