use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Login {
    name: String,
}

// A helper that asks, but is not an `#[mcp_flow]`: it cannot be split.
async fn github_login(cx: &mut ToolContext) -> Result<Login, ToolError> {
    cx.ask("GitHub username?").await
}

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    let login = github_login(cx).await?;
    Ok(login.name)
}

fn main() {
    let _ = t::tool();
}
