//! The tools shown in README.md and docs/GUIDE.md, copied verbatim, run through their rounds:
//! the examples must behave as the text says (the tests package's doctests compile the
//! blocks themselves).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_tool_client::{Driver, InProcessTransport, ScriptedHost};
use mcp_tool_runtime::protocol::{
    ClientCapabilities, CreateMessageResult, ElicitResult, Implementation,
};
use mcp_tool_runtime::seal::{Keyring, SealConfig, Sealer};
use mcp_tool_runtime::{Sample, Server};
use serde_json::{Value, json};

/// The README's side-by-side tool ("mcp-tool: the tool as you think it"), which the README
/// shows as an excerpt of this file (checked by the tests package's `docs_code`).
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
    #[rustfmt::skip] // formatted as the README shows it (an excerpt of this file)
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
}

/// The README's "Write a tool" example (verbatim; `readme_blocks_match` checks it).
#[rustfmt::skip]
mod write_a_tool {
    use mcp_tool_runtime::{Elicitation, State, ToolContext, ToolError, mcp_flow, mcp_tool, protocol::CallToolResult};
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

    /// Application state: given to the server once, taken by type, never put in the requestState.
    pub struct Forecasts;

    impl Forecasts {
        pub fn today(&self, location: &str) -> String {
            format!("Sunny in {location}")
        }
    }

    /// A dialog shared by several tools: the login, or `None` when the user says no.
    #[mcp_flow]
    pub async fn github_login(cx: &mut ToolContext) -> Result<Option<String>, ToolError> {
        let login = cx.elicit::<GithubLogin>("Please provide your GitHub username").await?;
        Ok(match login {
            Elicitation::Accept(l) => Some(l.name),
            Elicitation::Decline | Elicitation::Cancel => None,
        })
    }

    /// Get the weather for a location (the doc comment is the tool's description).
    #[mcp_tool(read_only)]
    pub async fn get_weather(
        cx: &mut ToolContext,
        args: WeatherArgs,
        forecasts: State<Forecasts>,
    ) -> Result<CallToolResult, ToolError> {
        let Some(user) = github_login(cx).await? else {
            return Ok(CallToolResult::text("No problem, nothing was looked up."));
        };
        Ok(CallToolResult::text(format!("{} for {user}", forecasts.today(&args.location))))
    }
}

/// The README's "Prompts and resources" example (verbatim; `readme_blocks_match` checks it).
#[rustfmt::skip]
mod prompts_and_resources {
    use super::write_a_tool::Forecasts;
    use mcp_tool_runtime::{CompleteContext, State, ToolContext, ToolError, mcp_prompt, mcp_resource};
    use mcp_tool_runtime::protocol::{ContentBlock, PromptMessage};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Prompt arguments: each field is an argument (name, description, required unless `Option`).
    #[derive(Deserialize, JsonSchema)]
    pub struct BriefingArgs {
        /// The city to brief on.
        pub city: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct Audience {
        /// Who reads the briefing, e.g. "pilots".
        pub audience: String,
    }

    /// A weather briefing for a city: asks who it is for, then answers with the forecast.
    #[mcp_prompt(complete(city = complete_city))]
    pub async fn briefing(
        cx: &mut ToolContext,
        args: BriefingArgs,
        forecasts: State<Forecasts>,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        let who: Audience = cx.ask("Who is the briefing for?").await?;
        Ok(vec![
            PromptMessage::user(ContentBlock::embedded_text(
                format!("weather://{}/today", args.city),
                forecasts.today(&args.city),
            )),
            PromptMessage::user(format!("Brief {} on the weather above.", who.audience)),
        ])
    }

    /// Suggestions for `city`.
    pub async fn complete_city(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
        let cities = ["Lagos", "Lima", "Lisbon", "London"];
        Ok(cities.iter().filter(|c| c.starts_with(&cx.value)).map(|c| c.to_string()).collect())
    }

    /// A template's variables: `{city}` arrives as `city`, `{days}` parsed into a `u8`.
    #[derive(Deserialize, JsonSchema)]
    pub struct ForecastVars {
        pub city: String,
        pub days: u8,
    }

    /// The forecast of a city for a number of days.
    #[mcp_resource(template = "weather://{city}/days/{days}", mime_type = "text/plain")]
    pub async fn forecast(
        _cx: &mut ToolContext,
        vars: ForecastVars,
        forecasts: State<Forecasts>,
    ) -> Result<String, ToolError> {
        Ok(format!("{} (for {} days)", forecasts.today(&vars.city), vars.days))
    }
}

const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn server(tool: impl mcp_tool_runtime::Tool) -> Arc<Server> {
    let server = Server::builder(Implementation::new("my-server", "1.0"))
        .sealer(Sealer::new(
            Keyring::from_hex("k1", KEY).expect("key"),
            SealConfig::default(),
        ))
        .state(write_a_tool::Forecasts)
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
    let mut driver = Driver::new(InProcessTransport::new(server(side_by_side::tool())), host);
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
            .answer("user/login", answer);
        let mut driver = Driver::new(
            InProcessTransport::new(server(write_a_tool::get_weather::tool())),
            host,
        );
        let out = driver
            .call_tool("get_weather", json!({"location": "Paris"}))
            .await
            .expect("call");
        assert_eq!(out.text(), text);
        assert_eq!(out.rounds, 2);
        assert_eq!(driver.host().asked_keys(), ["user/login"]);
    }
}

/// The README's "Test it" steps 1 and 2, as written there.
#[tokio::test]
async fn test_it_example_scripts_one_host_for_both_modes() {
    use mcp_tool_runtime::State;
    use write_a_tool::{Forecasts, WeatherArgs, get_weather};
    let host = || {
        let form = json!({"name": "octocat"}).as_object().cloned().unwrap();
        ScriptedHost::new(ClientCapabilities::none().with_elicitation())
            .answer("user/login", ElicitResult::accept(form))
    };
    let mut cx = mcp_tool_runtime::testing::direct(host());
    let args = WeatherArgs {
        location: "London".into(),
    };
    let result = get_weather(&mut cx, args, State::new(Forecasts))
        .await
        .expect("direct mode");
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "Sunny in London for octocat"
    );
    let server = server(get_weather::tool());
    let mut driver = Driver::new(InProcessTransport::new(server), host());
    let out = driver
        .call_tool("get_weather", json!({"location": "Paris"}))
        .await
        .expect("call");
    assert_eq!(out.rounds, 2);
    assert_eq!(out.text(), "Sunny in Paris for octocat");
}

/// The README's tool (its "One tool, served" program up to `main`, which the tests package's
/// doctests compile) is the one driven here, character for character (modulo indentation).
#[test]
fn readme_blocks_match() {
    let readme = include_str!("../../README.md");
    let here = include_str!("readme.rs");
    let start = readme.find("## One tool, served").expect("section");
    let block = &readme[start..];
    let fence = "```rust,no_run\n";
    let block = &block[block.find(fence).expect("code") + fence.len()..];
    let block = &block[..block.find("#[tokio::main]").expect("main")];
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            here.lines()
                .any(|h| h.trim_end() == format!("    {line}").trim_end()),
            "README line not in tests/readme.rs: {line}"
        );
    }
}

/// The README's prompt and resource, registered next to the tool and driven through their
/// rounds.
#[tokio::test]
async fn prompts_and_resources_example_works() {
    use prompts_and_resources::{briefing, forecast};
    let server = Server::builder(Implementation::new("my-server", "1.0"))
        .state(write_a_tool::Forecasts)
        .tool(write_a_tool::get_weather::tool())
        .prompt(briefing::prompt())
        .resource(forecast::resource())
        .build()
        .expect("registration");
    let host = ScriptedHost::new(ClientCapabilities::none().with_elicitation())
        .answer("who", accept(json!({"audience": "pilots"})));
    let mut driver = Driver::new(InProcessTransport::new(server), host);
    let out = driver
        .get_prompt("briefing", json!({"city": "Lima"}))
        .await
        .expect("prompt");
    assert_eq!(out.rounds, 2);
    assert_eq!(
        out.result["messages"][0]["content"]["resource"]["text"],
        "Sunny in Lima"
    );
    assert_eq!(
        out.result["messages"][1]["content"]["text"],
        "Brief pilots on the weather above."
    );
    let out = driver
        .read_resource("weather://Lima/days/3")
        .await
        .expect("read");
    assert_eq!(
        out.result["contents"][0]["text"],
        "Sunny in Lima (for 3 days)"
    );
    let r = driver
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "briefing"}, "argument": {"name": "city", "value": "Li"}}),
        )
        .await
        .expect("complete");
    assert_eq!(r["completion"]["values"], json!(["Lima", "Lisbon"]));
}
