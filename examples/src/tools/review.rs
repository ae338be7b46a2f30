//! A prompt and a resource template over the repository that `summarize_repo` reads, through
//! the same sandbox (`Repo`: contained in the root, bounded, only what git would publish, only
//! offered file types, no hidden files, secret-looking names or skipped directories):
//!
//! * `repo://files/{+path}` ([`repo_file()`]): one file of the repository, as text (bounded); the
//!   `path` variable completes to the repository's files ([`complete_path`]). It reads only
//!   what the listing offers ([`Repo::read_offered`]: same filter, same depth and count
//!   limits), and every path it does not read gets the same error, [`NOT_OFFERED`], whether
//!   the path exists or not.
//! * `review_file` ([`review_file()`]): a prompt that **asks before it answers** — an elicitation
//!   for the file to review (a path among those it lists) — then returns the review
//!   instructions with the file embedded as a resource.
//!
//! All three do their file-system work (the listing, the read) on tokio's blocking pool
//! ([`blocking`]), as `summarize_repo` does: a slow disk or a large repository never holds
//! an async worker that other requests need.

use mcp_tool_runtime::protocol::{ContentBlock, EmbeddedResource, PromptMessage, ResourceContents};
use mcp_tool_runtime::{CompleteContext, State, ToolContext, ToolError, mcp_prompt, mcp_resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::summarize_repo::blocking;
use crate::repo::{FileExcerpt, Repo, RepoError};

/// Most files named in `review_file`'s question.
pub const LISTED_FILES: usize = 20;

/// The one message for every path that `repo://files/…` or `review_file` does not read
/// (missing, outside the sandbox, hidden, secret-looking, beyond the listing): it does not
/// say whether the path exists.
pub const NOT_OFFERED: &str = "not a file this repository offers";

/// The variable of `repo://files/{+path}`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileVars {
    /// The file's path relative to the repository root, `/`-separated.
    pub path: String,
}

/// The URI of a repository file: `repo://files/` and the path's `/`-separated segments,
/// percent-encoded (`url`), so that `repo://files/{+path}` matches it and decodes the path.
pub fn file_uri(path: &str) -> String {
    let Ok(mut uri) = url::Url::parse("repo://files/") else {
        return format!("repo://files/{path}");
    };
    if let Ok(mut segments) = uri.path_segments_mut() {
        segments.pop_if_empty().extend(path.split('/'));
    }
    uri.into()
}

/// One file of the repository: only a file the listing offers (read through the sandbox:
/// nothing outside the root, bounded).
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
    let path = vars.path;
    let excerpt = blocking(move || Ok(read_one(&repo, &path)))
        .await?
        .map_err(|e| e.into_tool_error("path"))?;
    Ok(excerpt_text(&excerpt))
}

/// Completion of `path`: the repository's files that start with what was typed (else that
/// contain it), at most what the listing offers.
pub async fn complete_path(cx: CompleteContext) -> Result<Vec<String>, ToolError> {
    let repo = cx.state::<Repo>()?;
    let typed = cx.value;
    blocking(move || matching_files(&repo, &typed)).await
}

/// The offered files that start with `typed`, then those that contain it.
fn matching_files(repo: &Repo, typed: &str) -> Result<Vec<String>, ToolError> {
    let files = repo
        .list_files()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
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
    let question = blocking({
        let repo = repo.clone();
        move || which_file_question(&repo)
    })
    .await?;
    let file: FileChoice = cx.ask(question).await?;
    // the answer is untrusted: only a file the repository offers (listed again, as the
    // resource does), and the same refusal whatever the reason
    let excerpt = blocking({
        let (repo, path) = (repo.clone(), file.path.clone());
        move || Ok(read_one(&repo, &path))
    })
    .await?
    .map_err(|e| match e {
        ReadError::NotOffered => ToolError::invalid_input("file", NOT_OFFERED),
        ReadError::Io(e) => ToolError::Failed(e),
    })?;
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

/// "Which file should be reviewed?" with the first [`LISTED_FILES`] files the listing offers.
fn which_file_question(repo: &Repo) -> Result<String, ToolError> {
    let offered = repo
        .list_files()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let shown: Vec<&str> = offered
        .iter()
        .take(LISTED_FILES)
        .map(String::as_str)
        .collect();
    Ok(format!(
        "Which file should be reviewed? One of: {}{}",
        shown.join(", "),
        if offered.len() > shown.len() {
            ", …"
        } else {
            ""
        }
    ))
}

/// Why [`read_one`] read nothing.
enum ReadError {
    /// Not a file the listing offers (one case for every reason).
    NotOffered,
    /// The root could not be listed or an offered file could not be read.
    Io(String),
}

impl ReadError {
    /// A refused path is an invalid argument `field` (the path came from the client) with
    /// the one [`NOT_OFFERED`] text; a read failure is an ordinary one.
    fn into_tool_error(self, field: &str) -> ToolError {
        match self {
            ReadError::NotOffered => ToolError::InvalidArguments {
                field: field.into(),
                message: NOT_OFFERED.into(),
            },
            ReadError::Io(e) => ToolError::Failed(e),
        }
    }
}

/// Reads one file the repository offers ([`Repo::read_offered`]). Blocking: call it through
/// [`blocking`].
fn read_one(repo: &Repo, path: &str) -> Result<FileExcerpt, ReadError> {
    repo.read_offered(path).map_err(|e| match e {
        RepoError::Io { .. } | RepoError::Root(_) => ReadError::Io(e.to_string()),
        _ => ReadError::NotOffered,
    })
}

fn excerpt_text(e: &FileExcerpt) -> String {
    if e.truncated {
        format!("{}\n[… truncated]", e.text)
    } else {
        e.text.clone()
    }
}

#[cfg(test)]
mod tests {
    use mcp_tool_runtime::resource::UriTemplate;

    use super::*;

    #[test]
    fn file_uris_are_encoded_and_match_the_template() {
        assert_eq!(file_uri("docs/intro.md"), "repo://files/docs/intro.md");
        let uri = file_uri("docs/a b#1?.md");
        assert_eq!(uri, "repo://files/docs/a%20b%231%3F.md");
        let template = UriTemplate::parse("repo://files/{+path}").unwrap();
        assert_eq!(template.matches(&uri).unwrap()["path"], "docs/a b#1?.md");
    }
}
