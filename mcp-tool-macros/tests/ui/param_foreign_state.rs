use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

/// Another framework's extractor that happens to be called `State` (as `axum::extract::State`).
mod axum_like {
    pub struct State<T>(pub T);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {}

struct Db;

#[mcp_tool]
async fn t(_cx: &mut ToolContext, _args: Args, _db: axum_like::State<Db>) -> Result<String, ToolError> {
    Ok(String::new())
}

#[mcp_tool]
async fn u(_cx: &mut ToolContext, _db: axum_like::State<Db>) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
    let _ = u::tool();
}
