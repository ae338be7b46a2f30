use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

// Not `Serialize + JsonSchema`: cannot become `structuredContent`.
struct Report {
    lines: Vec<String>,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext) -> Result<Report, ToolError> {
    let _ = cx;
    Ok(Report { lines: Vec::new() })
}

fn main() {
    let _ = t::tool();
}
