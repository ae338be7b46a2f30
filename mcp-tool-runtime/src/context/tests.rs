//! Unit tests of the context: answers, journal, flows, direct mode.

use super::*;
use crate::protocol::{CreateMessageResult, ElicitResult, ListRootsResult, Root};
use crate::requests::{Elicit, Elicitation, Roots, UrlOutcome};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
struct Contact {
    /// Full name
    name: String,
    #[schemars(email)]
    email: Option<String>,
    age: Option<u8>,
    subscribe: bool,
}

fn ctx_with(answers: Vec<(&str, InputResponse)>) -> ToolContext {
    ToolContext::new(Principal::named("p"), ClientCapabilities::all())
        .with_round(1)
        .with_answers(
            answers
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
}

fn accept(v: Value) -> InputResponse {
    match v {
        Value::Object(m) => ElicitResult::accept(m).into(),
        _ => panic!("object expected"),
    }
}

// --- schemas -----------------------------------------------------------------------------

#[test]
fn take_elicitation_accept_decline_cancel() {
    let mut cx = ctx_with(vec![
        ("a", accept(json!({"name": "Ada", "subscribe": true}))),
        ("d", ElicitResult::decline().into()),
        ("c", ElicitResult::cancel().into()),
    ]);
    assert_eq!(cx.round_number(), 1);
    assert_eq!(
        cx.take_elicitation::<Contact>("a"),
        Ok(Elicitation::Accept(Contact {
            name: "Ada".into(),
            email: None,
            age: None,
            subscribe: true
        }))
    );
    // Taken: gone.
    assert!(!cx.has_answer("a"));
    assert!(matches!(
        cx.take_elicitation::<Contact>("a"),
        Err(ToolError::Internal(_))
    ));
    assert_eq!(
        cx.take_ask::<Contact>("d"),
        Err(ToolError::Declined { key: "d".into() })
    );
    assert_eq!(
        cx.take_ask::<Contact>("c"),
        Err(ToolError::Cancelled { key: "c".into() })
    );
}

#[test]
fn take_with_wrong_kind_or_content_is_invalid_input() {
    let mut cx = ctx_with(vec![
        ("e", accept(json!({"name": 1}))),
        ("s", CreateMessageResult::text("m", "hi").into()),
        (
            "r",
            ListRootsResult {
                roots: vec![],
                extra: Default::default(),
            }
            .into(),
        ),
    ]);
    assert!(matches!(
        cx.take_elicitation::<Contact>("e"),
        Err(ToolError::InvalidInput { key, .. }) if key == "e"
    ));
    assert!(matches!(
        cx.take_roots("s"),
        Err(ToolError::InvalidInput { .. })
    ));
    assert!(matches!(
        cx.take_sampling("r"),
        Err(ToolError::InvalidInput { .. })
    ));
}

#[test]
fn take_url_sampling_roots() {
    let mut cx = ctx_with(vec![
        ("u", ElicitResult::accept_url().into()),
        ("u2", ElicitResult::decline().into()),
        ("s", CreateMessageResult::text("m1", "  hello ").into()),
        (
            "r",
            ListRootsResult {
                roots: vec![Root::new("file:///w", Some("w"))],
                extra: Default::default(),
            }
            .into(),
        ),
    ]);
    assert_eq!(cx.take_url_elicitation("u"), Ok(UrlOutcome::Accept));
    assert_eq!(cx.take_url_elicitation("u2"), Ok(UrlOutcome::Decline));
    let s = cx.take_sampling("s").expect("sampling");
    assert_eq!(s.text().as_deref(), Ok("  hello "));
    assert_eq!(s.model(), "m1");
    assert_eq!(s.key(), "s");
    assert_eq!(cx.take_roots("r").expect("roots")[0].uri, "file:///w");
}

#[test]
fn request_rejects_duplicate_keys_and_round_ready_uses_journal() {
    let mut cx = ToolContext::new(Principal::anonymous(), ClientCapabilities::all());
    cx.request("a", Roots::new().into_request().expect("req"))
        .expect("first");
    assert!(matches!(
        cx.request("a", Roots::new().into_request().expect("req")),
        Err(ToolError::Internal(_))
    ));
    assert!(!cx.round_ready());
    assert_eq!(cx.outgoing().len(), 1);

    let asked = Elicit::<Contact>::new("x").into_request().expect("req");
    let mut journal = Journal::new();
    journal.insert(
        "a".to_owned(),
        JournalEntry {
            digest: request_digest(&asked),
            response: InputResponse::from(ElicitResult::decline()),
        },
    );
    journal.insert(
        "c".to_owned(),
        JournalEntry {
            digest: request_digest(&asked),
            response: InputResponse::from(ElicitResult::decline()),
        },
    );
    let mut cx = ToolContext::new(Principal::anonymous(), ClientCapabilities::all())
        .with_journal(journal, BTreeSet::new());
    assert!(cx.journal_enabled());
    // Nothing outgoing: a checkpoint never counts as ready.
    assert!(!cx.round_ready());
    cx.request_builder("a", Elicit::<Contact>::new("x"))
        .expect("req");
    assert!(cx.round_ready());
    assert!(cx.outgoing().is_empty());
    assert_eq!(
        cx.take_elicitation::<Contact>("a"),
        Ok(Elicitation::Decline)
    );
    // A key requested again in the same call is an error with the journal on.
    assert!(matches!(
        cx.request_builder("a", Elicit::<Contact>::new("x")),
        Err(ToolError::Internal(m)) if m.contains("repeats")
    ));
    // Another question under a journaled key: not ready, the journaled answer is not used.
    cx.request_builder("c", Elicit::<Contact>::new("something else"))
        .expect("req");
    assert!(!cx.round_ready());
    cx.request("b", Roots::new().into_request().expect("req"))
        .expect("b");
    assert!(!cx.round_ready());
    assert_eq!(cx.take_outgoing().len(), 2);
}
