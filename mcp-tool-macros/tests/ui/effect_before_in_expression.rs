use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let s = join(prefix(), cx.ask::<Name>("who?").await?.name);
    Ok(s)
}

fn prefix() -> String { "x".into() }
fn join(a: String, b: String) -> String { a + &b }

fn main() {
    let _ = t::tool();
}
