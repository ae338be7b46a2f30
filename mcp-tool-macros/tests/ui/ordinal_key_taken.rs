use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    // the binding names this point "ask_2": the key of the second `ask`, which nothing names
    let ask_2: Name = cx.ask("first?").await?;
    Ok(ask_2.name + &cx.ask::<Name>("second?").await?.name)
}

fn main() {
    let _ = t::tool();
}
