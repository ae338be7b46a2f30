//! The notes tools: a notes store on SQLite ([`crate::notes::Notes`]) given to the server as
//! application state and taken by each tool as `notes: State<Notes>` — no global, so every
//! replica resumes a call with its own handle on the shared file.
//!
//! * `add_note` and `list_notes`: one round each.
//! * `delete_notes`: finds the notes matching a filter, then asks a confirmation **per note,
//!   inside a loop** — the shared [`confirm`] flow under the key `delete_<id>/answer`, one
//!   round each — and deletes the confirmed notes at the end, in one transaction.
//! * `edit_note`: replaces a note's text after one [`confirm`] (`replace/answer`).
//! * the resource template `notes://notes/{id}` ([`struct@note`]) reads one of the caller's notes;
//!   `add_note`, `edit_note` and `delete_notes` tell its listeners (`subscriptions/listen`
//!   with `resourceSubscriptions`) when a note changes (`cx.resource_updated`).
//!
//! **What crosses a round.** Only ids, titles and revisions: the loop's remaining candidates
//! (`{id, title}`), the confirmed `(id, title, revision)` and the notes kept or already gone.
//! Bodies are read from the database when a question is asked and never stored in
//! `requestState` (which the client can read and which is capped at 64 KiB); at most
//! [`MAX_CONFIRMATIONS`] notes are considered per call, which also bounds the state.
//!
//! **Owners.** Each note belongs to the principal that added it (`cx.principal()`; the
//! anonymous principal is an owner of its own): every tool reads, lists, changes and
//! deletes only the caller's notes, and another principal's note is to it exactly like a
//! note that does not exist ([`Owner`]).
//!
//! **Other replicas.** Between two rounds another client (through another replica, or this
//! one) may delete or change a note. Before asking about a note, `delete_notes` reads it
//! again: a note gone by then is reported in `alreadyGone` and not asked about. The
//! question shows the note as it is, and its revision is what the user confirms: the final
//! delete removes a note only if it still has that revision (`changed`: kept) and reports a
//! note deleted meanwhile as gone. Nothing is an error. Nothing is deleted before the last
//! answer, so a call the client abandons half-way deletes nothing. (A client that resends
//! the last round, e.g. after losing the response, runs the deletion again: the notes it
//! deleted the first time are then reported as already gone.)

use mcp_tool_runtime::{State, ToolContext, ToolError, mcp_resource, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::confirm::confirm;
use crate::notes::{DeleteOutcome, Note, NoteRef, Notes, Owner, ReplaceOutcome};

/// Most characters in a title.
pub const MAX_TITLE_CHARS: usize = 200;
/// Most characters in a body.
pub const MAX_BODY_CHARS: usize = 4000;
/// Most characters in a filter.
pub const MAX_FILTER_CHARS: usize = 100;
/// Most notes `list_notes` returns.
pub const MAX_LISTED: usize = 50;
/// Most notes one `delete_notes` call asks about (one round each; `max_rounds` of the tool).
pub const MAX_CONFIRMATIONS: usize = 20;
/// Most characters of a body quoted in a question.
pub const PREVIEW_CHARS: usize = 60;

/// Arguments of `add_note`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddNoteArgs {
    /// The title: 1 to 200 printable characters.
    pub title: String,
    /// The text: 1 to 4000 characters (line breaks and tabs allowed).
    pub body: String,
}

/// Arguments of `list_notes`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ListNotesArgs {
    /// Only notes whose title or text contains this (ASCII case-insensitive); absent or
    /// empty: every note.
    #[serde(default)]
    pub filter: Option<String>,
}

/// Arguments of `delete_notes`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DeleteNotesArgs {
    /// Notes whose title or text contains this (ASCII case-insensitive), 1 to 100
    /// characters. Each matching note is confirmed one by one before anything is deleted.
    pub filter: String,
}

/// Arguments of `edit_note`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EditNoteArgs {
    /// The note's id (see `list_notes`).
    pub id: i64,
    /// The new text: 1 to 4000 characters.
    pub body: String,
}

/// The notes `list_notes` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoteList {
    /// The first 50 matching notes, by id.
    pub notes: Vec<Note>,
    /// How many notes match in all.
    pub total: usize,
}

/// What `delete_notes` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteReport {
    /// Deleted.
    pub deleted: Vec<NoteRef>,
    /// Kept: the user said no, declined or cancelled.
    pub kept: Vec<NoteRef>,
    /// Deleted by someone else during this call (before being asked about, or between the
    /// confirmation and the deletion).
    pub already_gone: Vec<NoteRef>,
    /// Confirmed, but changed by someone else after the question: kept (ask again to review).
    pub changed: Vec<NoteRef>,
    /// Matching notes beyond the 20 asked about in one call (call again for them).
    pub not_asked: usize,
}

/// What `edit_note` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditOutcome {
    /// The text was replaced.
    Replaced,
    /// The user said no (or declined, or cancelled): unchanged.
    Kept,
    /// Someone else deleted the note meanwhile.
    Gone,
    /// Someone else changed the note after the question: unchanged.
    Changed,
}

/// The result of `edit_note`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditReport {
    /// The note.
    pub note: NoteRef,
    /// What happened.
    pub outcome: EditOutcome,
    /// The note's revision afterwards (absent when it is gone).
    pub revision: Option<i64>,
}

/// A note the user confirmed, as it was when asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Confirmed {
    note: NoteRef,
    revision: i64,
}

/// The URI of note `id` (the [`struct@note`] resource template).
pub fn note_uri(id: i64) -> String {
    format!("notes://notes/{id}")
}

/// The variables of a note's URI.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoteVars {
    /// The note's id (digits).
    pub id: String,
}

/// One of the caller's notes, its title and text (another principal's note is not there).
#[mcp_resource(
    template = "notes://notes/{id}",
    name = "note",
    mime_type = "text/plain",
    scopes = "notes:read"
)]
pub async fn note(
    cx: &mut ToolContext,
    vars: NoteVars,
    notes: State<Notes>,
) -> Result<String, ToolError> {
    let id = vars.id.parse::<i64>().unwrap_or(-1);
    match notes.get(&Owner::of(cx.principal()), id).await? {
        Some(note) => Ok(format!("{}\n\n{}", note.title, note.body)),
        None => Err(ToolError::InvalidArguments {
            field: "id".into(),
            message: format!("there is no note #{}", vars.id),
        }),
    }
}

/// Add a note (a title and a text) to the notes store.
#[mcp_tool(max_rounds = 1, scopes = "notes:write")]
pub async fn add_note(
    cx: &mut ToolContext,
    args: AddNoteArgs,
    notes: State<Notes>,
) -> Result<Note, ToolError> {
    let title = check_title(&args.title)?;
    check_body(&args.body)?;
    let owner = Owner::of(cx.principal());
    let note = notes.add(&owner, title.to_owned(), args.body).await?;
    tracing::info!(id = note.id, "note added");
    cx.resource_updated(note_uri(note.id));
    Ok(note)
}

/// List the notes, optionally only those whose title or text contains a filter.
#[mcp_tool(max_rounds = 1, read_only, scopes = "notes:read")]
pub async fn list_notes(
    cx: &mut ToolContext,
    args: ListNotesArgs,
    notes: State<Notes>,
) -> Result<NoteList, ToolError> {
    let filter = match args.filter.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(f) => Some(check_filter(f)?.to_owned()),
    };
    let (notes, total) = notes
        .list(&Owner::of(cx.principal()), filter, MAX_LISTED)
        .await?;
    Ok(NoteList { notes, total })
}

/// Delete the notes whose title or text contains a filter, each after a confirmation.
#[mcp_tool(max_rounds = 20, destructive, scopes = "notes:write")]
pub async fn delete_notes(
    cx: &mut ToolContext,
    args: DeleteNotesArgs,
    notes: State<Notes>,
) -> Result<DeleteReport, ToolError> {
    let filter = check_filter(&args.filter)?.to_owned();
    // The caller's notes only. The owner is taken from the context at each use, not kept
    // in the state: the principal is the same in every round (the state is sealed for it).
    let (candidates, total) = notes
        .find(&Owner::of(cx.principal()), Some(filter), MAX_CONFIRMATIONS)
        .await?;
    let mut report = DeleteReport {
        not_asked: total.saturating_sub(candidates.len()),
        ..DeleteReport::default()
    };
    let mut confirmed: Vec<Confirmed> = Vec::new();
    for candidate in candidates {
        // Read again now: rounds may have passed, on other replicas, since the search.
        let current = notes.get(&Owner::of(cx.principal()), candidate.id).await?;
        let note = match current {
            Some(note) => note,
            None => {
                report.already_gone.push(candidate);
                continue;
            }
        };
        let question = delete_question(&note);
        let asked = Confirmed {
            note: note.to_ref(),
            revision: note.revision,
        };
        let yes = confirm(cx, question)
            .key(format!("delete_{}", candidate.id))
            .await?;
        if yes {
            confirmed.push(asked);
        } else {
            report.kept.push(asked.note);
        }
    }
    let targets = confirmed.iter().map(|c| (c.note.id, c.revision)).collect();
    let outcomes = notes
        .delete_unchanged(&Owner::of(cx.principal()), targets)
        .await?;
    for (c, outcome) in confirmed.into_iter().zip(outcomes) {
        match outcome {
            DeleteOutcome::Deleted => {
                cx.resource_updated(note_uri(c.note.id));
                report.deleted.push(c.note);
            }
            DeleteOutcome::Gone => report.already_gone.push(c.note),
            DeleteOutcome::Changed => report.changed.push(c.note),
        }
    }
    tracing::info!(
        deleted = report.deleted.len(),
        kept = report.kept.len(),
        gone = report.already_gone.len(),
        changed = report.changed.len(),
        "delete_notes"
    );
    Ok(report)
}

/// Replace the text of a note, after a confirmation that shows the old and the new text.
#[mcp_tool(max_rounds = 1, destructive, scopes = "notes:write")]
pub async fn edit_note(
    cx: &mut ToolContext,
    args: EditNoteArgs,
    notes: State<Notes>,
) -> Result<EditReport, ToolError> {
    check_body(&args.body)?;
    let current = notes.get(&Owner::of(cx.principal()), args.id).await?;
    let Some(current) = current else {
        return Err(ToolError::InvalidArguments {
            field: "id".into(),
            message: format!("there is no note #{}", args.id),
        });
    };
    let question = format!(
        "Replace the text of note #{} “{}” (“{}”) with “{}”?",
        current.id,
        preview(&current.title, MAX_TITLE_CHARS),
        preview(&current.body, PREVIEW_CHARS),
        preview(&args.body, PREVIEW_CHARS),
    );
    let note = current.to_ref();
    let revision = current.revision;
    let replace = confirm(cx, question).await?;
    let (outcome, revision) = if !replace {
        (EditOutcome::Kept, Some(revision))
    } else {
        match notes
            .replace_body(
                &Owner::of(cx.principal()),
                note.id,
                revision,
                args.body.clone(),
            )
            .await?
        {
            ReplaceOutcome::Replaced { revision } => {
                cx.resource_updated(note_uri(note.id));
                (EditOutcome::Replaced, Some(revision))
            }
            ReplaceOutcome::Gone => (EditOutcome::Gone, None),
            ReplaceOutcome::Changed => (EditOutcome::Changed, None),
        }
    };
    Ok(EditReport {
        note,
        outcome,
        revision,
    })
}

/// The question `delete_notes` asks about `note`.
pub fn delete_question(note: &Note) -> String {
    format!(
        "Delete note #{} “{}” (“{}”)?",
        note.id,
        preview(&note.title, MAX_TITLE_CHARS),
        preview(&note.body, PREVIEW_CHARS)
    )
}

/// `text` on one line for a question: control characters dropped, runs of whitespace made
/// one space, at most `max` characters (then `…`). The database may hold text written by
/// other programs, so titles are cleaned too.
pub fn preview(text: &str, max: usize) -> String {
    let one_line = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max).collect();
    cut.push('…');
    cut
}

fn invalid(field: &str, message: String) -> ToolError {
    ToolError::InvalidArguments {
        field: field.into(),
        message,
    }
}

/// The trimmed title, if it has 1 to [`MAX_TITLE_CHARS`] printable characters.
fn check_title(title: &str) -> Result<&str, ToolError> {
    let t = title.trim();
    if t.is_empty() || t.chars().count() > MAX_TITLE_CHARS || t.chars().any(char::is_control) {
        return Err(invalid(
            "title",
            format!("1 to {MAX_TITLE_CHARS} printable characters"),
        ));
    }
    Ok(t)
}

/// A body: not blank, at most [`MAX_BODY_CHARS`] characters, no control characters but line
/// breaks and tabs.
fn check_body(body: &str) -> Result<(), ToolError> {
    if body.trim().is_empty()
        || body.chars().count() > MAX_BODY_CHARS
        || body
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(invalid(
            "body",
            format!(
                "1 to {MAX_BODY_CHARS} characters, not blank, no control characters but line breaks and tabs"
            ),
        ));
    }
    Ok(())
}

/// The trimmed filter, if it has 1 to [`MAX_FILTER_CHARS`] printable characters.
fn check_filter(filter: &str) -> Result<&str, ToolError> {
    let f = filter.trim();
    if f.is_empty() || f.chars().count() > MAX_FILTER_CHARS || f.chars().any(char::is_control) {
        return Err(invalid(
            "filter",
            format!("1 to {MAX_FILTER_CHARS} printable characters"),
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tool_runtime::Tool;

    #[test]
    fn previews_are_one_bounded_line() {
        assert_eq!(preview("a\n\n b\tc\u{7}", 10), "a b c");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("äöü", 3), "äöü");
    }

    #[test]
    fn arguments_are_bounded() {
        assert_eq!(check_title("  t  ").unwrap(), "t");
        assert!(check_title(" ").is_err());
        assert!(check_title("a\u{0}b").is_err());
        assert!(check_title(&"x".repeat(MAX_TITLE_CHARS + 1)).is_err());
        assert!(check_body("line\r\nline\ttab").is_ok());
        assert!(check_body("\n\t").is_err());
        assert!(check_body("bell\u{7}").is_err());
        assert!(check_body(&"é".repeat(MAX_BODY_CHARS)).is_ok());
        assert!(check_body(&"é".repeat(MAX_BODY_CHARS + 1)).is_err());
        assert!(check_filter("").is_err());
        assert!(check_filter(&"f".repeat(MAX_FILTER_CHARS + 1)).is_err());
    }

    #[test]
    fn the_round_limit_matches_the_confirmation_limit() {
        assert_eq!(
            delete_notes::tool().info().max_rounds as usize,
            MAX_CONFIRMATIONS
        );
    }
}
