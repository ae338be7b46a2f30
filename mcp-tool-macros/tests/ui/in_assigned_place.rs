use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let mut v = vec![0; 3];
    // Rust evaluates the place after the value: the answer would be asked second
    v[cx.ask::<Name>("which?").await?.name.len()] = 1;
    Ok(format!("{v:?}"))
}

fn main() {
    let _ = t::tool();
}
