use mcp_tool_runtime::{mcp_tool, ToolContext};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(Debug)]
struct MyError;

impl std::fmt::Display for MyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mine")
    }
}

impl std::error::Error for MyError {}

// `MyError` cannot carry the framework's errors (no `From<ToolError>`).
#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<String, MyError> {
    let _ = cx;
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
