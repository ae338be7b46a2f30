use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

fn label(n: std::rc::Rc<u32>, name: String) -> String {
    format!("{n} {name}")
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    // the first argument runs before the question, so its value is kept across it
    Ok(label(std::rc::Rc::new(5), cx.ask::<Name>("who?").await?.name))
}

fn main() {
    let _ = t::tool();
}
