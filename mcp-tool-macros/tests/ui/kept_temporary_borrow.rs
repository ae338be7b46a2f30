use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

fn join(a: &str, b: String) -> String {
    format!("{a}{b}")
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, ToolError> {
    let greeting = String::from("hello ");
    // `greeting.as_str()` runs before the question: a borrow kept across it
    Ok(join(greeting.as_str(), cx.ask::<Name>("who?").await?.name))
}

fn main() {
    let _ = t::tool();
}
