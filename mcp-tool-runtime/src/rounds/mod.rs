//! The stateless round engine shared by `tools/call`, `prompts/get` and `resources/read`:
//! open and check the sealed state, re-ask missing answers, validate and bound the answers,
//! build the round's context ([`Engine::prepare`]); after the code's step, seal its state into
//! an `input_required` result or hand back the completed value ([`Engine::conclude`]).
//! [`payload`] is what it keeps in the state besides the code's own.

mod payload;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use tracing::Instrument as _;

use crate::code::{Code, Concluded, Suspension, Target};
use crate::context::{Journal, JournalEntry, Reentrant, ToolContext, journaled, request_digest};
use crate::error::ToolError;
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::protocol::errors::{self, invalid_params, invalid_state};
use crate::protocol::text::{self, RawObject, RoundIn};
use crate::protocol::{
    ClientCapabilities, ErrorObject, InputRequests, InputResponse, InputResponses, SharedObject,
};
use crate::seal::{Binding, SealError, Sealer};
use crate::state::StateMap;
use crate::telemetry::metrics;
use crate::tool::Step;
pub(crate) use payload::Once;
use payload::{Payload, PayloadOut, Pending};

/// The round engine: the sealer, the bounds on answers, the application state given to
/// every round, and the `_meta` of its results. One per server.
pub(crate) struct Engine {
    /// Seals and opens `requestState`.
    pub(crate) sealer: Sealer,
    /// Cap on one `inputResponses` entry, in bytes of serialized JSON.
    pub(crate) max_answer_bytes: usize,
    /// Cap on all the `inputResponses` entries a round uses, in bytes of serialized JSON.
    pub(crate) max_answers_total_bytes: usize,
    /// Application state shared with every round.
    pub(crate) state: Arc<StateMap>,
    /// `_meta` of the results it makes (the server's `serverInfo`), its JSON text made once.
    pub(crate) meta: SharedObject,
}

/// The outcome of [`Engine::prepare`].
pub(crate) enum Prepared {
    /// Answers are missing: the same `input_required` result again, no code runs.
    Reask(Suspension),
    /// Run one step with this context and state.
    Run(Box<Run>),
}

/// One round ready to run.
pub(crate) struct Run {
    /// The round's context.
    pub cx: ToolContext,
    /// The code's own state from the previous round, as JSON text.
    pub state: Option<Box<RawValue>>,
    round: u32,
    args_digest: [u8; 32],
    resumed: bool,
    /// A re-asking run: the token it received and the requests it waits for.
    reask: Option<(String, BTreeMap<String, Pending>)>,
    /// A single-use round (`once`): the id and expiry of the state it opened, to claim in
    /// the ledger before the code runs.
    pub once: Option<Once>,
}

impl Run {
    /// Runs this round of `code` (named `name`) on `input` with the state it carries, in the
    /// round's stage span.
    pub(crate) async fn step<T>(
        &mut self,
        code: &(dyn Code<T> + '_),
        name: &str,
        input: &RawValue,
    ) -> Result<Step<T>, ToolError> {
        let state = self.state.take();
        let stage = crate::telemetry::stage_span(name, self.round);
        code.step(&mut self.cx, input, state.as_deref())
            .instrument(stage)
            .await
    }
}

/// The digest of a request's arguments (bound into its state) and the text its code takes:
/// `args` as sent, or their canonical text when an object in them has a key twice (the key
/// once, the last, see `seal::digest_text`). -32602 when they nest deeper than a tree is
/// built, or repeat a key and are longer written canonically.
pub(crate) fn arguments<'a>(
    method: &str,
    args: &'a RawValue,
) -> Result<([u8; 32], std::borrow::Cow<'a, RawValue>), ErrorObject> {
    let (digest, text) = crate::seal::digest_text(args)
        .map_err(|e| invalid_params(format!("{method}: the arguments do not parse: {e}")))?;
    let text = match text {
        Some(t) => std::borrow::Cow::Owned(t),
        None => std::borrow::Cow::Borrowed(args),
    };
    Ok((digest, text))
}

impl Engine {
    /// Opens the request's state (if any), re-asks missing answers, validates the answers
    /// and builds the round's context. Errors are the JSON-RPC errors of the request.
    pub(crate) fn prepare(
        &self,
        t: &Target<'_>,
        args_digest: [u8; 32],
        round_in: RoundIn<'_>,
        caps: &Arc<ClientCapabilities>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Prepared, ErrorObject> {
        if let Some(missing) = t.rounds.capabilities.missing_from(caps) {
            return Err(errors::missing_capability(missing));
        }
        // The answers and the state as sent: each answer is parsed where it is used.
        let responses = match round_in.responses {
            None => RawObject::new(),
            Some(r) if text::is_null(r) => RawObject::new(),
            Some(r) => text::raw_object(r).ok_or_else(|| {
                invalid_params(format!("{}: `inputResponses` must be an object", t.method))
            })?,
        };
        let token = match round_in.state {
            None => None,
            Some(s) if text::is_null(s) => None,
            Some(s) => Some(
                text::string(s).ok_or_else(|| invalid_state(&"requestState is not a string"))?,
            ),
        };
        let token = token.as_deref();
        let binding = Binding {
            principal,
            method: t.method,
            tool: t.name,
            args_digest,
        };

        // Open the state.
        let mut round = 0u32;
        let mut state: Option<Box<RawValue>> = None;
        let mut pending = BTreeMap::new();
        let mut journal = Journal::new();
        let mut used_keys = BTreeSet::new();
        let mut once = None;
        if let Some(tok) = token {
            let span = tracing::info_span!(
                target: "mcp_tool_runtime::rounds",
                "mcp_tool.state.open",
                mcp_tool.state.bytes = i64::try_from(tok.len()).unwrap_or(i64::MAX),
                error.type = tracing::field::Empty,
            );
            let opened = span.in_scope(|| self.sealer.open_parsed::<Payload>(&binding, tok));
            let (sealed_round, layout, payload, trace) = opened.map_err(|e| {
                let reason = metrics::refusal_reason(&e);
                crate::telemetry::failed(&span, reason);
                metrics::state_refused(reason);
                invalid_state(&format_args!("{} `{}`: {e}", t.noun, t.name))
            })?;
            drop(span);
            crate::telemetry::opened_round(trace, sealed_round);
            round = sealed_round;
            pending = payload.pending;
            journal = payload.journal.unwrap_or_default();
            once = payload.once;
            if t.rounds.once && once.is_none() {
                metrics::state_refused("malformed");
                return Err(invalid_state(&format_args!(
                    "{} `{}`: a single-use state without its id",
                    t.noun, t.name
                )));
            }
            if layout == t.rounds.layout {
                state = Some(payload.state);
                used_keys = payload.used;
            } else if t.rounds.journal {
                tracing::info!(
                    request = t.name,
                    from = %layout,
                    to = %t.rounds.layout,
                    "state layout changed: restarting the request from the top with its journal"
                );
                // The run starts again (its keys may be requested again, answered from the
                // journal for identical requests), but the round count goes on: replicas of
                // two builds taking turns cannot reset it, so `max_rounds` holds for the call.
            } else {
                metrics::state_refused("layout");
                return Err(invalid_state(&format_args!(
                    "{} `{}`: state layout `{}` does not match `{}`",
                    t.noun, t.name, layout, t.rounds.layout
                )));
            }
        }

        if token.is_none() {
            crate::telemetry::first_round();
        }

        // The round's context (a re-asking run gets no answers and no notifiers).
        let context = |journal: Journal, used_keys: BTreeSet<String>| {
            let cx = ToolContext::sharing(principal.clone(), Arc::clone(caps))
                .with_round(round)
                .with_state_map(self.state.clone());
            if t.rounds.journal {
                cx.with_journal(journal, used_keys)
            } else {
                cx
            }
        };

        // Missing answers: ask again, same state. Requests kept whole are sent again as they
        // are; the others are made again by the code, resumed at the same stage in a
        // re-asking run (it registers them and stops) — unless the layout changed, and the
        // code starts over anyway.
        if let (Some(tok), true) = (
            token,
            pending.keys().any(|k| !responses.contains_key(k.as_str())),
        ) {
            if state.is_some()
                && pending
                    .values()
                    .any(|p| matches!(p, Pending::Regenerated { .. }))
            {
                return Ok(Prepared::Run(Box::new(Run {
                    cx: context(journal, used_keys).with_reask(),
                    state,
                    round,
                    args_digest: binding.args_digest,
                    resumed: true,
                    reask: Some((tok.to_owned(), pending)),
                    once: None,
                })));
            }
            if state.is_some() {
                let requests: InputRequests = pending
                    .into_iter()
                    .filter_map(|(k, p)| match p {
                        Pending::Stored(r) => Some((k, *r)),
                        Pending::Regenerated { .. } => None,
                    })
                    .collect();
                return self.reask_result(tok, requests, caps).map(Prepared::Reask);
            }
        }

        // Bound the answers this round uses (untrusted, and possibly kept in the state)
        // before parsing them: -32602, never a failure to seal on the way out.
        let used = responses
            .iter()
            .filter(|(k, _)| token.is_none() || pending.contains_key(k.as_ref()))
            .map(|(k, raw)| (k.as_ref(), AnswerText::Text(raw)));
        self.check_answer_sizes(used)?;

        // Validate the shape of each answer against what it answers; with the journal on,
        // keep it with its request's digest.
        let mut answers = InputResponses::new();
        for (key, p) in &pending {
            let Some(raw) = responses.get(key.as_str()) else {
                continue;
            };
            let kind = p.kind();
            let answer = InputResponse::parse_for_text(kind, raw).map_err(|e| {
                invalid_params(format!(
                    "inputResponses[\"{key}\"] is not a valid {}: {e}",
                    kind.answer_name()
                ))
            })?;
            if t.rounds.journal {
                let digest = match p {
                    Pending::Stored(req) => Some(request_digest(req)),
                    Pending::Regenerated { digest, .. } => digest.clone(),
                };
                if let Some(digest) = digest {
                    journal.insert(
                        key.clone(),
                        JournalEntry {
                            digest,
                            response: journaled(&answer),
                        },
                    );
                }
            }
            answers.insert(key.clone(), answer);
        }
        // A first round (no state) may carry answers for requests never made. They are
        // unsolicited: ignored, unless the code opts in (`early_answers`, for clients that
        // know what it asks); then those of a known answer shape are offered to it, and it
        // consumes the ones it asks for (`round_ready`, `take_*` check the kind).
        if token.is_none() && !responses.is_empty() && !t.rounds.early_answers {
            tracing::debug!(
                request = t.name,
                count = responses.len(),
                "ignoring answers sent on a first request (no early answers taken)"
            );
        }
        if token.is_none() && t.rounds.early_answers {
            for (key, raw) in responses.iter() {
                match serde_json::from_str::<InputResponse>(raw.get()) {
                    Ok(answer) => {
                        answers.insert(key.to_string(), answer);
                    }
                    Err(e) => {
                        tracing::debug!(
                            request = t.name,
                            key = %errors::for_log(key),
                            error = %errors::redact(&e.to_string()),
                            "ignoring an unsolicited answer of unknown shape"
                        )
                    }
                }
            }
        }

        let cx = context(journal, used_keys)
            .with_answers(answers)
            .with_notifiers(notifiers);
        Ok(Prepared::Run(Box::new(Run {
            cx,
            state,
            round,
            args_digest: binding.args_digest,
            resumed: token.is_some(),
            reask: None,
            once: if t.rounds.once { once } else { None },
        })))
    }

    /// The `input_required` result asking `requests` again with the state `token` as it came.
    pub(crate) fn reask_result(
        &self,
        token: &str,
        requests: InputRequests,
        caps: &ClientCapabilities,
    ) -> Result<Suspension, ErrorObject> {
        // Capabilities are per request: never send again what this retry cannot receive.
        if let Some(missing) = errors::capabilities_for(requests.values(), caps) {
            return Err(errors::missing_capability(missing));
        }
        Ok(Suspension {
            requests,
            token: token.to_owned(),
        })
    }

    /// The outcome of a re-asking run: the requests it waits for, those kept whole as they
    /// were and the others as the code made them again (the same kind, and under the
    /// journal the same digest, or the code is not deterministic: an internal error).
    fn conclude_reask<R>(
        &self,
        t: &Target<'_>,
        caps: &ClientCapabilities,
        mut cx: ToolContext,
        token: String,
        pending: BTreeMap<String, Pending>,
        outcome: Result<Step<R>, ToolError>,
    ) -> Result<Concluded<R>, ErrorObject> {
        let capital = Capitalized(t.noun);
        let name = t.name;
        match outcome {
            Ok(Step::Suspend { .. }) => {}
            Ok(Step::Complete(_)) => {
                tracing::error!(
                    request = name,
                    "a re-asking run completed instead of asking"
                );
                return Err(errors::internal(format!(
                    "{capital} `{name}` could not ask for its missing input again"
                )));
            }
            Err(e) => return Ok(Concluded::Failed(e)),
        }
        let mut made = cx.take_outgoing();
        let mut requests = InputRequests::new();
        for (key, p) in pending {
            let req = match p {
                Pending::Stored(req) => *req,
                Pending::Regenerated { kind, digest } => {
                    let same = made.remove(&key).filter(|req| {
                        req.capability() == kind
                            && digest.as_ref().is_none_or(|d| *d == request_digest(req))
                    });
                    let Some(req) = same else {
                        tracing::error!(
                            request = name,
                            key = %key,
                            "made again, a request differs from the one asked (or is not made): \
                             the code before the suspension point is not deterministic"
                        );
                        return Err(errors::internal(format!(
                            "{capital} `{name}` could not ask for its missing input `{key}` again"
                        )));
                    };
                    req
                }
            };
            requests.insert(key, req);
        }
        self.reask_result(&token, requests, caps)
            .map(Concluded::InputRequired)
    }

    /// Turns the step's outcome into the request's: a completed value, a sealed
    /// `input_required` result, or the code's error.
    pub(crate) fn conclude<R>(
        &self,
        t: &Target<'_>,
        principal: &Principal,
        caps: &ClientCapabilities,
        run: Box<Run>,
        outcome: Result<Step<R>, ToolError>,
    ) -> Result<Concluded<R>, ErrorObject> {
        let Run {
            cx,
            round,
            args_digest,
            resumed,
            reask,
            ..
        } = *run;
        if let Some((token, pending)) = reask {
            return self.conclude_reask(t, caps, cx, token, pending, outcome);
        }
        match outcome {
            Ok(Step::Complete(value)) => Ok(Concluded::Complete { value, resumed }),
            Ok(Step::Suspend { state }) => {
                let binding = Binding {
                    principal,
                    method: t.method,
                    tool: t.name,
                    args_digest,
                };
                let detached = cx.is_detached();
                self.suspend(t, &binding, caps, cx, round, state)
                    .map(if detached {
                        Concluded::Detached
                    } else {
                        Concluded::InputRequired
                    })
            }
            Err(e) => Ok(Concluded::Failed(e)),
        }
    }

    /// -32602 when one answer, or all of them together, exceed the configured caps.
    pub(crate) fn check_answer_sizes<'a>(
        &self,
        answers: impl Iterator<Item = (&'a str, AnswerText<'a>)>,
    ) -> Result<(), ErrorObject> {
        let max_one = self.max_answer_bytes;
        let max_total = self.max_answers_total_bytes;
        let mut total = 0usize;
        for (key, answer) in answers {
            let len = match answer {
                AnswerText::Tree(v) => json_len_capped(v, max_one),
                AnswerText::Text(raw) => text::compact_len(raw),
            };
            if len > max_one {
                return Err(invalid_params(format!(
                    "inputResponses[\"{key}\"] is too large: more than {max_one} bytes of JSON"
                )));
            }
            total = total.saturating_add(len);
            if total > max_total {
                return Err(invalid_params(format!(
                    "inputResponses are too large: more than {max_total} bytes of JSON together"
                )));
            }
        }
        Ok(())
    }

    fn suspend(
        &self,
        t: &Target<'_>,
        binding: &Binding<'_>,
        caps: &ClientCapabilities,
        mut cx: ToolContext,
        round: u32,
        state: Box<RawValue>,
    ) -> Result<Suspension, ErrorObject> {
        let name = t.name;
        let noun = t.noun;
        let capital = Capitalized(noun);
        let outgoing = cx.take_outgoing();
        if round >= t.rounds.max_rounds {
            tracing::error!(
                request = name,
                max_rounds = t.rounds.max_rounds,
                "asked for input beyond the maximum number of rounds"
            );
            return Err(errors::internal(format!(
                "{capital} `{name}` exceeded its maximum of {} input rounds",
                t.rounds.max_rounds
            )));
        }
        // The tool declared the capability and the client declared it too, but not in the
        // mode asked for (form vs URL elicitation): the client lacks a capability.
        let declared = outgoing
            .values()
            .all(|r| t.rounds.capabilities.contains(r.capability()));
        if declared && let Some(missing) = errors::capabilities_for(outgoing.values(), caps) {
            return Err(errors::missing_capability(missing));
        }
        for (key, req) in &outgoing {
            if !req.allowed_by(caps) {
                tracing::error!(
                    request = name,
                    key = %key,
                    method = req.method(),
                    "requested input the client did not declare a capability for"
                );
                return Err(errors::internal(format!(
                    "{capital} `{name}` requested `{}` (`{key}`) but the client did not declare the needed `{}` capability",
                    req.method(),
                    req.capability().as_str()
                )));
            }
        }
        let journal_on = t.rounds.journal;
        let pending = outgoing
            .iter()
            .map(|(k, r)| {
                (
                    k.as_str(),
                    Pending::keep(r, cx.is_regenerable(k), journal_on),
                )
            })
            .collect();
        let (journal, used) = match cx.take_journal() {
            Some((j, u)) => (Some(j), u),
            None => (None, BTreeSet::new()),
        };
        let once = if t.rounds.once {
            let id = crate::ledger::new_id().map_err(|e| {
                errors::internal(format!("{capital} `{name}` could not save its state: {e}"))
            })?;
            let config = self.sealer.config();
            let ttl = t.rounds.state_ttl.unwrap_or(config.ttl).min(config.max_ttl);
            let secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
            Some(Once {
                id,
                expires: self.sealer.now_unix().saturating_add(secs),
            })
        } else {
            None
        };
        let out = PayloadOut {
            state: &state,
            pending,
            journal: journal.as_ref(),
            used: &used,
            once,
        };
        let payload = serde_json::to_vec(&out).map_err(|e| {
            tracing::error!(request = name, category = ?e.classify(), "could not serialize the state");
            errors::internal(format!("{capital} `{name}` could not save its state"))
        })?;
        let span = tracing::info_span!(
            target: "mcp_tool_runtime::rounds",
            "mcp_tool.state.seal",
            mcp_tool.state.bytes = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let sealed = span.in_scope(|| {
            self.sealer.seal_json(
                binding,
                round.saturating_add(1),
                &t.rounds.layout,
                &payload,
                t.rounds.state_ttl,
                crate::telemetry::carried_for_seal().as_deref(),
            )
        });
        match &sealed {
            Ok(token) => {
                span.record(
                    "mcp_tool.state.bytes",
                    i64::try_from(token.len()).unwrap_or(i64::MAX),
                );
                metrics::state_size(name, token.len());
            }
            Err(_) => crate::telemetry::failed(&span, "seal_failed"),
        }
        drop(span);
        let token = sealed
            .map_err(|e| match e {
                SealError::Oversize { len, max } | SealError::PayloadTooLarge { len, max } => {
                    // Sizes only: the state holds the tool's data and the client's answers.
                    tracing::error!(
                        request = name,
                        token_bytes = len,
                        max_bytes = max,
                        state_bytes = state.get().len(),
                        pending_bytes = serde_json::to_vec(&out.pending).map_or(0, |v| v.len()),
                        journal_bytes = serde_json::to_vec(&out.journal).map_or(0, |v| v.len()),
                        "requestState too large to seal"
                    );
                    errors::internal(format!(
                        "{capital} `{name}` could not save its state: {len} bytes exceed the limit of {max}"
                    ))
                }
                e => {
                    tracing::error!(request = name, error = %e, "could not seal requestState");
                    errors::internal(format!("{capital} `{name}` could not save its state"))
                }
            })?;
        drop(out);
        Ok(Suspension {
            requests: outgoing,
            token,
        })
    }
}

/// A noun written with a capital first letter (for error messages: nothing is made until
/// one is written).
#[derive(Clone, Copy)]
struct Capitalized<'a>(&'a str);

impl std::fmt::Display for Capitalized<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut c = self.0.chars();
        if let Some(first) = c.next() {
            for u in first.to_uppercase() {
                std::fmt::Write::write_char(f, u)?;
            }
            f.write_str(c.as_str())?;
        }
        Ok(())
    }
}

/// An answer whose size [`Engine::check_answer_sizes`] bounds: as a tree (a task's stored
/// answers) or as the text it was sent as (a request's), measured as compact JSON.
pub(crate) enum AnswerText<'a> {
    /// A tree.
    Tree(&'a Value),
    /// JSON text.
    Text(&'a serde_json::value::RawValue),
}

/// The length of `v` as compact JSON, counting no further than just past `cap` (so a
/// huge value costs at most `cap` bytes of work): a result above `cap` means "too large".
fn json_len_capped(v: &Value, cap: usize) -> usize {
    struct Count {
        len: usize,
        cap: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.len = self.len.saturating_add(buf.len());
            if self.len > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { len: 0, cap };
    // The only error is the cap (a `Value` always serializes), and then `len > cap`.
    let _ = serde_json::to_writer(&mut count, v);
    count.len
}
