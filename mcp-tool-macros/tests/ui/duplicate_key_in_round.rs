use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    use mcp_tool_runtime::requests::Ask;
    let (a, b) = cx.round((Ask::<Name>::new("a"), Ask::<Name>::new("b").key("a"))).await?;
    Ok(a.name + &b.name)
}

fn main() {
    let _ = t::tool();
}
