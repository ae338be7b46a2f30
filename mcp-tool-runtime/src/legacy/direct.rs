//! Running a tool, prompt or resource in a legacy session: its function as written, in
//! direct mode, with a host that asks the client ([`PeerHost`]); or, for code without a
//! direct mode (a hand-written [`Tool`](crate::Tool), a function whose future is not
//! `Send`), its state machine driven round by round in the process, each round's requests
//! sent to the client the same way. Either way nothing is sealed and nothing re-runs.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::peer::PeerHost;
use super::session::Session;
use crate::code::{Code, Concluded, Target};
use crate::context::{Journal, JournalEntry, ToolContext, journaled, request_digest};
use crate::error::ToolError;
use crate::host::Host as _;
use crate::host::host_error;
use crate::notify::{NotificationSink, Notifiers};
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::{ErrorObject, InputResponses};
use crate::state::StateMap;
use crate::tool::Step;

/// Where a legacy request runs: its session, and the principal whose credentials came with
/// the request (the session's own, possibly with other scopes: the same issuer and subject).
#[derive(Clone, Copy)]
pub(crate) struct InSession<'a> {
    /// The session.
    pub(crate) session: &'a Arc<Session>,
    /// The caller, as `cx.principal()` shows it.
    pub(crate) principal: &'a Principal,
}

/// Runs `code` for `t` with `input` in `at.session`; the client's requests go to `sink`.
pub(crate) async fn run<T>(
    t: &Target<'_>,
    code: &(dyn Code<T> + '_),
    input: &RawValue,
    at: InSession<'_>,
    sink: NotificationSink,
    notifiers: Notifiers,
    state: Arc<StateMap>,
) -> Result<Concluded<T>, ErrorObject> {
    let session = at.session;
    // The legacy counterpart of -32021: the code needs what the client did not declare.
    if let Some(missing) = t.rounds.capabilities.missing_from(session.capabilities()) {
        let names: Vec<&str> = missing.keys().map(String::as_str).collect();
        tracing::info!(
            session = session.id(),
            request = t.name,
            missing = ?names,
            "legacy client lacks a capability the code needs"
        );
        let message = format!(
            "The {} `{}` needs the client capability {}, which this client did not declare in `initialize`",
            t.noun,
            t.name,
            names.join(", ")
        );
        // A tool says so in its result (the model reads it); a prompt or a resource has no
        // such result: the JSON-RPC error of the modern revision, with this message.
        if t.method == "tools/call" {
            return Ok(Concluded::Failed(ToolError::Failed(message)));
        }
        let mut e = errors::missing_capability(missing);
        e.message = message;
        return Err(e);
    }
    let mut cx = ToolContext::with_host(
        at.principal.clone(),
        PeerHost::new(session.clone(), sink.clone()),
    )
    .with_state_map(state.clone());
    cx = cx.with_notifiers(notifiers.clone());
    if let Some(f) = code.direct(&mut cx, input) {
        return Ok(match f.await {
            Ok(value) => Concluded::Complete {
                value,
                resumed: false,
            },
            Err(e) => Concluded::Failed(e),
        });
    }
    drop(cx);
    Ok(drive(t, code, input, at, sink, notifiers, state).await)
}

/// The state machine driven in the process: each round's requests are asked of the client
/// one by one, and the answers given to the next round with the state the round returned.
async fn drive<T>(
    t: &Target<'_>,
    code: &(dyn Code<T> + '_),
    input: &RawValue,
    at: InSession<'_>,
    sink: NotificationSink,
    notifiers: Notifiers,
    state_map: Arc<StateMap>,
) -> Concluded<T> {
    let session = at.session;
    let mut host = PeerHost::new(session.clone(), sink);
    let mut state: Option<Box<RawValue>> = None;
    let mut answers = InputResponses::new();
    let mut journal = Journal::new();
    let mut used = BTreeSet::new();
    let mut round = 0u32;
    loop {
        let mut cx = ToolContext::new(at.principal.clone(), session.capabilities().clone())
            .with_round(round)
            .with_state_map(state_map.clone());
        if t.rounds.journal {
            cx = cx.with_journal(std::mem::take(&mut journal), std::mem::take(&mut used));
        }
        cx = cx.with_answers(std::mem::take(&mut answers));
        cx = cx.with_notifiers(notifiers.clone());
        let saved = match code.step(&mut cx, input, state.as_deref()).await {
            Ok(Step::Complete(value)) => {
                return Concluded::Complete {
                    value,
                    resumed: round > 0,
                };
            }
            Ok(Step::Suspend { state }) => state,
            Err(e) => return Concluded::Failed(e),
        };
        if round >= t.rounds.max_rounds {
            tracing::error!(
                request = t.name,
                max_rounds = t.rounds.max_rounds,
                "asked for input beyond the maximum number of rounds"
            );
            return Concluded::Failed(ToolError::Internal(format!(
                "exceeded the maximum of {} input rounds",
                t.rounds.max_rounds
            )));
        }
        if let Some((j, u)) = cx.take_journal() {
            journal = j;
            used = u;
        }
        for (key, req) in cx.take_outgoing() {
            let answer = match host.respond(&key, &req).await {
                Ok(a) => a,
                Err(e) => return Concluded::Failed(host_error(&key, e)),
            };
            if t.rounds.journal {
                journal.insert(
                    key.clone(),
                    JournalEntry {
                        digest: request_digest(&req),
                        response: journaled(&answer),
                    },
                );
            }
            answers.insert(key, answer);
        }
        state = Some(saved);
        round = round.saturating_add(1);
    }
}
