//! The round limit: a tool declared with `max_rounds = 3` (like `summarize_repo`) may answer
//! `input_required` three times; a fourth round is refused by the server.

mod support;

use std::time::Duration;

use mcp_tool_runtime::{Sample, Server, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::*;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

/// Asks the model four times although it may ask only three.
#[mcp_tool(max_rounds = 3)]
async fn greedy(cx: &mut ToolContext, args: NoArgs) -> Result<String, ToolError> {
    let _ = args;
    let first = cx.sample(Sample::user("one")).await?.text()?;
    let second = cx.sample(Sample::user("two")).await?.text()?;
    let third = cx.sample(Sample::user("three")).await?.text()?;
    let fourth = cx.sample(Sample::user("four")).await?.text()?;
    Ok(format!("{first} {second} {third} {fourth}"))
}

#[tokio::test]
async fn a_fourth_round_is_refused() {
    let server = Server::builder(mcp_tool_examples::server_info())
        .sealer(sealer(Duration::from_secs(600), None))
        .tool(greedy::tool())
        .build()
        .unwrap();
    let h = spawn(server).await;
    let peer = Peer::new(h.url(), json!({"sampling": {}}));
    let mut state: Option<String> = None;
    let mut answers = None;
    for id in 1..=3 {
        let r = peer
            .call(id, "greedy", json!({}), answers.take(), state.as_deref())
            .await;
        assert_eq!(r.result_type(), "input_required", "round {id}: {}", r.raw);
        let key = r.result()["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        answers = Some(json!({ key: text_answer("ok") }));
        state = Some(state_of(&r));
    }
    let r = peer
        .call(4, "greedy", json!({}), answers, state.as_deref())
        .await;
    let error = &r.body.as_ref().unwrap()["error"];
    assert_eq!(error["code"], -32603, "{}", r.raw);
    // The detail ("exceeded its maximum of 3 input rounds") stays in the server's log.
    assert_eq!(error["message"], "Internal error", "{}", r.raw);
}
