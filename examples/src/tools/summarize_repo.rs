//! `summarize_repo`, the lesson's tool: the client's model picks three files, then
//! summarizes them (and, on request, critiques the summary), over up to three MRTR rounds.
//!
//! * Round 1 — sampling `pick_files`: the repository's file list, "Choose three
//!   representative files and return a JSON array.", system prompt "Return only the
//!   requested value.", `modelPreferences {costPriority: 0.8, intelligencePriority: 0.2}`,
//!   `maxTokens` 400, `includeContext: "none"`.
//! * The answer is untrusted: [`Repo::parse_picks`](crate::repo::Repo::parse_picks) accepts
//!   only a JSON array of at most three of the files the listing offered (regular files
//!   inside the root that git would publish, no hidden files, no secret-looking names);
//!   anything else is
//!   `ToolError::InvalidInput` (JSON-RPC -32602) and nothing is read.
//! * Listing, validating and reading run on tokio's blocking pool ([`blocking`]).
//! * Round 2 — sampling `summary` with the chosen files' contents (bounded per file and per
//!   request).
//! * Round 3 (only with `critique: true`) — sampling `critique` with the summary, which the
//!   sealed state carried over from round 2.
//! * The result carries `files`, `summary` (and `critique`) as `structuredContent` and as text.

use mcp_tool_runtime::protocol::{CallToolResult, ContentBlock, IncludeContext};
use mcp_tool_runtime::{Sample, State, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::bounded;
use crate::repo::{FileExcerpt, Repo};

/// Most bytes kept from a summary or a critique (they travel in the sealed state).
pub const MAX_ANSWER_BYTES: usize = 2000;
/// Most characters accepted in `audience`.
pub const MAX_AUDIENCE_CHARS: usize = 100;
/// The instruction of the `pick_files` round (the lesson's wording).
pub const PICK_FILES_PROMPT: &str = "Choose three representative files and return a JSON array.";
/// The system prompt of every round.
pub const SYSTEM_PROMPT: &str = "Return only the requested value.";

/// Arguments of `summarize_repo`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SummarizeArgs {
    /// Who the summary is for, e.g. "developer".
    pub audience: String,
    /// Ask the model to critique its summary in a third round.
    #[serde(default)]
    pub critique: bool,
}

/// Summarize the server's repository for an audience with your model (it picks 3 files, then summarizes).
#[mcp_tool(max_rounds = 3, read_only)]
pub async fn summarize_repo(
    cx: &mut ToolContext,
    args: SummarizeArgs,
    repo: State<Repo>,
) -> Result<CallToolResult, ToolError> {
    check_audience(&args.audience)?;
    // The repository's file system work runs on a blocking thread, never on the async workers.
    let listing = blocking({
        let repo = repo.clone();
        move || pick_files_request(&repo)
    })
    .await?;
    let pick_files = cx.sample(listing).key("pick_files").await?;
    let answer = pick_files.text()?;
    let files = blocking({
        let repo = repo.clone();
        move || {
            repo.parse_picks(&answer)
                .map_err(|e| ToolError::invalid_input("pick_files", e))
        }
    })
    .await?;
    let (audience, chosen) = (args.audience.clone(), files.clone());
    let excerpts = blocking({
        let repo = repo.clone();
        move || summary_request(&repo, &audience, &chosen)
    })
    .await?;
    let summary_answer = cx.sample(excerpts).key("summary").await?;
    let summary = bounded(&summary_answer.text()?, MAX_ANSWER_BYTES);
    let mut critique = None;
    if args.critique {
        let critique_answer = cx
            .sample(critique_request(&summary))
            .key("critique")
            .await?;
        critique = Some(bounded(&critique_answer.text()?, MAX_ANSWER_BYTES));
    }
    Ok(render(&files, &summary, critique.as_deref()))
}

/// Runs blocking work (the repository's file system calls) on tokio's blocking pool.
///
/// # Errors
/// What `work` returns; `ToolError::Internal` if it panicked.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Internal(format!("blocking repository task failed: {e}")))?
}

fn check_audience(audience: &str) -> Result<(), ToolError> {
    let n = audience.chars().count();
    if audience.trim().is_empty()
        || n > MAX_AUDIENCE_CHARS
        || audience.chars().any(char::is_control)
    {
        return Err(ToolError::InvalidArguments {
            field: "audience".into(),
            message: format!("1 to {MAX_AUDIENCE_CHARS} printable characters"),
        });
    }
    Ok(())
}

fn with_common(sample: Sample) -> Sample {
    sample
        .system(SYSTEM_PROMPT)
        .cost_priority(0.8)
        .intelligence_priority(0.2)
        .max_tokens(400)
        .include_context(IncludeContext::None)
}

/// The `pick_files` request: the lesson's instruction and the repository's file list.
///
/// # Errors
/// `ToolError::Failed` when the repository cannot be listed.
pub fn pick_files_request(repo: &Repo) -> Result<Sample, ToolError> {
    let files = repo
        .list_files()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut text = format!("{PICK_FILES_PROMPT}\n\nFiles in the repository:\n");
    for f in &files {
        text.push_str(&format!("- {f}\n"));
    }
    Ok(with_common(Sample::user(text)).key("pick_files"))
}

/// The `summary` request: the audience and the chosen files' bounded contents.
///
/// # Errors
/// `ToolError::InvalidInput` for a path the sandbox refuses (re-checked before reading),
/// `ToolError::Failed` when reading fails.
pub fn summary_request(repo: &Repo, audience: &str, files: &[String]) -> Result<Sample, ToolError> {
    let excerpts = repo.read_files(files).map_err(|e| match e {
        crate::repo::RepoError::Io { .. } => ToolError::Failed(e.to_string()),
        other => ToolError::invalid_input("pick_files", other),
    })?;
    Ok(with_common(Sample::user(summary_text(audience, &excerpts))).key("summary"))
}

/// The text of the `summary` request.
pub fn summary_text(audience: &str, excerpts: &[FileExcerpt]) -> String {
    let mut text = format!(
        "Summarize this repository in at most three sentences for the audience below.\n\
         Audience: {audience}\n"
    );
    for e in excerpts {
        text.push_str(&format!("\n=== {} ===\n{}", e.path, e.text));
        if e.truncated {
            text.push_str("\n[… truncated]");
        }
        text.push('\n');
    }
    text
}

/// The `critique` request carrying the summary.
pub fn critique_request(summary: &str) -> Sample {
    with_common(Sample::user(format!(
        "Critique this summary in one sentence: what is missing or misleading?\n\nSummary:\n{summary}"
    )))
    .key("critique")
}

/// The final result: `structuredContent` `{files, summary, critique?}` and the same as text.
pub fn render(files: &[String], summary: &str, critique: Option<&str>) -> CallToolResult {
    let mut structured = Map::new();
    structured.insert("files".into(), json!(files));
    structured.insert("summary".into(), json!(summary));
    let mut text = format!("Files: {}\n\nSummary: {summary}", files.join(", "));
    if let Some(c) = critique {
        structured.insert("critique".into(), json!(c));
        text.push_str(&format!("\n\nCritique: {c}"));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured).into());
    result
}
