use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let k = 2;
    if k == 1 {
        return Ok("one".into());
    } else if cx.ask::<Name>("x").key("x").await?.name.is_empty() {
        return Ok("empty".into());
    }
    Ok("other".into())
}

fn main() {
    let _ = t::tool();
}
