use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

fn make() -> mcp_tool_runtime::requests::Ask<Name> {
    mcp_tool_runtime::requests::Ask::new("who?")
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    // a builder made elsewhere: the macro cannot see which request it is
    let (a, b) = cx.round((make(), mcp_tool_runtime::requests::Ask::<Name>::new("b"))).await?;
    Ok(a.name + &b.name)
}

fn main() {
    let _ = t::tool();
}
