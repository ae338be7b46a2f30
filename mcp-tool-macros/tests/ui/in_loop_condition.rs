use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let mut n = 0;
    while cx.ask::<Name>("again?").await?.name != "stop" {
        n += 1;
    }
    Ok(n.to_string())
}

fn main() {
    let _ = t::tool();
}
