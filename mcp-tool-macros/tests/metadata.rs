//! `ToolInfo` from the attribute, the doc comments and the signature: schemas, capabilities,
//! annotations, rounds, TTL, journal and the layout fingerprint; and `validate()`.

mod common;

use std::time::Duration;

use mcp_tool_runtime::protocol::CallToolResult;
use mcp_tool_runtime::{Sample, Tool, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Where.
    city: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Login {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Weather for a location,
/// after a login.
#[mcp_tool(
    title = "Weather",
    max_rounds = 5,
    ttl = "10m",
    read_only,
    open_world = false,
    journal
)]
async fn weather(cx: &mut ToolContext, args: Args) -> Result<Out, ToolError> {
    let login: Login = cx.ask("who?").await?;
    let s = cx.sample(Sample::user(args.city)).await?;
    let _ = (login, s);
    Ok(Out { ok: true })
}

#[mcp_tool(name = "plain-text", description = "Says hi.")]
async fn plain(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("hi".into())
}

#[mcp_tool(ttl = 90, destructive = true, idempotent)]
async fn raw(cx: &mut ToolContext, _args: Args) -> Result<CallToolResult, ToolError> {
    let files = cx.roots().await?;
    for _f in 0..2 {
        cx.checkpoint().await?;
    }
    Ok(CallToolResult::text(files.len().to_string()))
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Nested {
    inner: Login,
}

#[mcp_tool]
async fn not_flat(cx: &mut ToolContext) -> Result<String, ToolError> {
    let n: Nested = cx.ask("nested?").await?;
    Ok(n.inner.name)
}

#[test]
fn structured_tool_info() {
    let i = weather::tool().info();
    assert_eq!(i.name, "weather");
    assert_eq!(i.title.as_deref(), Some("Weather"));
    assert_eq!(
        i.description.as_deref(),
        Some("Weather for a location,\nafter a login.")
    );
    assert_eq!(i.input_schema["type"], "object");
    assert!(i.input_schema["properties"]["city"].is_object());
    assert!(i.output_schema.is_some());
    let a = i.annotations.expect("annotations");
    assert_eq!(a.read_only_hint, Some(true));
    assert_eq!(a.open_world_hint, Some(false));
    assert_eq!(a.destructive_hint, None);
    assert!(i.capabilities.elicitation && i.capabilities.sampling && !i.capabilities.roots);
    assert_eq!(i.max_rounds, 5);
    assert_eq!(i.state_ttl, Some(Duration::from_secs(600)));
    assert!(i.journal);
    assert!(
        i.layout.len() == 11
            && i.layout
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{}",
        i.layout
    );
    assert!(weather::tool().validate().is_ok());
}

#[test]
fn text_and_raw_tool_info() {
    let p = plain::tool().info();
    assert_eq!(p.name, "plain-text");
    assert_eq!(p.description.as_deref(), Some("Says hi."));
    assert_eq!(p.output_schema, None);
    assert_eq!(p.annotations, None);
    assert_eq!(p.max_rounds, 1, "no suspension point: one round");
    assert!(!p.journal);
    assert_eq!(p.input_schema["type"], "object");

    let r = raw::tool().info();
    assert_eq!(r.state_ttl, Some(Duration::from_secs(90)));
    assert_eq!(r.output_schema, None);
    assert!(r.capabilities.roots && !r.capabilities.elicitation && !r.capabilities.sampling);
    assert_eq!(
        r.max_rounds, 100,
        "a suspension point in a loop: the loop default"
    );
    let a = r.annotations.unwrap();
    assert_eq!(
        (a.destructive_hint, a.idempotent_hint),
        (Some(true), Some(true))
    );
    assert_ne!(r.layout, weather::tool().info().layout);
}

#[test]
fn validate_rejects_a_nested_elicitation_schema() {
    assert!(not_flat::tool().validate().is_err());
}

/// A task-supporting tool.
#[mcp_tool(task = "required", task_start = "detach")]
async fn long_job(cx: &mut ToolContext) -> Result<String, ToolError> {
    let who: Login = cx.ask("Who?").await?;
    cx.detach();
    cx.checkpoint().await?;
    Ok(who.name)
}

/// An optional task.
#[mcp_tool(task = "optional")]
async fn maybe_long(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("done".into())
}

#[test]
fn task_support_comes_from_the_attribute_and_shows_in_the_descriptor() {
    use mcp_tool_runtime::tasks::{TaskStart, TaskSupport};
    let info = long_job::tool().info();
    assert_eq!(info.task, TaskSupport::Required);
    assert_eq!(info.task_start, TaskStart::Detach);
    assert_eq!(
        info.descriptor().extra["execution"],
        serde_json::json!({"taskSupport": "required"})
    );
    let info = maybe_long::tool().info();
    assert_eq!(info.task, TaskSupport::Optional);
    assert_eq!(info.task_start, TaskStart::Call);
    // Without the option: never a task, nothing in the descriptor.
    let info = plain::tool().info();
    assert_eq!(info.task, TaskSupport::Forbidden);
    assert!(!info.descriptor().extra.contains_key("execution"));
}

/// Writes, with a space-separated scope list.
#[mcp_tool(scopes = "notes:read notes:write")]
async fn scoped_list(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("ok".into())
}

/// The array form.
#[mcp_tool(scopes = ["notes:read", "https://api.example/notes.write"])]
async fn scoped_array(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("ok".into())
}

#[mcp_tool_runtime::mcp_prompt(scopes = "prompts:read")]
async fn scoped_prompt(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("hi".into())
}

#[mcp_tool_runtime::mcp_resource(uri = "test://scoped", scopes = ["vault:read"])]
async fn scoped_resource(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("gold".into())
}

#[test]
fn scopes_reach_the_info_and_the_descriptor() {
    use mcp_tool_runtime::manual::SCOPES_META_KEY;
    use mcp_tool_runtime::{Prompt, Resource};
    let list = scoped_list::tool().info();
    assert_eq!(list.scopes, ["notes:read", "notes:write"]);
    assert_eq!(
        list.descriptor().meta.unwrap()[SCOPES_META_KEY],
        serde_json::json!(["notes:read", "notes:write"])
    );
    assert_eq!(
        scoped_array::tool().info().scopes,
        ["notes:read", "https://api.example/notes.write"]
    );
    assert_eq!(scoped_prompt::prompt().info().scopes, ["prompts:read"]);
    assert_eq!(scoped_resource::resource().info().scopes, ["vault:read"]);
    // no `scopes`: none, and no `_meta`
    let plain = plain::tool().info();
    assert!(plain.scopes.is_empty());
    assert!(plain.descriptor().meta.is_none());
}
