//! `link_accounts`, the SEP-2322 rolling-upgrade scenario.
//!
//! An older build asked `github_login` and `google_login` together; a newer build also needs
//! `microsoft_login`. Written linearly: one round asks the first two (`cx.round`), a later
//! round asks the third. The first two answers are kept in the sealed `requestState`, so a
//! retry carrying only `microsoft_login` completes and the user is never asked twice — on
//! whichever replica takes it.

use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool, requests::Ask};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of `link_accounts`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LinkArgs {
    /// What the accounts are linked for, e.g. "single sign-on".
    #[serde(default)]
    pub purpose: Option<String>,
}

/// The `github_login` form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GithubLogin {
    /// Your GitHub username.
    pub name: String,
}

/// The `google_login` form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GoogleLogin {
    /// Your Google account's email address.
    pub email: String,
}

/// The `microsoft_login` form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MicrosoftLogin {
    /// Your Microsoft account's email address.
    pub email: String,
}

/// The linked accounts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LinkedAccounts {
    /// The GitHub username.
    pub github: String,
    /// The Google account.
    pub google: String,
    /// The Microsoft account.
    pub microsoft: String,
    /// What they were linked for.
    pub purpose: String,
}

/// Link your GitHub, Google and Microsoft accounts (SEP-2322's rolling-upgrade scenario).
#[mcp_tool(max_rounds = 3)]
pub async fn link_accounts(
    cx: &mut ToolContext,
    args: LinkArgs,
) -> Result<LinkedAccounts, ToolError> {
    let (github_login, google_login) = cx
        .round((
            Ask::<GithubLogin>::new("Please provide your GitHub username"),
            Ask::<GoogleLogin>::new("Please provide your Google account"),
        ))
        .await?;
    let microsoft_login = cx
        .ask::<MicrosoftLogin>("Please provide your Microsoft account")
        .await?;
    Ok(LinkedAccounts {
        github: super::bounded(&github_login.name, 100),
        google: super::bounded(&google_login.email, 100),
        microsoft: super::bounded(&microsoft_login.email, 100),
        purpose: super::bounded(args.purpose.as_deref().unwrap_or("single sign-on"), 100),
    })
}
