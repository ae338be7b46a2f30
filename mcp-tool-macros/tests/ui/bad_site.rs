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

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    // `/` separates a call site from the flow's own keys
    let sure = confirm(cx, "Delete?".into()).key("a/b").await?;
    Ok(sure.to_string())
}

fn main() {
    let _ = t::tool();
}
