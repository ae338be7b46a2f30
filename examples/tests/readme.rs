//! The tools shown in README.md, copied verbatim, run through their rounds: the README's
//! examples must compile and behave as the text says.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_runtime::client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{
    ClientCapabilities, CreateMessageResult, ElicitResult, Implementation,
};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{Sample, Server};
use serde_json::{Value, json};

/// The README's side-by-side tool ("mcp-tool: the tool as you think it").
mod side_by_side {
    use super::*;
    use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    pub static WORK_RUNS: AtomicUsize = AtomicUsize::new(0);

    #[derive(Deserialize, JsonSchema)]
    pub struct WeatherArgs {
        pub location: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct GitHubLogin {
        pub name: String,
    }

    #[derive(Serialize, JsonSchema)]
    pub struct Forecast {
        pub user: String,
        pub verdict: String,
    }

    async fn do_work(args: &WeatherArgs) -> Result<String, ToolError> {
        WORK_RUNS.fetch_add(1, Ordering::SeqCst);
        Ok(format!("rain in {}", args.location))
    }

    /// Weather for a location, after a GitHub login.
    #[mcp_tool(max_rounds = 2)]
    pub async fn get_weather(
        cx: &mut ToolContext,
        args: WeatherArgs,
    ) -> Result<Forecast, ToolError> {
        let work = do_work(&args).await?;
        let github_login: GitHubLogin = cx.ask("Please provide your GitHub username").await?;
        let verdict = cx
            .sample(Sample::user(format!("Rate: {work}")).max_tokens(100))
            .await?
            .text()?;
        Ok(Forecast {
            user: github_login.name,
            verdict,
        })
    }
}

/// The README's "Write a tool" example.
mod write_a_tool {
    use mcp_tool_runtime::{
        Elicitation, ToolContext, ToolError, mcp_tool, protocol::CallToolResult,
    };
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Arguments: their schema is the tool's `inputSchema` (doc comments included).
    #[derive(Deserialize, JsonSchema)]
    pub struct WeatherArgs {
        /// The city, e.g. "New York".
        pub location: String,
    }

    /// A form: its schema is the `requestedSchema` (flat and primitive — checked at registration).
    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct GithubLogin {
        /// Your GitHub username.
        pub name: String,
    }

    /// Get the weather for a location (the doc comment is the tool's description).
    #[mcp_tool(max_rounds = 1, read_only)]
    pub async fn get_weather(
        cx: &mut ToolContext,
        args: WeatherArgs,
    ) -> Result<CallToolResult, ToolError> {
        let github_login = cx
            .elicit::<GithubLogin>("Please provide your GitHub username")
            .await?;
        Ok(match github_login {
            Elicitation::Accept(login) => {
                CallToolResult::text(format!("Sunny in {} for {}", args.location, login.name))
            }
            Elicitation::Decline | Elicitation::Cancel => {
                CallToolResult::text("No problem, nothing was looked up.")
            }
        })
    }
}

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn server(tool: impl mcp_tool_runtime::Tool) -> Arc<Server> {
    let server = Server::builder(Implementation::new("my-server", "1.0"))
        .sealer(Sealer::new(
            Keyring::from_hex("k1", KEY).expect("key"),
            SealConfig::default(),
        ))
        .tool(tool)
        .build()
        .expect("registration");
    Arc::new(server)
}

fn accept(content: Value) -> ElicitResult {
    ElicitResult::accept(content.as_object().cloned().expect("object"))
}

#[tokio::test]
async fn side_by_side_tool_runs_in_two_rounds_and_never_repeats_work() {
    let host = ScriptedHost::new(
        ClientCapabilities::none()
            .with_elicitation()
            .with_sampling(),
    )
    .answer("github_login", accept(json!({"name": "octocat"})))
    .answer("verdict", CreateMessageResult::text("m", "wet"));
    let mut driver = Driver::new(
        InProcessTransport::new(server(side_by_side::get_weather::tool())),
        host,
    );
    let before = side_by_side::WORK_RUNS.load(Ordering::SeqCst);
    let out = driver
        .call_tool("get_weather", json!({"location": "Paris"}))
        .await
        .expect("call");
    assert_eq!(out.rounds, 3, "two input_required results, then complete");
    assert_eq!(
        out.result.get("structuredContent"),
        Some(&json!({"user": "octocat", "verdict": "wet"}))
    );
    assert_eq!(
        side_by_side::WORK_RUNS.load(Ordering::SeqCst) - before,
        1,
        "do_work runs once across the three requests"
    );
    // The keys come from the bindings.
    let asked: Vec<&str> = driver.host().asked_keys();
    assert_eq!(asked, ["github_login", "verdict"]);
}

#[tokio::test]
async fn write_a_tool_example_accepts_and_declines() {
    for (answer, text) in [
        (
            accept(json!({"name": "octocat"})),
            "Sunny in Paris for octocat",
        ),
        (
            ElicitResult::decline(),
            "No problem, nothing was looked up.",
        ),
    ] {
        let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
            .answer("github_login", answer);
        let mut driver = Driver::new(
            InProcessTransport::new(server(write_a_tool::get_weather::tool())),
            host,
        );
        let out = driver
            .call_tool("get_weather", json!({"location": "Paris"}))
            .await
            .expect("call");
        assert_eq!(out.text(), text);
    }
}
