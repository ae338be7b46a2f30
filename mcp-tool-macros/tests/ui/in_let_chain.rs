use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let known = Some(1);
    // a `let` chain: the suspension point would sit between two pattern tests
    if let Some(k) = known
        && cx.ask::<Name>("who?").await?.name == "ada"
    {
        return Ok(k.to_string());
    }
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
