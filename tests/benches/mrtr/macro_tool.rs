//! (a) The tool written with `#[mcp_tool]`: one linear async fn.

use mcp_tool_runtime::{Sample, ToolContext, ToolError, mcp_tool};

use super::domain::{CityArgs, Forecast, Login, fetch};

// --- author code begin ---
/// Rates the weather in a city for a GitHub user: asks who, then asks the model.
#[mcp_tool(max_rounds = 2)]
pub async fn forecast(cx: &mut ToolContext, args: CityArgs) -> Result<Forecast, ToolError> {
    let login: Login = cx.ask("Your GitHub username?").await?;
    let raw: String = fetch(&args.city);
    let verdict = cx
        .sample(Sample::user(format!("Rate for {}: {raw}", login.name)).max_tokens(100))
        .await?
        .text()?;
    Ok(Forecast {
        user: login.name,
        city: args.city,
        verdict,
    })
}
// --- author code end ---
