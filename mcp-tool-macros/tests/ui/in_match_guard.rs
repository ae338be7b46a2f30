use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let k = 1;
    match k {
        1 if cx.ask::<Name>("x").await?.name.is_empty() => Ok("a".into()),
        _ => Ok("b".into()),
    }
}

fn main() {
    let _ = t::tool();
}
