use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Num {
    n: i64,
}

#[mcp_tool]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<i64, ToolError> {
    let mut total = 0;
    // the loop's value is not bound by a `let`: nowhere to carry it
    loop {
        let v: Num = cx.ask("n?").await?;
        if v.n == 0 {
            break v.n;
        }
        total += v.n;
    }
    Ok(total)
}

fn main() {
    let _ = t::tool();
}
