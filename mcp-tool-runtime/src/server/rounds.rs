//! The multi round-trip engine shared by `tools/call`, `prompts/get` and `resources/read`:
//! open and check the sealed state, re-ask missing answers, validate and bound the answers,
//! build the round's context ([`Server::prepare`]); after the code's step, seal its state into
//! an `input_required` result or hand back the completed value ([`Server::conclude`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::errors::{self, invalid_params, invalid_state};
use super::{Server, to_value};
use crate::context::{Journal, JournalEntry, ToolContext, request_digest};
use crate::legacy::Session;
use crate::notify::{NotificationSink, Notifiers};
use crate::principal::Principal;
use crate::prompt::Prompt;
use crate::protocol::{
    CallToolResult, ClientCapabilities, ErrorObject, GetPromptResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponse, InputResponses, JsonObject, ResourceContents, ResultType,
};
use crate::resource::Resource;
use crate::seal::{Binding, SealError, StateBody};
use crate::tool::{BoxFuture, Rounds, Step, Tool, ToolError};

/// The code behind a request: one round of its state machine ([`Code::step`]), or its
/// function run once in direct mode ([`Code::direct`], legacy sessions). Implemented for
/// tools, prompts, and a resource at a URI.
pub(crate) trait Code<T>: Sync {
    /// One round (see [`Tool::step`](crate::tool::Tool::step)).
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
        state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step<T>, ToolError>>;

    /// The whole function in direct mode, if it has one.
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
    ) -> Option<BoxFuture<'a, Result<T, ToolError>>>;
}

impl Code<CallToolResult> for &dyn Tool {
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
        state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step<CallToolResult>, ToolError>> {
        Tool::step(*self, cx, input, state)
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
    ) -> Option<BoxFuture<'a, Result<CallToolResult, ToolError>>> {
        Tool::direct(*self, cx, input)
    }
}

impl Code<GetPromptResult> for &dyn Prompt {
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
        state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step<GetPromptResult>, ToolError>> {
        Prompt::step(*self, cx, input, state)
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
    ) -> Option<BoxFuture<'a, Result<GetPromptResult, ToolError>>> {
        Prompt::direct(*self, cx, input)
    }
}

/// A resource read at one URI (its input is the template's variables).
pub(crate) struct ReadAt<'r> {
    pub resource: &'r dyn Resource,
    pub uri: &'r str,
}

impl Code<Vec<ResourceContents>> for ReadAt<'_> {
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
        state: Option<Value>,
    ) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>> {
        self.resource.step(cx, self.uri.to_owned(), input, state)
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: Value,
    ) -> Option<BoxFuture<'a, Result<Vec<ResourceContents>, ToolError>>> {
        self.resource.direct(cx, self.uri.to_owned(), input)
    }
}

/// How a request is served: statelessly (modern, its params carry the answers and the
/// sealed state), or inside a legacy session (the code's requests go to the client as real
/// requests while the call waits).
pub(crate) enum Era<'a> {
    /// A 2026-07-28 request: its params and the capabilities its `_meta` declares.
    Modern {
        params: &'a JsonObject,
        caps: &'a ClientCapabilities,
    },
    /// A request of a legacy session; `sink` carries the call's messages to the client.
    Legacy {
        session: &'a Arc<Session>,
        sink: NotificationSink,
    },
}

impl Server {
    /// Runs `code` for target `t` with `input` (a tool's arguments, a prompt's arguments, a
    /// template's variables) in `era`.
    pub(crate) async fn execute<T>(
        &self,
        t: &Target<'_>,
        code: &(dyn Code<T> + '_),
        input: Value,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Concluded<T>, ErrorObject> {
        match era {
            Era::Modern { params, caps } => {
                let mut run = match self.prepare(t, &input, params, caps, principal, notifiers)? {
                    Prepared::Reask(result) => return Ok(Concluded::InputRequired(result)),
                    Prepared::Run(run) => run,
                };
                let state = run.state.take();
                let outcome = code.step(&mut run.cx, input, state).await;
                self.conclude(t, principal, caps, run, outcome)
            }
            Era::Legacy { session, sink } => {
                crate::legacy::run(self, t, code, input, session, sink, notifiers).await
            }
        }
    }
}

/// What a request resumes: the method and name bound into its state, and its settings.
pub(crate) struct Target<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// `tool`, `prompt` or `resource`, for messages.
    pub noun: &'static str,
    /// Its round settings.
    pub rounds: &'a Rounds,
}

/// The outcome of [`Server::prepare`].
pub(crate) enum Prepared {
    /// Answers are missing: the same `input_required` result again, no code runs.
    Reask(Value),
    /// Run one step with this context and state.
    Run(Box<Run>),
}

/// One round ready to run.
pub(crate) struct Run {
    /// The round's context.
    pub cx: ToolContext,
    /// The code's own state from the previous round.
    pub state: Option<Value>,
    round: u32,
    args_digest: [u8; 32],
    resumed: bool,
}

/// The outcome of [`Server::conclude`].
pub(crate) enum Concluded<R> {
    /// The code completed with this value; `resumed` when it took more than one request
    /// (such a result must not be cached).
    Complete { value: R, resumed: bool },
    /// The code suspended: the `input_required` result (state sealed), or the same one
    /// again when answers are missing.
    InputRequired(Value),
    /// The code suspended after `cx.detach()`: the `input_required` result (state sealed)
    /// from which a task starts when the client declared the tasks extension.
    Detached(Value),
    /// The code failed.
    Failed(ToolError),
}

/// What the server keeps in a state between rounds: the tool's state, the requests it is
/// waiting for, and with `journal` the answers so far (each with its request's digest) and
/// the keys requested since the call (re)started.
struct Payload {
    state: Value,
    pending: JsonObject,
    journal: Journal,
    used: BTreeSet<String>,
}

fn parse_payload(v: Value) -> Result<Payload, String> {
    let Value::Object(mut m) = v else {
        return Err("payload is not an object".into());
    };
    let state = m.remove("state").ok_or("payload has no state")?;
    let pending = match m.remove("pending") {
        Some(Value::Object(p)) => p,
        None => JsonObject::new(),
        Some(_) => return Err("payload pending is not an object".into()),
    };
    let journal = match m.remove("journal") {
        None => Journal::new(),
        Some(j) => {
            serde_json::from_value(j).map_err(|e| format!("payload journal: {:?}", e.classify()))?
        }
    };
    let used = match m.remove("used") {
        None => BTreeSet::new(),
        Some(u) => {
            serde_json::from_value(u).map_err(|e| format!("payload used: {:?}", e.classify()))?
        }
    };
    Ok(Payload {
        state,
        pending,
        journal,
        used,
    })
}

impl Server {
    /// Opens the request's state (if any), re-asks missing answers, validates the answers
    /// and builds the round's context. Errors are the JSON-RPC errors of the request.
    pub(crate) fn prepare(
        &self,
        t: &Target<'_>,
        args: &Value,
        params: &JsonObject,
        caps: &ClientCapabilities,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Prepared, ErrorObject> {
        if let Some(missing) = t.rounds.capabilities.missing_from(caps) {
            return Err(errors::missing_capability(missing));
        }
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => JsonObject::new(),
            Some(Value::Object(r)) => r.clone(),
            Some(_) => {
                return Err(invalid_params(format!(
                    "{}: `inputResponses` must be an object",
                    t.method
                )));
            }
        };
        let token = match params.get("requestState") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return Err(invalid_state(&"requestState is not a string")),
        };
        let binding = Binding::new(principal, t.method, t.name, args);

        // Open the state.
        let mut round = 0u32;
        let mut state: Option<Value> = None;
        let mut pending = JsonObject::new();
        let mut journal = Journal::new();
        let mut used_keys = BTreeSet::new();
        if let Some(tok) = token {
            let body = self
                .inner
                .sealer
                .open(&binding, tok)
                .map_err(|e| invalid_state(&format_args!("{} `{}`: {e}", t.noun, t.name)))?;
            let payload = parse_payload(body.payload)
                .map_err(|e| invalid_state(&format_args!("{} `{}`: {e}", t.noun, t.name)))?;
            round = body.round;
            pending = payload.pending;
            journal = payload.journal;
            if body.layout == t.rounds.layout {
                state = Some(payload.state);
                used_keys = payload.used;
            } else if t.rounds.journal {
                tracing::info!(
                    request = t.name,
                    from = %body.layout,
                    to = %t.rounds.layout,
                    "state layout changed: restarting the request from the top with its journal"
                );
                // The run starts again (its keys may be requested again, answered from the
                // journal for identical requests), but the round count goes on: replicas of
                // two builds taking turns cannot reset it, so `max_rounds` holds for the call.
            } else {
                return Err(invalid_state(&format_args!(
                    "{} `{}`: state layout `{}` does not match `{}`",
                    t.noun, t.name, body.layout, t.rounds.layout
                )));
            }
        }

        // Missing answers: ask again, same state, no tool code runs.
        if let (Some(tok), true) = (token, pending.keys().any(|k| !responses.contains_key(k))) {
            let requests: InputRequests = pending
                .iter()
                .map(|(k, v)| {
                    serde_json::from_value::<InputRequest>(v.clone())
                        .map(|r| (k.clone(), r))
                        .map_err(|e| invalid_state(&format_args!("pending request `{k}`: {e}")))
                })
                .collect::<Result<_, _>>()?;
            // Capabilities are per request: never send again what this retry cannot receive.
            if let Some(missing) = errors::capabilities_for(requests.values(), caps) {
                return Err(errors::missing_capability(missing));
            }
            let result = InputRequiredResult {
                result_type: ResultType::InputRequired,
                input_requests: (!requests.is_empty()).then_some(requests),
                request_state: Some(tok.to_owned()),
                meta: Some(self.server_meta()),
            };
            return Ok(Prepared::Reask(to_value(&result)));
        }

        // Bound the answers this round uses (untrusted, and possibly kept in the state)
        // before parsing them: -32602, never a failure to seal on the way out.
        let used = responses
            .iter()
            .filter(|(k, _)| token.is_none() || pending.contains_key(*k));
        self.check_answer_sizes(used)?;

        // Validate the shape of each answer against what it answers; with the journal on,
        // keep it with its request's digest.
        let mut answers = InputResponses::new();
        for (key, raw_req) in &pending {
            let req: InputRequest = serde_json::from_value(raw_req.clone()).map_err(|e| {
                invalid_state(&format_args!("pending request `{key}`: {:?}", e.classify()))
            })?;
            let Some(raw) = responses.get(key) else {
                continue;
            };
            let answer = req.parse_response(raw.clone()).map_err(|e| {
                invalid_params(format!(
                    "inputResponses[\"{key}\"] is not a valid {}: {e}",
                    req.capability().answer_name()
                ))
            })?;
            if t.rounds.journal {
                journal.insert(
                    key.clone(),
                    JournalEntry {
                        digest: request_digest(&req),
                        response: answer.clone(),
                    },
                );
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
                match serde_json::from_value::<InputResponse>(raw.clone()) {
                    Ok(answer) => {
                        answers.insert(key.clone(), answer);
                    }
                    Err(e) => {
                        tracing::debug!(request = t.name, key = %key, error = %e, "ignoring an unsolicited answer of unknown shape")
                    }
                }
            }
        }

        let mut cx = ToolContext::new(principal.clone(), caps.clone())
            .with_round(round)
            .with_state_map(self.inner.state.clone());
        if t.rounds.journal {
            cx = cx.with_journal(journal, used_keys);
        }
        cx = cx.with_answers(answers);
        cx = cx.with_notifiers(notifiers);
        Ok(Prepared::Run(Box::new(Run {
            cx,
            state,
            round,
            args_digest: binding.args_digest,
            resumed: token.is_some(),
        })))
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
            ..
        } = *run;
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
        answers: impl Iterator<Item = (&'a String, &'a Value)>,
    ) -> Result<(), ErrorObject> {
        let max_one = self.inner.max_answer_bytes;
        let max_total = self.inner.max_answers_total_bytes;
        let mut total = 0usize;
        for (key, raw) in answers {
            let len = json_len_capped(raw, max_one);
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
        state: Value,
    ) -> Result<Value, ErrorObject> {
        let name = t.name;
        let noun = t.noun;
        let capital = capitalized(noun);
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
        let payload = match cx.take_journal() {
            Some((journal, used)) => json!({
                "state": state,
                "pending": to_value(&outgoing),
                "journal": to_value(&journal),
                "used": to_value(&used),
            }),
            None => json!({
                "state": state,
                "pending": to_value(&outgoing),
            }),
        };
        let body = StateBody {
            round: round.saturating_add(1),
            layout: t.rounds.layout.clone(),
            payload,
        };
        let token = self
            .inner
            .sealer
            .seal(binding, &body, t.rounds.state_ttl)
            .map_err(|e| match e {
                SealError::Oversize { len, max } => {
                    // Sizes only: the state holds the tool's data and the client's answers.
                    let part = |v: &Value| json_len_capped(v, usize::MAX);
                    tracing::error!(
                        request = name,
                        token_bytes = len,
                        max_bytes = max,
                        state_bytes = part(&body.payload["state"]),
                        pending_bytes = part(&body.payload["pending"]),
                        journal_bytes = part(&body.payload["journal"]),
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
        let result = InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: (!outgoing.is_empty()).then_some(outgoing),
            request_state: Some(token),
            meta: Some(self.server_meta()),
        };
        Ok(to_value(&result))
    }
}

/// `noun` with a capital first letter.
fn capitalized(noun: &str) -> String {
    let mut c = noun.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
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
