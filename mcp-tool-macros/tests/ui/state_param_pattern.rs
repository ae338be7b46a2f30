use mcp_tool_runtime::{mcp_tool, State, ToolContext, ToolError};

struct Db;

#[mcp_tool]
async fn t(cx: &mut ToolContext, (db, _other): State<Db>) -> Result<String, ToolError> {
    let _ = (cx, db);
    Ok(String::new())
}

fn main() {
    let _ = t::tool();
}
