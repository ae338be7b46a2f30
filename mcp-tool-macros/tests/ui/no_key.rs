use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    cx.ask::<Name>("who?").await?;
    // a hoisted `match` scrutinee has no name either
    match cx.ask::<Name>("who else?").await? {
        n if n.name.is_empty() => Ok(String::new()),
        n => Ok(n.name),
    }
}

fn main() {
    let _ = t::tool();
}
