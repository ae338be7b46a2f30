use mcp_tool_runtime::{mcp_tool, ToolContext};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> String {
    let _ = cx;
    String::new()
}

fn main() {
    let _ = t::tool();
}
