use mcp_tool_runtime::{mcp_flow, mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct YesNo {
    ok: bool,
}

#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(what).await?;
    Ok(answer.ok)
}

#[mcp_tool(journal)]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    let first = confirm(cx, "Delete a?".into()).key("sure").await?;
    // the answers of both calls would be kept under `sure`
    let second = confirm(cx, "Delete b?".into()).key("sure").await?;
    Ok(format!("{first} {second}"))
}

fn main() {
    let _ = t::tool();
}
