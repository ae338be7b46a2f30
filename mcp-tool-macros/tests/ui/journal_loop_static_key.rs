use mcp_tool_runtime::{mcp_tool, ToolContext, ToolError};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Args {}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Num {
    n: i64,
}

#[mcp_tool(journal)]
async fn t(cx: &mut ToolContext, _args: Args) -> Result<i64, ToolError> {
    let mut total = 0;
    for i in 0..3 {
        let v: Num = cx.ask(format!("n{i}?")).await?;
        total += v.n;
    }
    // a key computed per iteration is fine
    for i in 0..3 {
        let w: Num = cx.ask(format!("m{i}?")).key(format!("m{i}")).await?;
        total += w.n;
    }
    Ok(total)
}

fn main() {
    let _ = t::tool();
}
