use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {
    name: Option<String>,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let Some(name) = args.name else {
        let asked: Name = cx.ask("who?").await?;
        return Ok(asked.name);
    };
    Ok(name)
}

fn main() {
    let _ = t::tool();
}
