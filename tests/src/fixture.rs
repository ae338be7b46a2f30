//! The fixture tools of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, requirement set 2026-07-28), with the names and
//! exact shapes the suite's scenarios expect (docs/CONFORMANCE.md says how to run it).
//!
//! Every tool is written with `#[mcp_tool]`: the content tools return a raw
//! [`CallToolResult`], the MRTR tools are linear functions whose `ask` / `sample` /
//! `roots` / `round` calls become `input_required` rounds. [`server`] registers them all.
//!
//! The tools of the suite's 2025-11-25 scenarios (`test_sampling`, `test_elicitation`, the
//! SEP-1034 and SEP-1330 forms, `test_tool_with_logging`) run in a legacy session in direct
//! mode; on a 2026-07-28 request they are MRTR tools like the others.
//!
//! `test_tool_with_progress` reports progress with `cx.progress(..)`, an ordinary call
//! (not a suspension point); the HTTP transport carries it on an SSE response.
//!
//! The fixture prompts (`test_simple_prompt`, `test_prompt_with_arguments` with a completer on
//! `arg1`, `test_prompt_with_embedded_resource`, `test_prompt_with_image`,
//! `test_input_required_result_prompt`, which asks before it answers) are written with
//! `#[mcp_prompt]`, and the resources (`test://static-text`, `test://static-binary`, the template
//! `test://template/{id}/data`) with `#[mcp_resource]`.

use mcp_tool_runtime::protocol::{
    CallToolResult, ContentBlock, EmbeddedResource, Implementation, LogLevel, ResourceContents,
};
use std::sync::Arc;

use mcp_tool_runtime::protocol::JsonObject;
use mcp_tool_runtime::protocol::PromptMessage;
use mcp_tool_runtime::resource::skills::DynamicSkill;
use mcp_tool_runtime::seal::Sealer;
use mcp_tool_runtime::server::{Server, WeakRegistry};
use mcp_tool_runtime::{
    CompleteContext, Elicitation, Prompt, Resource, Sample, ToolContext, ToolError,
    manual::BoxFuture,
    mcp_prompt, mcp_resource, mcp_tool,
    requests::{Ask, Roots},
};
use mcp_tool_runtime::{RegistrationError, Tool, ToolInfo, manual::Step};
use mcp_tool_skills::SkillsExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A 1x1 red PNG, base64.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// A WAV file of eight silent 8-bit mono samples at 8 kHz, base64.
pub const SILENT_WAV: &str =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The text of `test_simple_text`.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The text of `test_error_handling`'s error result.
pub const ERROR_TEXT: &str = "This intentionally returns an error for testing";

/// The names of every fixture tool [`server`] registers.
pub const TOOL_NAMES: &[&str] = &[
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_custom_header",
    "json_schema_2020_12_tool",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_tool_with_logging",
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_update_watched_resource",
    "test_trigger_resource_update",
];

fn embedded(uri: &str, mime: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::Text {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            text: text.to_owned(),
            meta: None,
        },
        annotations: None,
        meta: None,
    })
}

// ---------------------------------------------------------------------------- content

/// Returns a simple text response.
#[mcp_tool(read_only)]
pub async fn test_simple_text(cx: &mut ToolContext) -> Result<String, ToolError> {
    let _ = cx;
    Ok(SIMPLE_TEXT.to_owned())
}

/// Returns an image (a 1x1 red PNG).
#[mcp_tool(read_only)]
pub async fn test_image_content(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {
    let _ = cx;
    Ok(CallToolResult::success(vec![ContentBlock::image(
        RED_PIXEL_PNG,
        "image/png",
    )]))
}

/// Returns a short audio clip (WAV).
#[mcp_tool(read_only)]
pub async fn test_audio_content(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {
    let _ = cx;
    Ok(CallToolResult::success(vec![ContentBlock::audio(
        SILENT_WAV,
        "audio/wav",
    )]))
}

/// Returns an embedded text resource.
#[mcp_tool(read_only)]
pub async fn test_embedded_resource(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {
    let _ = cx;
    Ok(CallToolResult::success(vec![embedded(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )]))
}

/// Returns text, an image and an embedded resource in one result.
#[mcp_tool(read_only)]
pub async fn test_multiple_content_types(
    cx: &mut ToolContext,
) -> Result<CallToolResult, ToolError> {
    let _ = cx;
    Ok(CallToolResult::success(vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(RED_PIXEL_PNG, "image/png"),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]))
}

/// Always returns a tool error result (`isError: true`).
#[mcp_tool(read_only)]
pub async fn test_error_handling(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {
    let _ = cx;
    Ok(CallToolResult::error(ERROR_TEXT))
}

// ---------------------------------------------------------------------------- server-stateless

/// Needs the client's `sampling` capability (the suite calls it without, expecting -32021).
#[mcp_tool(read_only)]
pub async fn test_missing_capability(cx: &mut ToolContext) -> Result<String, ToolError> {
    let reply = cx
        .sample(Sample::user("Say hello.").max_tokens(20))
        .await?
        .text()?;
    Ok(format!("The model said: {reply}"))
}

/// Asks the user a question through an `input_required` round (never a server-to-client
/// request on the response stream).
#[mcp_tool(read_only)]
pub async fn test_streaming_elicitation(cx: &mut ToolContext) -> Result<String, ToolError> {
    let user_name: Name = cx.ask("What is your name?").await?;
    Ok(format!("Hello, {}!", user_name.name))
}

/// Returns a text result and emits no log notifications.
#[mcp_tool(read_only)]
pub async fn test_logging_tool(cx: &mut ToolContext) -> Result<String, ToolError> {
    let _ = cx;
    Ok("Logging tool completed without log notifications.".to_owned())
}

/// The text of `test_tool_with_progress`'s result.
pub const PROGRESS_TEXT: &str = "Progress test completed.";

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart, then returns a text. The
/// notifications go out only when the request's `_meta` has a `progressToken`.
#[mcp_tool(read_only)]
pub async fn test_tool_with_progress(cx: &mut ToolContext) -> Result<String, ToolError> {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        cx.progress(step, Some(100.0), Some("working"));
    }
    Ok(PROGRESS_TEXT.to_owned())
}

// ---------------------------------------------------------------------------- MRTR

/// The answer to "What is your name?".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Name {
    /// The name.
    pub name: String,
}

/// The answer to "Please confirm".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Whether the user confirms.
    pub ok: bool,
}

/// The answer to "What is your favorite color?".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Color {
    /// The color.
    pub color: String,
}

/// Asks the user's name (key `user_name`), then greets them. Takes answers sent on a first
/// call (`early_answers`): the suite's `ignore-extra-params` scenario sends the answer with
/// the first request, next to keys it must ignore.
#[mcp_tool(read_only, early_answers)]
pub async fn test_input_required_result_elicitation(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let user_name: Name = cx.ask("What is your name?").await?;
    Ok(format!("Hello, {}!", user_name.name))
}

/// Asks the client's model the capital of France (key `capital_question`).
#[mcp_tool(read_only)]
pub async fn test_input_required_result_sampling(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let capital_question = cx
        .sample(Sample::user("What is the capital of France?").max_tokens(100))
        .await?;
    Ok(format!("The model answered: {}", capital_question.text()?))
}

/// Lists the client's roots (key `client_roots`).
#[mcp_tool(read_only)]
pub async fn test_input_required_result_list_roots(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let client_roots = cx.roots().await?;
    let uris: Vec<&str> = client_roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!(
        "The client has {} root(s): {}",
        uris.len(),
        uris.join(", ")
    ))
}

/// Asks for a confirmation (key `confirm`); the sealed `requestState` carries the call
/// across the round, and the result says `state-ok`.
#[mcp_tool(read_only)]
pub async fn test_input_required_result_request_state(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let confirm: Confirm = cx.ask("Please confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirm.ok))
}

/// Asks for a name, a model greeting and the roots in one round.
#[mcp_tool(read_only)]
pub async fn test_input_required_result_multiple_inputs(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let (user_name, greeting, client_roots) = cx
        .round((
            Ask::<Name>::new("What is your name?"),
            Sample::user("Generate a greeting").max_tokens(50),
            Roots::new(),
        ))
        .await?;
    Ok(format!(
        "{} Name: {}; roots: {}",
        greeting.text()?,
        user_name.name,
        client_roots.len()
    ))
}

/// Two elicitation rounds (`step1`, then `step2`); the name survives into the last round.
#[mcp_tool(read_only)]
pub async fn test_input_required_result_multi_round(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let step1: Name = cx.ask("Step 1: What is your name?").await?;
    let step2: Color = cx.ask("Step 2: What is your favorite color?").await?;
    Ok(format!(
        "{}'s favorite color is {}.",
        step1.name, step2.color
    ))
}

/// One elicitation round; a retry with a modified `requestState` is refused (-32602).
#[mcp_tool(read_only)]
pub async fn test_input_required_result_tampered_state(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let confirm: Confirm = cx.ask("Please confirm").await?;
    Ok(format!("confirmed={}", confirm.ok))
}

/// Needs only `sampling`: never asks for elicitation (the suite declares sampling only).
#[mcp_tool(read_only)]
pub async fn test_input_required_result_capabilities(
    cx: &mut ToolContext,
) -> Result<String, ToolError> {
    let summary = cx
        .sample(Sample::user("Summarize the capabilities check.").max_tokens(50))
        .await?;
    Ok(format!("The model said: {}", summary.text()?))
}

// ---------------------------------------------------------------------------- 2025-11-25

// The tools of the suite's 2025-11-25 scenarios (a legacy session: `initialize`, then the
// tool's requests sent to the client while the call waits). They are ordinary linear tools:
// in a legacy session they run in direct mode, on a 2026-07-28 request as MRTR rounds.

/// Arguments of `test_sampling`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PromptArgs {
    /// The prompt to send to the client's model.
    pub prompt: String,
}

/// Asks the client's model `prompt` (at most 100 tokens) and returns its answer.
#[mcp_tool(read_only)]
pub async fn test_sampling(cx: &mut ToolContext, args: PromptArgs) -> Result<String, ToolError> {
    let reply = cx
        .sample(Sample::user(args.prompt.clone()).max_tokens(100))
        .await?;
    Ok(format!("LLM response: {}", reply.text()?))
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct MessageArgs {
    /// The message shown to the user.
    pub message: String,
}

/// The form of `test_elicitation`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UserInfo {
    /// User's response
    pub username: String,
    /// User's email address
    pub email: String,
}

/// How an elicitation ended, as the suite's texts spell it.
fn outcome<T: Serialize>(e: &Elicitation<T>) -> (&'static str, Value) {
    match e {
        Elicitation::Accept(v) => ("accept", serde_json::to_value(v).unwrap_or(Value::Null)),
        Elicitation::Decline => ("decline", Value::Null),
        Elicitation::Cancel => ("cancel", Value::Null),
    }
}

/// Shows the user `message` with a form (username, email) and returns what they did.
#[mcp_tool(read_only)]
pub async fn test_elicitation(
    cx: &mut ToolContext,
    args: MessageArgs,
) -> Result<String, ToolError> {
    let info = cx.elicit::<UserInfo>(args.message.clone()).await?;
    let (action, content) = outcome(&info);
    Ok(format!("User response: action={action}, content={content}"))
}

/// The form of `test_elicitation_sep1034_defaults`: a default for every primitive type.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Defaults {
    /// Name
    #[schemars(extend("default" = "John Doe"))]
    pub name: String,
    /// Age
    #[schemars(extend("default" = 30))]
    pub age: i64,
    /// Score
    #[schemars(extend("default" = 95.5))]
    pub score: f64,
    /// Status
    #[schemars(extend("enum" = ["active", "inactive", "pending"], "default" = "active"))]
    pub status: String,
    /// Verified
    #[schemars(extend("default" = true))]
    pub verified: bool,
}

/// Asks for a form whose fields all have defaults (SEP-1034).
#[mcp_tool(read_only)]
pub async fn test_elicitation_sep1034_defaults(cx: &mut ToolContext) -> Result<String, ToolError> {
    let form = cx.elicit::<Defaults>("Please review your details").await?;
    let (action, content) = outcome(&form);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// The form of `test_elicitation_sep1330_enums`: the five enum shapes of SEP-1330.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Enums {
    /// Untitled single-select
    #[schemars(extend("enum" = ["option1", "option2", "option3"]))]
    pub untitled_single: String,
    /// Titled single-select
    #[schemars(extend("oneOf" = [
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}
    ]))]
    pub titled_single: String,
    /// Legacy titled single-select (`enumNames`, deprecated)
    #[schemars(extend(
        "enum" = ["opt1", "opt2", "opt3"],
        "enumNames" = ["Option One", "Option Two", "Option Three"]
    ))]
    pub legacy_enum: String,
    /// Untitled multi-select
    #[schemars(extend("items" = {"type": "string", "enum": ["option1", "option2", "option3"]}))]
    pub untitled_multi: Vec<String>,
    /// Titled multi-select
    #[schemars(extend("items" = {"anyOf": [
        {"const": "value1", "title": "First Choice"},
        {"const": "value2", "title": "Second Choice"},
        {"const": "value3", "title": "Third Choice"}
    ]}))]
    pub titled_multi: Vec<String>,
}

/// Asks for a form with every enum shape (SEP-1330).
#[mcp_tool(read_only)]
pub async fn test_elicitation_sep1330_enums(cx: &mut ToolContext) -> Result<String, ToolError> {
    let form = cx.elicit::<Enums>("Please choose your options").await?;
    let (action, content) = outcome(&form);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// The log messages of `test_tool_with_logging`, in order.
pub const LOG_MESSAGES: [&str; 3] = [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
];

/// Logs three messages at `info`, about 50 ms apart, to a client that asked for them
/// (`logging/setLevel` in a session, `_meta["io.modelcontextprotocol/logLevel"]` on a
/// 2026-07-28 request).
#[mcp_tool(read_only)]
pub async fn test_tool_with_logging(cx: &mut ToolContext) -> Result<String, ToolError> {
    for (i, message) in LOG_MESSAGES.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        cx.log(LogLevel::Info, message);
    }
    Ok("Logging test completed.".to_owned())
}

// ---------------------------------------------------------------------------- schemas, headers

/// Arguments of `test_custom_header`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RegionArgs {
    /// The region; clients mirror it in the `Mcp-Param-Region` header (SEP-2243).
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
}

/// Echoes `region`, an argument annotated with `x-mcp-header` (the HTTP transport checks
/// the `Mcp-Param-Region` header against it before the tool runs).
#[mcp_tool(read_only)]
pub async fn test_custom_header(
    cx: &mut ToolContext,
    args: RegionArgs,
) -> Result<String, ToolError> {
    let _ = cx;
    Ok(format!("region: {}", args.region))
}

/// Arguments of `json_schema_2020_12_tool` (its advertised schema is
/// [`json_schema_2020_12_input`]).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ContactArgs {
    /// A name.
    pub name: Option<String>,
    /// `phone` or `email`.
    #[serde(rename = "contactMethod")]
    pub contact_method: Option<String>,
    /// A phone number.
    pub phone: Option<String>,
    /// An email address.
    pub email: Option<String>,
    /// An address (`street`, `city`).
    pub address: Option<Value>,
}

/// Accepts a contact described by a JSON Schema 2020-12 input schema.
#[mcp_tool(read_only)]
pub async fn json_schema_2020_12_tool(
    cx: &mut ToolContext,
    args: ContactArgs,
) -> Result<String, ToolError> {
    let _ = cx;
    Ok(format!(
        "contact {} via {}",
        args.name.as_deref().unwrap_or("(unnamed)"),
        args.contact_method.as_deref().unwrap_or("(unspecified)")
    ))
}

/// The `inputSchema` the `json-schema-2020-12` scenario expects, keyword for keyword:
/// `$schema`, `$defs` with `$anchor`, `$ref`, `allOf`/`anyOf`, `if`/`then`/`else` and
/// `additionalProperties: false` (schemars cannot derive all of these, and the runtime
/// drops `$schema` from derived schemas).
pub fn json_schema_2020_12_input() -> JsonObject {
    let v = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// A tool advertised with another `inputSchema`; everything else (rounds, validation,
/// layout) is the wrapped `#[mcp_tool]` tool's.
struct WithInputSchema<T> {
    tool: T,
    schema: JsonObject,
}

impl<T: Tool> Tool for WithInputSchema<T> {
    fn info(&self) -> ToolInfo {
        let mut info = self.tool.info();
        info.input_schema = self.schema.clone();
        info
    }

    fn validate(&self) -> Result<(), RegistrationError> {
        self.tool.validate()
    }

    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        self.tool.step(cx, args, state)
    }
}

// ---------------------------------------------------------------- Tasks (SEP-2663)
// The fixtures the suite's `tasks-*` scenarios name. A client that declares
// `io.modelcontextprotocol/tasks` on its request gets a task handle for the
// task-supporting ones; the code is the same linear `async fn` as any other tool.

/// Arguments of `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

/// A plain (never a task) tool: `Hello, {name}!`.
#[mcp_tool(read_only)]
pub async fn greet(_cx: &mut ToolContext, args: GreetArgs) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", args.name))
}

/// Arguments of `slow_compute`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SlowArgs {
    /// How long to work, in seconds (at most 600).
    #[serde(default)]
    pub seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    pub label: Option<String>,
}

/// Works for `seconds` seconds, then answers. A task when the client declares the tasks
/// extension; `tasks/cancel` stops the sleep (the task settles to `cancelled`).
#[mcp_tool(read_only, task = "optional")]
pub async fn slow_compute(_cx: &mut ToolContext, args: SlowArgs) -> Result<String, ToolError> {
    let secs = if args.seconds.is_finite() {
        args.seconds.clamp(0.0, 600.0)
    } else {
        0.0
    };
    tokio::time::sleep(std::time::Duration::from_secs_f64(secs)).await;
    Ok(format!(
        "Computed {} after {secs}s",
        args.label.as_deref().unwrap_or("result")
    ))
}

/// Always a task; after about a second it fails as a tool (`isError: true`, so the task is
/// `completed`, not `failed`).
#[mcp_tool(task = "required")]
pub async fn failing_job(_cx: &mut ToolContext) -> Result<String, ToolError> {
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    Err(ToolError::Failed(
        "The job failed: the input could not be processed".into(),
    ))
}

/// A task whose code fails at the protocol level (an internal error, -32603): the task is
/// `failed` with the inlined error.
#[mcp_tool(task = "optional")]
pub async fn protocol_error_job(_cx: &mut ToolContext) -> Result<String, ToolError> {
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Err(ToolError::Internal(
        "protocol_error_job fails on purpose".into(),
    ))
}

/// Arguments of `confirm_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    /// The file to delete.
    pub filename: String,
}

/// The answer `confirm_delete` asks for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeleteConfirmation {
    /// Delete it?
    pub confirm: bool,
}

/// Asks (one elicitation) before "deleting" a file; as a task it waits in `input_required`.
#[mcp_tool(destructive, task = "optional")]
pub async fn confirm_delete(cx: &mut ToolContext, args: DeleteArgs) -> Result<String, ToolError> {
    let confirmation: DeleteConfirmation = cx.ask(format!("Delete {}?", args.filename)).await?;
    Ok(if confirmation.confirm {
        format!("Deleted {}", args.filename)
    } else {
        format!("Kept {}", args.filename)
    })
}

/// Each answer of `multi_input`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NamedConfirmation {
    /// A name.
    pub name: String,
    /// Whether it is confirmed.
    #[serde(default)]
    pub confirm: bool,
}

/// Two elicitations in one round, so a task shows two `inputRequests` at once.
#[mcp_tool(task = "optional")]
pub async fn multi_input(cx: &mut ToolContext) -> Result<String, ToolError> {
    let (first, second) = cx
        .round((
            Ask::<NamedConfirmation>::new("First name?"),
            Ask::<NamedConfirmation>::new("Second name?"),
        ))
        .await?;
    Ok(format!("Got {} and {}", first.name, second.name))
}

/// MRTR, then a task: asks for `user_name` with an ordinary `input_required` round, then
/// detaches; the client gets a `CreateTaskResult` and the greeting is the task's result.
#[mcp_tool(task = "required", task_start = "detach")]
pub async fn test_tool_with_task(cx: &mut ToolContext) -> Result<String, ToolError> {
    let user_name: Name = cx.ask("What is your name?").await?;
    cx.detach();
    cx.checkpoint().await?;
    Ok(format!("Hello, {}! (finished as a task)", user_name.name))
}

/// The argument of `test_trigger_resource_update`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdatedUri {
    /// The resource that changed.
    pub uri: String,
}

/// Tells the listeners of `uri` that it changed (`cx.resource_updated`).
#[mcp_tool]
pub async fn test_trigger_resource_update(
    cx: &mut ToolContext,
    args: UpdatedUri,
) -> Result<String, ToolError> {
    cx.resource_updated(args.uri.clone());
    Ok(format!("updated {}", args.uri))
}

/// The tool [`struct@test_trigger_tool_change`] adds and removes.
#[mcp_tool(description = "A tool that comes and goes (test_trigger_tool_change toggles it)")]
pub async fn test_dynamic_tool(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("I was added at run time.".into())
}

/// Adds [`struct@test_dynamic_tool`] when it is not served, removes it when it is: a real change
/// of the server's registry, so every listener hears `notifications/tools/list_changed`.
#[mcp_tool(description = "Adds or removes the tool test_dynamic_tool (a tools list change)")]
pub async fn test_trigger_tool_change(
    _cx: &mut ToolContext,
    registry: mcp_tool_runtime::State<WeakRegistry>,
) -> Result<String, ToolError> {
    let registry = registry
        .upgrade()
        .ok_or_else(|| ToolError::internal("the server is gone"))?;
    if registry.remove_tool("test_dynamic_tool") {
        return Ok("removed test_dynamic_tool".into());
    }
    registry
        .add_tool(test_dynamic_tool::tool())
        .map_err(ToolError::internal)?;
    Ok("added test_dynamic_tool".into())
}

/// The prompt [`struct@test_trigger_prompt_change`] adds and removes.
#[mcp_prompt(description = "A prompt that comes and goes (test_trigger_prompt_change toggles it)")]
pub async fn test_dynamic_prompt(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("I was added at run time.".into())
}

/// Adds [`struct@test_dynamic_prompt`] when it is not served, removes it when it is
/// (`notifications/prompts/list_changed`).
#[mcp_tool(description = "Adds or removes the prompt test_dynamic_prompt (a prompts list change)")]
pub async fn test_trigger_prompt_change(
    _cx: &mut ToolContext,
    registry: mcp_tool_runtime::State<WeakRegistry>,
) -> Result<String, ToolError> {
    let registry = registry
        .upgrade()
        .ok_or_else(|| ToolError::internal("the server is gone"))?;
    if registry.remove_prompt("test_dynamic_prompt") {
        return Ok("removed test_dynamic_prompt".into());
    }
    registry
        .add_prompt(test_dynamic_prompt::prompt())
        .map_err(ToolError::internal)?;
    Ok("added test_dynamic_prompt".into())
}

/// Raises `notifications/resources/updated` for `test://watched-resource` (a legacy session
/// subscribed to it hears it).
#[mcp_tool(description = "Marks test://watched-resource as updated")]
pub async fn test_update_watched_resource(cx: &mut ToolContext) -> Result<String, ToolError> {
    cx.resource_updated(WATCHED_RESOURCE);
    Ok("updated".into())
}

/// Every fixture tool, ready for `ServerBuilder::tool`.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(test_simple_text::tool()),
        Arc::new(test_image_content::tool()),
        Arc::new(test_audio_content::tool()),
        Arc::new(test_embedded_resource::tool()),
        Arc::new(test_multiple_content_types::tool()),
        Arc::new(test_error_handling::tool()),
        Arc::new(test_tool_with_progress::tool()),
        Arc::new(test_missing_capability::tool()),
        Arc::new(test_streaming_elicitation::tool()),
        Arc::new(test_logging_tool::tool()),
        Arc::new(test_input_required_result_elicitation::tool()),
        Arc::new(test_input_required_result_sampling::tool()),
        Arc::new(test_input_required_result_list_roots::tool()),
        Arc::new(test_input_required_result_request_state::tool()),
        Arc::new(test_input_required_result_multiple_inputs::tool()),
        Arc::new(test_input_required_result_multi_round::tool()),
        Arc::new(test_input_required_result_tampered_state::tool()),
        Arc::new(test_input_required_result_capabilities::tool()),
        Arc::new(test_custom_header::tool()),
        Arc::new(WithInputSchema {
            tool: json_schema_2020_12_tool::tool(),
            schema: json_schema_2020_12_input(),
        }),
        Arc::new(test_sampling::tool()),
        Arc::new(test_elicitation::tool()),
        Arc::new(test_elicitation_sep1034_defaults::tool()),
        Arc::new(test_elicitation_sep1330_enums::tool()),
        Arc::new(test_tool_with_logging::tool()),
        Arc::new(greet::tool()),
        Arc::new(slow_compute::tool()),
        Arc::new(failing_job::tool()),
        Arc::new(protocol_error_job::tool()),
        Arc::new(confirm_delete::tool()),
        Arc::new(multi_input::tool()),
        Arc::new(test_tool_with_task::tool()),
        Arc::new(test_trigger_resource_update::tool()),
    ]
}

/// The fixture tools that change the server they run on (`State<WeakRegistry>`): only for a
/// server built with `dynamic(true)`, as [`builder`]'s is.
pub fn dynamic_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(test_trigger_tool_change::tool()),
        Arc::new(test_trigger_prompt_change::tool()),
        Arc::new(test_update_watched_resource::tool()),
    ]
}

/// A prompt without arguments.
#[mcp_prompt(description = "A simple prompt without arguments")]
pub async fn test_simple_prompt(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("This is a simple prompt for testing.".into())
}

/// The arguments of `test_prompt_with_arguments`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TwoArgs {
    /// First test argument
    pub arg1: String,
    /// Second test argument
    pub arg2: String,
}

/// A prompt with two required arguments (`arg1` has a completer).
#[mcp_prompt(description = "A prompt with two required arguments", complete(arg1 = complete_arg1))]
pub async fn test_prompt_with_arguments(
    _cx: &mut ToolContext,
    args: TwoArgs,
) -> Result<String, ToolError> {
    Ok(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    ))
}

/// Suggestions for `arg1`: the words that start with what was typed.
pub async fn complete_arg1(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    let words = ["paris", "park", "party", "test", "testing", "tested"];
    Ok(words
        .iter()
        .filter(|w| w.starts_with(cx.value.as_str()))
        .map(|w| (*w).to_owned())
        .collect())
}

/// The argument of `test_prompt_with_embedded_resource`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResourceUri {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    #[schemars(rename = "resourceUri")]
    pub resource_uri: String,
}

/// A prompt that embeds a resource.
#[mcp_prompt(description = "A prompt with an embedded resource")]
pub async fn test_prompt_with_embedded_resource(
    _cx: &mut ToolContext,
    args: ResourceUri,
) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![
        PromptMessage::user(ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::text(
                args.resource_uri,
                Some("text/plain".into()),
                "Embedded resource content for testing.",
            ),
            annotations: None,
            meta: None,
        })),
        PromptMessage::user("Please process the embedded resource above."),
    ])
}

/// A prompt with an image.
#[mcp_prompt(description = "A prompt with an image")]
pub async fn test_prompt_with_image(
    _cx: &mut ToolContext,
) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![
        PromptMessage::user(ContentBlock::image(RED_PIXEL_PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ])
}

/// The answer to "What context should the prompt use?".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Context {
    /// The context.
    pub context: String,
}

/// A prompt that asks (key `user_context`) before it answers.
#[mcp_prompt(description = "A prompt that needs input before it can be produced")]
pub async fn test_input_required_result_prompt(cx: &mut ToolContext) -> Result<String, ToolError> {
    let user_context: Context = cx.ask("What context should the prompt use?").await?;
    Ok(format!("Use this context: {}", user_context.context))
}

/// A static text resource.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    mime_type = "text/plain"
)]
pub async fn static_text(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("This is the content of the static text resource.".into())
}

/// A static binary resource (a 1x1 red PNG).
#[mcp_resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
pub async fn static_binary(_cx: &mut ToolContext) -> Result<Vec<u8>, ToolError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(RED_PIXEL_PNG)
        .map_err(ToolError::internal)
}

/// The variable of `test://template/{id}/data`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdVar {
    /// The id.
    pub id: String,
}

/// A resource template that substitutes its `id`.
#[mcp_resource(
    template = "test://template/{id}/data",
    name = "template-data",
    mime_type = "application/json"
)]
pub async fn template_data(_cx: &mut ToolContext, vars: IdVar) -> Result<String, ToolError> {
    Ok(
        json!({"id": vars.id, "templateTest": true, "data": format!("Data for ID: {}", vars.id)})
            .to_string(),
    )
}

/// The URI of the resource the subscription scenarios watch.
pub const WATCHED_RESOURCE: &str = "test://watched-resource";

/// The resource the subscription scenarios subscribe to (`resources/subscribe`).
#[mcp_resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    mime_type = "text/plain"
)]
pub async fn watched_resource(_cx: &mut ToolContext) -> Result<String, ToolError> {
    Ok("A resource to subscribe to.".into())
}

/// Every fixture prompt.
pub fn prompts() -> Vec<Arc<dyn Prompt>> {
    vec![
        Arc::new(test_simple_prompt::prompt()),
        Arc::new(test_prompt_with_arguments::prompt()),
        Arc::new(test_prompt_with_embedded_resource::prompt()),
        Arc::new(test_prompt_with_image::prompt()),
        Arc::new(test_input_required_result_prompt::prompt()),
    ]
}

/// The skills directory the fixture serves (the Skills extension, SEP-2640): two skills,
/// one under an organizational prefix (`acme/billing/refunds`), one with nested
/// subdirectories (`pdf-processing/templates/regional`).
pub const SKILLS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/skills");

/// The `SKILL.md` of the fixture's dynamic skill `reports/daily`, generated per read.
#[mcp_resource(
    uri = "skill://reports/daily/SKILL.md",
    name = "daily",
    description = "Assemble today's report from live data (generated)",
    mime_type = "text/markdown"
)]
pub async fn daily_report_skill(_cx: &mut ToolContext) -> Result<String, ToolError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    Ok(format!(
        "---\nname: daily\ndescription: Assemble today's report from live data (generated)\n---\n\n\
         # Daily report\n\nGenerated at {now} (Unix seconds).\n"
    ))
}

/// Every fixture resource and template.
pub fn resources() -> Vec<Arc<dyn Resource>> {
    vec![
        Arc::new(static_text::resource()),
        Arc::new(static_binary::resource()),
        Arc::new(template_data::resource()),
        Arc::new(watched_resource::resource()),
    ]
}

/// A server with every fixture tool, prompt and resource (the sealer's key is random unless
/// `sealer` is given).
///
/// # Errors
/// When a tool, prompt or resource fails registration (a bug in this module).
pub fn server(sealer: Option<Sealer>) -> Result<Server, RegistrationError> {
    builder(sealer).build()
}

/// The builder of [`server`], for more settings (a shared task store, task settings).
pub fn builder(sealer: Option<Sealer>) -> mcp_tool_runtime::ServerBuilder {
    let mut b = Server::builder(Implementation::new("mcp-tool-conformance-fixture", "0.1.0"))
        .dynamic(true)
        .instructions("Fixture tools of the MCP conformance suite (2026-07-28).");
    if let Some(s) = sealer {
        b = b.sealer(s);
    }
    for t in tools().into_iter().chain(dynamic_tools()) {
        b = b.tool(t);
    }
    for p in prompts() {
        b = b.prompt(p);
    }
    for r in resources() {
        b = b.resource(r);
    }
    b.skills(SKILLS_DIR)
        .resource(daily_report_skill::resource())
        .dynamic_skill(DynamicSkill::new(
            "reports/daily",
            "Assemble today's report from live data (generated)",
        ))
}
