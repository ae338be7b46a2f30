use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    // the round is not bound to a tuple of names
    let both = cx
        .round((mcp_tool_runtime::requests::Ask::<Name>::new("a"), mcp_tool_runtime::requests::Ask::<Name>::new("b")))
        .await?;
    Ok(both.0.name + &both.1.name)
}

fn main() {
    let _ = t::tool();
}
