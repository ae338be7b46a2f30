//! An rmcp 3.11 server of a team's own — one rmcp-native `#[tool]` (`ratings`) — with two
//! linear `#[mcp_tool]` tools mounted in it: `forecast` (asks the user's name, then asks the
//! model; two rounds) and `rate_city` (asks for a rating and stores it in the team's
//! database, which the native `ratings` tool reads). A prompt (`briefing`, which asks who it
//! is for, with completion of its `city`) and a resource template (`weather://{city}/today`)
//! are mounted the same way.
//!
//! ```text
//! cargo run -p mcp-tool-rmcp --bin rmcp_example_server                  # stdio
//! cargo run -p mcp-tool-rmcp --bin rmcp_example_server -- --http 127.0.0.1:8080
//! cargo run -p mcp-tool-rmcp --bin rmcp_example_server -- --http 127.0.0.1:8080 --bearer-demo-auth
//! ```
//!
//! Over HTTP it prints `listening on http://ADDR/mcp` to stderr once bound. With
//! `--bearer-demo-auth` every request needs `Authorization: Bearer <token>` and the token is
//! the principal (a demonstration, not authentication); without it, and on stdio, the caller
//! is anonymous.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcp_tool_rmcp::LinearTools;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::protocol::PromptMessage;
use mcp_tool_runtime::transport::auth::BearerDemoAuth;
use mcp_tool_runtime::{
    CompleteContext, Elicitation, Sample, Server, State, ToolContext, ToolError, mcp_prompt,
    mcp_resource, mcp_tool,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ------------------------------------------------------------------ the team's server

/// The team's database: conditions by city, and the ratings users gave.
#[derive(Clone, Default)]
pub struct Db {
    ratings: Arc<Mutex<BTreeMap<String, u8>>>,
}

impl Db {
    /// Today's conditions in `city` (a fixed table; a made-up value elsewhere).
    pub fn conditions(&self, city: &str) -> &'static str {
        match city.trim().to_lowercase().as_str() {
            "paris" => "rain, 17°C",
            "london" => "cloudy, 14°C",
            _ => "sunny, 21°C",
        }
    }

    /// Records `stars` for `city`.
    pub fn rate(&self, city: &str, stars: u8) {
        if let Ok(mut r) = self.ratings.lock() {
            r.insert(city.to_owned(), stars);
        }
    }

    /// The ratings so far, `city: n stars` per line.
    pub fn ratings(&self) -> String {
        let r = self.ratings.lock().map(|r| r.clone()).unwrap_or_default();
        r.iter()
            .map(|(city, stars)| format!("{city}: {stars} stars"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The team's rmcp server, as it was before the linear tools came.
#[derive(Clone)]
pub struct WeatherDesk {
    db: Db,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl WeatherDesk {
    fn new(db: Db) -> Self {
        Self {
            db,
            tool_router: Self::tool_router(),
        }
    }

    /// The ratings users gave so far (an rmcp-native tool).
    #[tool(description = "The ratings users gave so far.")]
    async fn ratings(&self) -> Result<CallToolResult, ErrorData> {
        let text = self.db.ratings();
        let text = if text.is_empty() {
            "no ratings yet".to_owned()
        } else {
            text
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for WeatherDesk {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new("weather-desk", "0.1.0"))
    }
}

// ------------------------------------------------------------------ the linear tools

/// Arguments naming a city.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CityArgs {
    /// The city, e.g. "Paris".
    pub city: String,
}

/// The name form.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Name {
    /// Your name.
    pub name: String,
}

/// The rating form.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Rating {
    /// From 1 to 5.
    pub stars: u8,
}

/// Today's weather in a city, rated by the model for you (asks your name, then the model).
#[mcp_tool(read_only)]
pub async fn forecast(
    cx: &mut ToolContext,
    args: CityArgs,
    db: State<Db>,
) -> Result<String, ToolError> {
    let Elicitation::Accept(who) = cx.elicit::<Name>("What is your name?").await? else {
        return Ok("No name, no forecast.".to_owned());
    };
    let conditions = db.conditions(&args.city).to_owned();
    let verdict = cx
        .sample(Sample::user(format!(
            "In one word, is {conditions} nice weather?"
        )))
        .await?
        .text()?;
    Ok(format!(
        "{}: {} in {}; the model says: {}",
        who.name, conditions, args.city, verdict
    ))
}

/// Rate a city from 1 to 5 stars (asks you for the rating; the native `ratings` tool lists them).
#[mcp_tool]
pub async fn rate_city(
    cx: &mut ToolContext,
    args: CityArgs,
    db: State<Db>,
) -> Result<String, ToolError> {
    // Sent to a client that asked for progress (a `progressToken`); nothing otherwise.
    cx.progress(1.0, Some(2.0), Some("asking for a rating"));
    let rating = cx
        .ask::<Rating>(format!("How many stars for {}?", args.city))
        .await?;
    if !(1..=5).contains(&rating.stars) {
        return Err(ToolError::invalid_input("rating", "stars must be 1 to 5"));
    }
    db.rate(&args.city, rating.stars);
    Ok(format!("{} rated {} stars", args.city, rating.stars))
}

/// Who a briefing is for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Audience {
    /// e.g. "pilots".
    pub audience: String,
}

/// A weather briefing for a city (asks who it is for).
#[mcp_prompt(complete(city = complete_city))]
pub async fn briefing(
    cx: &mut ToolContext,
    args: CityArgs,
    db: State<Db>,
) -> Result<Vec<PromptMessage>, ToolError> {
    let reader: Audience = cx.ask("Who is the briefing for?").await?;
    Ok(vec![PromptMessage::user(format!(
        "Brief {} on the weather in {}: {}.",
        reader.audience,
        args.city,
        db.conditions(&args.city)
    ))])
}

/// Suggestions for `city`.
pub async fn complete_city(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    let cities = ["Lagos", "Lima", "Lisbon", "London", "Paris"];
    Ok(cities
        .iter()
        .filter(|c| c.starts_with(&cx.value))
        .map(|c| c.to_string())
        .collect())
}

/// Today's conditions in a city.
#[mcp_resource(template = "weather://{city}/today", mime_type = "text/plain")]
pub async fn today(
    _cx: &mut ToolContext,
    vars: CityArgs,
    db: State<Db>,
) -> Result<String, ToolError> {
    Ok(db.conditions(&vars.city).to_owned())
}

// ------------------------------------------------------------------ serving

/// The team's server with the linear tools mounted, sharing its database.
pub fn handler() -> Result<mcp_tool_rmcp::Mounted<WeatherDesk>, Box<dyn std::error::Error>> {
    let desk = WeatherDesk::new(Db::default());
    // A fleet of replicas shares a key: `.sealer(..)`; the default is a random key per process.
    let ours = Server::builder(Implementation::new("weather-desk", "0.1.0"))
        .state(desk.db.clone())
        .tool(forecast::tool())
        .tool(rate_city::tool())
        .prompt(briefing::prompt())
        .resource(today::resource())
        .build()?;
    Ok(desk.with_linear_tools(ours))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = args
        .iter()
        .position(|a| a == "--http")
        .map(|i| args.get(i + 1).cloned().ok_or("--http needs an address"))
        .transpose()?;
    let bearer = args.iter().any(|a| a == "--bearer-demo-auth");
    let mut handler = handler()?;
    if bearer {
        handler = handler.authenticator(BearerDemoAuth::new());
    }
    match http {
        None => {
            let running = handler.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        Some(addr) => {
            let addr: SocketAddr = addr.parse()?;
            let service = StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}
