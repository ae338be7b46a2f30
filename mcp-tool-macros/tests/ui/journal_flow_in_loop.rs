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
    let mut n = 0;
    for item in ["a", "b"] {
        // every iteration would get the first answers of `sure`: needs `.key(format!(…))`
        let sure = confirm(cx, format!("Delete {item}?")).await?;
        if sure {
            n += 1;
        }
    }
    Ok(n.to_string())
}

fn main() {
    let _ = t::tool();
}
