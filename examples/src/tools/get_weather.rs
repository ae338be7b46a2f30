//! `get_weather`, the SEP-2322 example: a form elicitation `github_login` ("Please provide
//! your GitHub username", schema `{name: string}`), then the forecast. A user who declines or
//! cancels gets a polite, ordinary tool result — not an error, not a crash.

use mcp_tool_runtime::protocol::{CallToolResult, StructuredContent};
use mcp_tool_runtime::{Elicitation, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `get_weather`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WeatherArgs {
    /// The city, e.g. "New York".
    pub location: String,
}

/// The `github_login` form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GithubLogin {
    /// Your GitHub username.
    pub name: String,
}

/// Get the weather for a location (asks for your GitHub username first, as in SEP-2322).
#[mcp_tool(max_rounds = 2, read_only)]
pub async fn get_weather(
    cx: &mut ToolContext,
    args: WeatherArgs,
) -> Result<CallToolResult, ToolError> {
    if args.location.trim().is_empty() || args.location.chars().count() > 100 {
        return Err(ToolError::InvalidArguments {
            field: "location".into(),
            message: "1 to 100 characters".into(),
        });
    }
    let github_login = cx
        .elicit::<GithubLogin>("Please provide your GitHub username")
        .await?;
    Ok(match github_login {
        Elicitation::Accept(login) => forecast_result(&args.location, &login.name)?,
        Elicitation::Decline => CallToolResult::text(format!(
            "No problem: without a GitHub username I can't look up the weather for {}. \
             Ask again whenever you like.",
            args.location
        )),
        Elicitation::Cancel => {
            CallToolResult::text("Cancelled: the weather lookup was stopped, nothing was done.")
        }
    })
}

/// The deterministic forecast for `location` (the demo repository's table, or a stable
/// made-up value for other cities).
pub fn forecast(location: &str) -> (&'static str, i64) {
    match location.trim().to_lowercase().as_str() {
        "london" => ("cloudy", 14),
        "new york" => ("sunny", 22),
        "paris" => ("rain", 17),
        other => {
            let h = other
                .bytes()
                .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
            let skies = ["sunny", "cloudy", "windy", "rain"];
            (skies[(h % 4) as usize], 5 + (h % 25) as i64)
        }
    }
}

/// A forecast's `structuredContent`.
#[derive(Serialize)]
pub struct Forecast<'a> {
    /// The city asked about.
    pub location: &'a str,
    /// The sky ("sunny", "cloudy", "windy" or "rain").
    pub sky: &'a str,
    /// The day's high, in °C.
    #[serde(rename = "highC")]
    pub high_c: i64,
    /// The GitHub login that asked (at most 64 characters).
    #[serde(rename = "requestedBy")]
    pub requested_by: &'a str,
}

fn forecast_result(location: &str, user: &str) -> Result<CallToolResult, ToolError> {
    let (sky, high_c) = forecast(location);
    let user = super::bounded(user, 64);
    let structured = StructuredContent::new(&Forecast {
        location,
        sky,
        high_c,
        requested_by: &user,
    })
    .map_err(|e| ToolError::Internal(format!("the forecast does not serialize: {e}")))?;
    Ok(CallToolResult::text(format!(
        "Weather in {location} for {user}: {sky}, high {high_c} °C."
    ))
    .with_structured(structured))
}
