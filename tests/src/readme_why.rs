//! The tool of the README's side-by-side ("Why"), compiled here: the README shows its
//! function as an excerpt of this file (checked by `tests/docs_code.rs`).

use mcp_tool_runtime::{Sample, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The tool's arguments.
#[derive(Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The city.
    pub location: String,
}

/// The form asked for.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct GitHubLogin {
    /// A GitHub username.
    pub name: String,
}

/// The tool's result.
#[derive(Serialize, JsonSchema)]
pub struct Forecast {
    /// Who asked.
    pub user: String,
    /// The model's rating.
    pub verdict: String,
}

/// The work done before the question.
pub async fn do_work(args: &WeatherArgs) -> Result<String, ToolError> {
    Ok(format!("sunny in {}", args.location))
}

/// Weather for a location, after a GitHub login.
#[rustfmt::skip] // formatted as the README shows it
#[mcp_tool(max_rounds = 2)]
async fn get_weather(
    cx: &mut ToolContext,
    args: WeatherArgs,
) -> Result<Forecast, ToolError> {
    let work = do_work(&args).await?;
    let github_login: GitHubLogin =
        cx.ask("Please provide your GitHub username").await?;
    let verdict = cx
        .sample(Sample::user(format!("Rate: {work}")).max_tokens(100))
        .await?
        .text()?;
    Ok(Forecast { user: github_login.name, verdict })
}

/// The tool, for a server.
pub fn tool() -> impl mcp_tool_runtime::Tool {
    get_weather::tool()
}
