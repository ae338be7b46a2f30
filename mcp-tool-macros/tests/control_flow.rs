//! Macro-written tools driven through the server in-process, one per control-flow shape.
//! Each asserts the rounds' `inputRequests`, that kept values survive the round trip, and
//! that no statement before a suspension point runs again (side effects are counted).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use common::*;
use mcp_tool_runtime::{Sample, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct CityArgs {
    city: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Forecast {
    user: String,
    city: String,
    verdict: String,
    roots: usize,
}

static STRAIGHT: AtomicUsize = AtomicUsize::new(0);

async fn fetch(city: &str) -> Result<String, ToolError> {
    Ok(format!("sunny in {city}"))
}

/// Weather after a login.
#[mcp_tool(max_rounds = 3)]
async fn straight(cx: &mut ToolContext, args: CityArgs) -> Result<Forecast, ToolError> {
    STRAIGHT.fetch_add(1, SeqCst);
    let greeting = format!("hello {}", args.city);
    let github_login: Login = cx.ask("Your GitHub username?").await?;
    STRAIGHT.fetch_add(10, SeqCst);
    let raw = fetch(&args.city).await?;
    let verdict = cx
        .sample(Sample::user(format!("Rate: {raw}")).max_tokens(100))
        .key("verdict")
        .await?
        .text()?;
    STRAIGHT.fetch_add(100, SeqCst);
    let found = cx.roots().await?;
    Ok(Forecast { user: format!("{greeting}/{}", github_login.name), city: args.city, verdict, roots: found.len() })
}

#[tokio::test]
async fn straight_line() {
    let s = server(vec![tool(straight::tool())]);
    let h = host()
        .answer("github_login", accept(json!({"name": "octocat"})))
        .answer("verdict", said("great"))
        .answer("found", roots(&["file:///a", "file:///b"]));
    let (out, h) = call(s, h, "straight", json!({"city": "Oslo"})).await;
    assert_eq!(rounds(&out), vec![vec!["github_login"], vec!["verdict"], vec!["found"]]);
    assert_eq!(
        out.structured(),
        Some(&json!({"user": "hello Oslo/octocat", "city": "Oslo", "verdict": "great", "roots": 2}))
    );
    assert_eq!(STRAIGHT.load(SeqCst), 111, "each stage ran exactly once");
    assert_eq!(h.asked_keys(), ["github_login", "verdict", "found"]);
}
