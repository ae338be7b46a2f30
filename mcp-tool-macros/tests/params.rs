//! Parameters by type, not by name: every parameter after the arguments goes through
//! `FromContext`, so an aliased `State`, a fully qualified one and a type of one's own work,
//! through the server (a suspension in between, so the parameter is taken again in the
//! second round) and at `build()` (the state types they need are checked).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use mcp_tool_runtime::manual::StateKey;
use mcp_tool_runtime::protocol::Implementation;
use mcp_tool_runtime::{
    FromContext, RegistrationError, Server, State as AppState, ToolContext, ToolError, mcp_tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Serialize, Deserialize, JsonSchema)]
struct YesNo {
    /// Yes?
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// A pool given to the builder as state.
#[derive(Default)]
struct Pool {
    taken: AtomicUsize,
}

/// A handle of one's own: a connection taken from the [`Pool`] in every round.
struct Conn(usize);

impl FromContext for Conn {
    fn from_context(cx: &ToolContext) -> Result<Self, ToolError> {
        let pool: AppState<Pool> = cx.state()?;
        Ok(Conn(pool.taken.fetch_add(1, Ordering::SeqCst) + 1))
    }
    fn keys() -> Vec<StateKey> {
        vec![StateKey::of::<Pool>()]
    }
}

/// A parameter that needs no state at all.
struct Clock;

impl FromContext for Clock {
    fn from_context(_cx: &ToolContext) -> Result<Self, ToolError> {
        Ok(Clock)
    }
    fn keys() -> Vec<StateKey> {
        Vec::new()
    }
}

/// An aliased `State` after the arguments.
#[mcp_tool]
async fn aliased(
    cx: &mut ToolContext,
    args: Name,
    pool: AppState<Pool>,
) -> Result<String, ToolError> {
    let sure: YesNo = cx.ask(format!("hello {}?", args.name)).key("sure").await?;
    Ok(format!(
        "{} {} {}",
        args.name,
        sure.ok,
        pool.taken.load(Ordering::SeqCst)
    ))
}

/// A fully qualified `State`, first (no arguments).
#[mcp_tool]
async fn qualified(
    cx: &mut ToolContext,
    pool: mcp_tool_runtime::State<Pool>,
) -> Result<String, ToolError> {
    let sure: YesNo = cx.ask("sure?").key("sure").await?;
    Ok(format!("{} {}", sure.ok, pool.taken.load(Ordering::SeqCst)))
}

/// A parameter type of one's own, and one that needs no state.
#[mcp_tool]
async fn custom(
    cx: &mut ToolContext,
    args: Name,
    conn: Conn,
    _clock: Clock,
) -> Result<String, ToolError> {
    let sure: YesNo = cx.ask("sure?").key("sure").await?;
    Ok(format!("{} {} conn#{}", args.name, sure.ok, conn.0))
}

/// A tool that needs no state at all through its own parameter type.
#[mcp_tool]
async fn stateless(_cx: &mut ToolContext, args: Name, _clock: Clock) -> Result<String, ToolError> {
    Ok(args.name)
}

fn with_pool() -> (Server, std::sync::Arc<Pool>) {
    let pool = std::sync::Arc::new(Pool::default());
    let s = Server::builder(Implementation::new("params", "0"))
        .state(pool.clone())
        .tool(aliased::tool())
        .tool(qualified::tool())
        .tool(custom::tool())
        .build()
        .expect("server builds");
    (s, pool)
}

#[tokio::test]
async fn an_aliased_state_is_taken_from_the_context() {
    let (s, pool) = with_pool();
    pool.taken.store(7, Ordering::SeqCst);
    let host = host().answer("sure", accept(json!({"ok": true})));
    let (out, _) = call(s, host, "aliased", json!({"name": "ada"})).await;
    assert_eq!(out.text(), "ada true 7");
}

#[tokio::test]
async fn a_fully_qualified_state_is_taken_from_the_context() {
    let (s, pool) = with_pool();
    pool.taken.store(3, Ordering::SeqCst);
    let host = host().answer("sure", accept(json!({"ok": false})));
    let (out, _) = call(s, host, "qualified", json!({})).await;
    assert_eq!(out.text(), "false 3");
}

#[tokio::test]
async fn a_parameter_type_of_ones_own_is_taken_from_the_context() {
    let (s, pool) = with_pool();
    let host = host().answer("sure", accept(json!({"ok": true})));
    let (out, _) = call(s, host, "custom", json!({"name": "bo"})).await;
    // taken from the context in the round that uses it (never stored in the state)
    let rounds = pool.taken.load(Ordering::SeqCst);
    assert!(rounds >= 1, "taken {rounds} times");
    assert_eq!(out.text(), format!("bo true conn#{rounds}"));
}

#[test]
fn the_state_a_custom_parameter_needs_is_checked_at_build() {
    let err = Server::builder(Implementation::new("params", "0"))
        .tool(custom::tool())
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, RegistrationError::MissingState { tool, type_name }
            if tool == "custom" && type_name.ends_with("Pool")),
        "{err}"
    );
    Server::builder(Implementation::new("params", "0"))
        .tool(stateless::tool())
        .build()
        .expect("a parameter that needs no state needs nothing from the builder");
}
