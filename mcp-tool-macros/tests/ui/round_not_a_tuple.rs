use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let set = (mcp_tool_runtime::requests::Ask::<Name>::new("a"),);
    let (a,) = cx.round(set).await?;
    Ok(a.name)
}

fn main() {
    let _ = t::tool();
}
