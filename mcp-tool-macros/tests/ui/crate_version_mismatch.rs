// `crate = "…"` names a runtime of another version (here a stand-in whose private module has
// another version's name): the generated paths say which version the macros expect.
mod other_runtime {
    pub use mcp_tool_runtime::*;
    pub mod __private {
        pub mod v0_0_9 {}
    }
}

use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[mcp_tool(crate = "crate::other_runtime")]
async fn t(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("x".into())
}

fn main() {}
