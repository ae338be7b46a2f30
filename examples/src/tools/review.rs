//! A prompt and a resource template over the repository that `summarize_repo` reads, through
//! the same sandbox (`Repo`: contained in the root, bounded, dotfiles and skipped directories
//! never offered):
//!
//! * `repo://files/{+path}` ([`repo_file()`]): one file of the repository, as text (bounded); the
//!   `path` variable completes to the repository's files ([`complete_path`]).
//! * `review_file` ([`review_file()`]): a prompt that **asks before it answers** — an elicitation
//!   for the file to review (a path among those it lists) — then returns the review
//!   instructions with the file embedded as a resource.

use mcp_tool_runtime::protocol::{ContentBlock, EmbeddedResource, PromptMessage, ResourceContents};
use mcp_tool_runtime::{CompleteContext, State, ToolContext, ToolError, mcp_prompt, mcp_resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::repo::{FileExcerpt, Repo, RepoError};

/// Most files named in `review_file`'s question.
pub const LISTED_FILES: usize = 20;

/// The variable of `repo://files/{+path}`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileVars {
    /// The file's path relative to the repository root, `/`-separated.
    pub path: String,
}

/// The URI of a repository file.
pub fn file_uri(path: &str) -> String {
    format!("repo://files/{path}")
}

/// One file of the repository (read through the sandbox: nothing outside the root, bounded).
#[mcp_resource(
    template = "repo://files/{+path}",
    name = "repository file",
    mime_type = "text/plain",
    complete(path = complete_path)
)]
pub async fn repo_file(
    _cx: &mut ToolContext,
    vars: FileVars,
    repo: State<Repo>,
) -> Result<String, ToolError> {
    let excerpt = read_one(&repo, &vars.path)?;
    Ok(excerpt_text(&excerpt))
}

/// Completion of `path`: the repository's files that start with what was typed (else that
/// contain it), at most what the listing offers.
pub async fn complete_path(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    let repo = cx.state::<Repo>()?;
    let files = repo
        .list_files()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let typed = cx.value.as_str();
    let mut hits: Vec<String> = files
        .iter()
        .filter(|f| f.starts_with(typed))
        .cloned()
        .collect();
    hits.extend(
        files
            .iter()
            .filter(|f| !f.starts_with(typed) && f.contains(typed))
            .cloned(),
    );
    Ok(hits)
}

/// The arguments of `review_file`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewArgs {
    /// What the review should focus on, e.g. "error handling".
    pub focus: String,
}

/// The answer to "Which file should be reviewed?".
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FileChoice {
    /// A path from the list, e.g. "src/main.rs".
    pub path: String,
}

/// Review one file of the repository: asks which file, then gives the model the file and the
/// review instructions.
#[mcp_prompt(title = "Review a repository file")]
pub async fn review_file(
    cx: &mut ToolContext,
    args: ReviewArgs,
    repo: State<Repo>,
) -> Result<Vec<PromptMessage>, ToolError> {
    let offered = repo
        .list_files()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let shown: Vec<&str> = offered
        .iter()
        .take(LISTED_FILES)
        .map(String::as_str)
        .collect();
    let file: FileChoice = cx
        .ask(format!(
            "Which file should be reviewed? One of: {}{}",
            shown.join(", "),
            if offered.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ))
        .await?;
    // the answer is untrusted: only a file the repository offers
    if !offered.contains(&file.path) {
        return Err(ToolError::invalid_input(
            "file",
            format!("`{}` is not a file of the repository", file.path),
        ));
    }
    let excerpt = read_one(&repo, &file.path)?;
    Ok(vec![
        PromptMessage::user(ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::text(
                file_uri(&file.path),
                Some("text/plain".into()),
                excerpt_text(&excerpt),
            ),
            annotations: None,
            meta: None,
        })),
        PromptMessage::user(format!(
            "Review the file `{}` above. Focus on {}. List concrete problems, most important first, \
             each with the line it concerns and a suggested fix.",
            file.path, args.focus
        )),
    ])
}

/// Reads one file through the sandbox: a refused path is an invalid argument (the path came
/// from the client), a read failure an ordinary one.
fn read_one(repo: &Repo, path: &str) -> Result<FileExcerpt, ToolError> {
    let mut files = repo.read_files(&[path.to_owned()]).map_err(|e| match e {
        RepoError::Io { .. } => ToolError::Failed(e.to_string()),
        other => ToolError::InvalidArguments {
            field: "path".into(),
            message: other.to_string(),
        },
    })?;
    files
        .pop()
        .ok_or_else(|| ToolError::Failed(format!("`{path}` could not be read")))
}

fn excerpt_text(e: &FileExcerpt) -> String {
    if e.truncated {
        format!("{}\n[… truncated]", e.text)
    } else {
        e.text.clone()
    }
}
