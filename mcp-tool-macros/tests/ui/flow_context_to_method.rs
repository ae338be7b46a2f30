use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

struct Dialogs;

impl Dialogs {
    async fn login(&self, cx: &mut ToolContext) -> Result<String, ToolError> {
        let _ = cx;
        Ok(String::new())
    }
}

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<String, ToolError> {
    let d = Dialogs;
    let name = d.login(cx).await?;
    Ok(name)
}

fn main() {
    let _ = t::tool();
}
