//! The Tasks extension on the server side (SEP-2663): a `tools/call` turned into a task
//! ([`Server::create_task`]), the runner that drives it round by round in the background
//! with the very MRTR engine of `tools/call` (each round resumes from the sealed
//! `requestState` kept in the task record), and `tasks/get`, `tasks/update`, `tasks/cancel`.
//!
//! Replicas: the record is the only shared state. A replica that starts a round holds a
//! lease on the task and renews it while the code runs; when the task is cancelled (or the
//! lease is taken) the renewal notices and the run is dropped, so the code really stops.
//! A replica that finds a working task with an expired lease (its runner died) takes it
//! over and runs the interrupted round again from the last sealed state — a round is the
//! unit of re-execution in MRTR already — up to `max_attempts` starts, then marks it
//! `failed` with the reason.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Era;
use super::catalog::string_member;
use super::{Server, guard, to_value};
use crate::code::{Concluded, Target};
use crate::error::{Mapped, map_tool_error};
use crate::principal::Principal;
use crate::protocol::errors::{self, invalid_params};
use crate::protocol::text::RoundIn;
use crate::protocol::{ClientCapabilities, ErrorObject, InputRequest, JsonObject};
use crate::tasks::engine::{Change, Engine, EngineError, Refused};
use crate::tasks::{TaskRecord, TaskStatus, millis, new_task_id, now_ms, principal_key};

/// The JSON-RPC code of a task refused because `TaskConfig::max_running` tasks run here
/// (the server's "limit exceeded", as the HTTP transport's -32000).
pub const TOO_MANY_TASKS: i64 = -32000;

/// A task id for the log: its first characters only (an id is a handle to the task).
fn short(id: &str) -> std::borrow::Cow<'_, str> {
    errors::for_log(id.get(..6).unwrap_or(""))
}

fn not_found() -> ErrorObject {
    invalid_params("Failed to retrieve task: Task not found")
}

fn store_failure(e: EngineError) -> ErrorObject {
    errors::internal(format!("task store: {e}"))
}

/// What a round of a task ended with.
enum RoundOutcome {
    Done(Result<Concluded<crate::protocol::CallToolResult>, ErrorObject>),
    /// The run must stop: cancelled, taken over, or gone.
    Stopped,
}

impl Server {
    fn engine(&self) -> Result<&Arc<Engine>, ErrorObject> {
        self.inner
            .tasks
            .as_ref()
            .ok_or_else(|| errors::method_not_found("tasks/*"))
    }

    /// Whether tasks are on (a task-supporting tool or a task store).
    pub(crate) fn tasks_enabled(&self) -> bool {
        self.inner.tasks.is_some()
    }

    /// Creates a task for `tool` (resuming from `resume` when a detached call hands over its
    /// sealed state), stores it durably, starts it here, and answers `CreateTaskResult`.
    pub(crate) async fn create_task(
        &self,
        tool: &str,
        args: &serde_json::value::RawValue,
        caps: &ClientCapabilities,
        principal: &Principal,
        resume: Option<String>,
    ) -> Result<Value, ErrorObject> {
        let engine = self.engine()?.clone();
        // the record keeps the arguments as a tree (the stored format)
        let args = crate::protocol::text::tree(args)
            .map_err(|e| invalid_params(format!("tools/call: `arguments` do not parse: {e}")))?;
        if engine.running() >= engine.config.max_running {
            throttled_warn!(
                tool,
                max_running = engine.config.max_running,
                "task refused: too many running"
            );
            return Err(ErrorObject::new(
                TOO_MANY_TASKS,
                "Too many tasks are running; try again later",
            ));
        }
        let now = now_ms();
        let rec = TaskRecord {
            id: new_task_id(),
            principal: principal_key(principal),
            identity: principal.identity().cloned(),
            tool: tool.to_owned(),
            args,
            capabilities: caps.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: engine.config.ttl.map(millis),
            poll_interval_ms: millis(engine.config.poll_interval).max(1),
            resume,
            input_requests: JsonObject::new(),
            answers: JsonObject::new(),
            phase: 0,
            result: None,
            error: None,
            lease: Some(engine.lease_from(now)),
            attempts: 1,
        };
        // Every stored task counts against its principal's allowance and the replica's
        // until it expires: what one caller (or many fresh identities) can make the store
        // hold is bounded, replayed detaching rounds included.
        let owner = rec.principal.as_deref();
        let expires = rec.expires_at_ms();
        let refuse = |refused: Refused| {
            let (limit, message) = match refused {
                Refused::Principal => (
                    engine.config.max_tasks_per_principal,
                    "Too many tasks for this caller; try again when some have expired",
                ),
                Refused::Replica => (
                    engine.config.max_stored_tasks,
                    "Too many tasks are stored; try again later",
                ),
            };
            throttled_warn!(tool, limit, which = ?refused, "task refused: allowance used up");
            ErrorObject::new(TOO_MANY_TASKS, message)
        };
        let failed = |e: EngineError| match e {
            EngineError::TooLarge { len, max } => errors::internal(format!(
                "tool `{tool}`: task record of {len} bytes exceeds {max}"
            )),
            e => store_failure(e),
        };
        // A shared store counts and stores in one step (the allowances hold for the fleet);
        // another is counted here, per replica.
        match engine.create_counted(&rec, now).await.map_err(failed)? {
            Some(Ok(())) => {}
            Some(Err(refused)) => return Err(refuse(refused)),
            None => {
                engine.reserve(owner, expires, now).map_err(refuse)?;
                if let Err(e) = engine.create(&rec).await {
                    engine.release(owner, expires);
                    return Err(failed(e));
                }
            }
        }
        engine.maybe_sweep();
        self.spawn_runner(&rec.id);
        let mut result = rec.to_wire(false);
        result.insert("resultType".into(), Value::String("task".into()));
        result.insert("_meta".into(), Value::Object(self.server_meta()));
        Ok(Value::Object(result))
    }

    /// Runs the task's rounds in the background, here.
    fn spawn_runner(&self, id: &str) {
        let Some(engine) = self.inner.tasks.clone() else {
            return;
        };
        let server = self.clone();
        let task_id = id.to_owned();
        let handle = tokio::spawn(async move {
            server.drive(&task_id).await;
            if let Some(engine) = server.inner.tasks.as_ref() {
                engine.untrack(&task_id);
            }
        });
        engine.track(id, handle.abort_handle());
    }

    /// Rounds until the task leaves `working` (or is no longer ours).
    async fn drive(&self, id: &str) {
        let Some(engine) = self.inner.tasks.clone() else {
            return;
        };
        loop {
            let rec = match engine.load(id).await {
                Ok(Some((rec, _))) => rec,
                Ok(None) => return,
                Err(e) => {
                    tracing::error!(task = %short(id), error = %e, "cannot load task");
                    return;
                }
            };
            let ours = engine.holds(&rec);
            if rec.status != TaskStatus::Working || !ours {
                return;
            }
            let outcome = tokio::select! {
                r = guard::catch_panic(self.task_round(&rec)) => RoundOutcome::Done(match r {
                    Ok(r) => r,
                    Err(panic) => {
                        tracing::error!(task = %short(id), tool = %rec.tool, panic = %errors::for_log_cut(&panic.to_string(), errors::MAX_LOGGED_DETAIL), "panic in a task round");
                        Err(errors::internal("Internal error"))
                    }
                }),
                () = self.keep_lease(&engine, id) => RoundOutcome::Stopped,
            };
            let RoundOutcome::Done(outcome) = outcome else {
                tracing::debug!(
                    task = %short(id),
                    "task run stopped (cancelled or taken over)"
                );
                return;
            };
            let next = self.settle(&engine, &rec, outcome).await;
            match next {
                Ok(Some(r)) if r.status == TaskStatus::Working => continue,
                Ok(_) => return,
                Err(e) => {
                    tracing::error!(task = %short(id), error = %e, "cannot record the task's round");
                    // Record the failure itself if the record was too large.
                    if matches!(e, EngineError::TooLarge { .. }) {
                        let _ = engine
                            .update(id, |r| {
                                if r.status.is_terminal() {
                                    return Change::Keep;
                                }
                                fail(
                                    r,
                                    errors::internal("task record too large"),
                                    "The task's state or result is too large to keep",
                                );
                                Change::Write
                            })
                            .await;
                    }
                    return;
                }
            }
        }
    }

    /// One round of the task: the MRTR engine with the stored state and answers.
    async fn task_round(
        &self,
        rec: &TaskRecord,
    ) -> Result<Concluded<crate::protocol::CallToolResult>, ErrorObject> {
        let Some(reg) = self.catalog().tools.get(&rec.tool).cloned() else {
            return Err(invalid_params(format!("Unknown tool: {}", rec.tool)));
        };
        // A task's state waits as long as the task may (the sealer caps it at its max_ttl);
        // a tool's own longer state TTL stays.
        let mut rounds = reg.rounds.clone();
        if let Some(engine) = &self.inner.tasks {
            let task_ttl = engine.config.ttl.unwrap_or(std::time::Duration::MAX);
            rounds.state_ttl = Some(rounds.state_ttl.map_or(task_ttl, |t| t.max(task_ttl)));
        }
        let target = Target {
            method: "tools/call",
            name: &rec.tool,
            noun: "tool",
            rounds: &rounds,
        };
        let suffix = format!("#{}", rec.phase);
        let answers: JsonObject = rec
            .answers
            .iter()
            .filter_map(|(k, v)| k.strip_suffix(&suffix).map(|k| (k.to_owned(), v.clone())))
            .collect();
        // the round as a request would carry it: the task's answers and its state, as text
        let unwritable = |e: serde_json::Error| {
            errors::internal(format!("a task's round does not serialize: {e}"))
        };
        let responses = serde_json::value::to_raw_value(&answers).map_err(unwritable)?;
        let state = rec
            .resume
            .as_ref()
            .map(serde_json::value::to_raw_value)
            .transpose()
            .map_err(unwritable)?;
        let Some(principal) = rec.principal() else {
            return Err(crate::protocol::errors::internal(
                "the task's stored principal is unreadable",
            ));
        };
        let caps = std::sync::Arc::new(rec.capabilities.clone());
        let era = Era::Modern {
            round: RoundIn {
                responses: Some(&responses),
                state: state.as_deref(),
            },
            caps: &caps,
        };
        let tool: &dyn crate::tool::Tool = &*reg.tool;
        // No progress or log messages from a task (SEP-2663: not supported on tasks).
        let quiet = crate::notify::Notifiers::default();
        let args = serde_json::value::to_raw_value(&rec.args)
            .map_err(|e| errors::internal(format!("the task's arguments: {e}")))?;
        self.execute(&target, &tool, &args, era, &principal, quiet)
            .await
    }

    /// Renews this replica's lease every third of its length while a round runs; returns
    /// when the run must stop (the task was cancelled, finished elsewhere, taken, or gone).
    async fn keep_lease(&self, engine: &Engine, id: &str) {
        let lease = millis(engine.config.lease).max(3);
        let every = std::time::Duration::from_millis(lease / 3);
        loop {
            tokio::time::sleep(every).await;
            let renewed = engine
                .update(id, |r| {
                    let ours = engine.holds(r);
                    if r.status != TaskStatus::Working || !ours {
                        return Change::Keep;
                    }
                    r.lease = Some(engine.lease_from(now_ms()));
                    Change::Write
                })
                .await;
            match renewed {
                Ok(Some(r)) if r.status == TaskStatus::Working && engine.holds(&r) => {}
                Ok(_) => return,
                // A store hiccup: keep running; the lease may lapse and another replica
                // may take over, which the next renewal notices.
                Err(e) => {
                    tracing::warn!(task = %short(id), error = %e, "could not renew the task lease")
                }
            }
        }
    }

    /// Writes the round's outcome into the record (if the task is still ours and working).
    async fn settle(
        &self,
        engine: &Engine,
        started: &TaskRecord,
        outcome: Result<Concluded<crate::protocol::CallToolResult>, ErrorObject>,
    ) -> Result<Option<TaskRecord>, EngineError> {
        let tool = started.tool.clone();
        // What the round produced, in record terms.
        enum Next {
            Complete(Value),
            Failed(ErrorObject),
            Input { token: String, requests: JsonObject },
        }
        let next = match outcome {
            Ok(Concluded::Complete { value, .. }) => Next::Complete(self.complete_value(value)),
            Ok(Concluded::InputRequired(s) | Concluded::Detached(s)) => {
                let requests = match crate::protocol::to_value(&s.requests) {
                    Value::Object(m) => m,
                    _ => JsonObject::new(),
                };
                Next::Input {
                    token: s.token,
                    requests,
                }
            }
            Ok(Concluded::Failed(e)) => match map_tool_error(&tool, e) {
                Mapped::Result(r) => Next::Complete(self.complete_value(r)),
                Mapped::Error(e) => Next::Failed(e),
            },
            Err(e) => Next::Failed(e),
        };
        engine
            .update(&started.id, |r| {
                let ours = engine.holds(r);
                if r.status != TaskStatus::Working || !ours {
                    return Change::Keep;
                }
                let now = now_ms();
                match &next {
                    Next::Complete(result) => {
                        r.status = TaskStatus::Completed;
                        r.status_message = None;
                        r.result = Some(result.clone());
                        clear_run(r);
                    }
                    Next::Failed(e) => fail(r, e.clone(), ""),
                    Next::Input { token, requests } if requests.is_empty() => {
                        // A checkpoint: go on at once from the new state.
                        r.resume = Some(token.clone());
                        r.answers = JsonObject::new();
                        r.input_requests = JsonObject::new();
                        r.lease = Some(engine.lease_from(now));
                    }
                    Next::Input { token, requests } => {
                        r.phase = r.phase.saturating_add(1);
                        let phase = r.phase;
                        r.status = TaskStatus::InputRequired;
                        r.status_message = Some("Waiting for input from the client".into());
                        r.resume = Some(token.clone());
                        r.answers = JsonObject::new();
                        r.input_requests = requests
                            .iter()
                            .map(|(k, v)| (format!("{k}#{phase}"), v.clone()))
                            .collect();
                        r.lease = None;
                    }
                }
                r.updated_at_ms = now;
                Change::Write
            })
            .await
    }

    /// A completed `CallToolResult` as inlined in a task.
    fn complete_value(&self, result: crate::protocol::CallToolResult) -> Value {
        self.complete(result)
    }

    /// The task `taskId` of `params`, for `principal` (-32602 "not found" otherwise; another
    /// principal's task is not found either).
    async fn task_for(
        &self,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<(TaskRecord, String), ErrorObject> {
        let engine = self.engine()?;
        let id = string_member(params, "taskId", "`taskId`")?.to_owned();
        // Ids are 22 base64url characters; anything else is not ours (and not worth a read).
        if id.is_empty() || id.len() > 64 {
            return Err(not_found());
        }
        match engine.load(&id).await {
            Ok(Some((rec, _))) if rec.owned_by(principal) => Ok((rec, id)),
            Ok(_) => Err(not_found()),
            Err(EngineError::Corrupt(e)) => {
                tracing::error!(task = %short(&id), error = %e, "unreadable task record");
                Err(not_found())
            }
            Err(e) => Err(store_failure(e)),
        }
    }

    /// Refuses `principal` unless it holds the scopes the task's tool declares (checked on
    /// `tasks/get`, `tasks/update` and `tasks/cancel`, with each request's credentials, as
    /// on every round of a call). A tool no longer served declares none.
    fn require_task_scopes(
        &self,
        rec: &TaskRecord,
        principal: &Principal,
    ) -> Result<(), ErrorObject> {
        match self.catalog().tools.get(&rec.tool) {
            Some(reg) => self.require_scopes(&reg.info.scopes, principal),
            None => Ok(()),
        }
    }

    /// `tasks/get`: the task as it is, with its status payload.
    pub(crate) async fn tasks_get(
        &self,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<Value, ErrorObject> {
        let (mut rec, id) = self.task_for(params, principal).await?;
        // The task hands out the tool's result (and a lapsed one runs its code again): the
        // tool's scopes are checked with this request's credentials.
        self.require_task_scopes(&rec, principal)?;
        let engine = self.engine()?.clone();
        engine.maybe_sweep();
        let now = now_ms();
        let lapsed = rec.status == TaskStatus::Working
            && rec.lease.as_ref().is_none_or(|l| l.until_ms < now);
        if lapsed {
            rec = self.take_over(&engine, &id).await?.unwrap_or(rec);
        }
        let mut result = rec.to_wire(true);
        result.insert("resultType".into(), Value::String("complete".into()));
        Ok(Value::Object(result))
    }

    /// Claims a working task whose lease expired (its replica stopped): runs it here again
    /// from its last state, or, after `max_attempts` starts, marks it `failed`.
    async fn take_over(
        &self,
        engine: &Arc<Engine>,
        id: &str,
    ) -> Result<Option<TaskRecord>, ErrorObject> {
        let max = engine.config.max_attempts;
        let mut claimed = false;
        let rec = engine
            .update(id, |r| {
                claimed = false;
                let now = now_ms();
                let lapsed = r.status == TaskStatus::Working
                    && r.lease.as_ref().is_none_or(|l| l.until_ms < now);
                if !lapsed {
                    return Change::Keep;
                }
                if r.attempts >= max {
                    let reason = format!(
                        "The server running the task stopped before it finished ({} attempts)",
                        r.attempts
                    );
                    fail(r, errors::internal("task runner lost"), &reason);
                } else {
                    r.attempts = r.attempts.saturating_add(1);
                    r.lease = Some(engine.lease_from(now));
                    claimed = true;
                }
                r.updated_at_ms = now;
                Change::Write
            })
            .await
            .map_err(store_failure)?;
        if claimed {
            tracing::warn!(task = %short(id), "took over a task whose runner stopped");
            self.spawn_runner(id);
        }
        Ok(rec)
    }

    /// `tasks/update`: keeps the answers to outstanding requests; once all are in, the task
    /// goes back to `working` and its next round starts here. Ack only.
    pub(crate) async fn tasks_update(
        &self,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<Value, ErrorObject> {
        let responses = match params.get("inputResponses") {
            Some(Value::Object(r)) => r.clone(),
            None | Some(Value::Null) => JsonObject::new(),
            Some(_) => return Err(invalid_params("`inputResponses` must be an object")),
        };
        let (rec, id) = self.task_for(params, principal).await?;
        // Answers resume the tool's code: its scopes are checked with this request's
        // credentials, as on every round of a call.
        self.require_task_scopes(&rec, principal)?;
        let engine = self.engine()?.clone();
        // Only answers to outstanding requests count; the rest is ignored (SEP-2663).
        let outstanding: Vec<(&String, &Value)> = responses
            .iter()
            .filter(|(k, _)| {
                rec.status == TaskStatus::InputRequired
                    && rec.input_requests.contains_key(*k)
                    && !rec.answers.contains_key(*k)
            })
            .collect();
        self.inner.engine.check_answer_sizes(
            outstanding
                .iter()
                .map(|(k, v)| (k.as_str(), crate::rounds::AnswerText::Tree(v))),
        )?;
        let mut accepted = JsonObject::new();
        for (key, raw) in outstanding {
            let stored = rec.input_requests.get(key).cloned().unwrap_or(Value::Null);
            let req: InputRequest = serde_json::from_value(stored)
                .map_err(|_| errors::internal("stored input request is unreadable"))?;
            req.parse_response(raw.clone()).map_err(|e| {
                invalid_params(format!(
                    "inputResponses[\"{key}\"] is not a valid {}: {e}",
                    req.capability().answer_name()
                ))
            })?;
            accepted.insert(key.clone(), raw.clone());
        }
        if accepted.is_empty() {
            return Ok(ack());
        }
        let phase = rec.phase;
        let mut resumed = false;
        engine
            .update(&id, |r| {
                resumed = false;
                if r.status != TaskStatus::InputRequired || r.phase != phase {
                    return Change::Keep;
                }
                let mut changed = false;
                for (k, v) in &accepted {
                    if r.input_requests.contains_key(k) && !r.answers.contains_key(k) {
                        r.answers.insert(k.clone(), v.clone());
                        changed = true;
                    }
                }
                if !changed {
                    return Change::Keep;
                }
                let now = now_ms();
                if r.input_requests.keys().all(|k| r.answers.contains_key(k)) {
                    r.status = TaskStatus::Working;
                    r.status_message = None;
                    r.attempts = 1;
                    r.lease = Some(engine.lease_from(now));
                    resumed = true;
                }
                r.updated_at_ms = now;
                Change::Write
            })
            .await
            .map_err(|e| match e {
                EngineError::TooLarge { .. } => {
                    invalid_params("inputResponses are too large to keep with the task")
                }
                e => store_failure(e),
            })?;
        if resumed {
            self.spawn_runner(&id);
        }
        Ok(ack())
    }

    /// `tasks/cancel`: a terminal task stays as it is; any other becomes `cancelled` at
    /// once and its code is stopped (here by abort, on another replica at its next lease
    /// renewal). Ack only.
    pub(crate) async fn tasks_cancel(
        &self,
        params: &JsonObject,
        principal: &Principal,
    ) -> Result<Value, ErrorObject> {
        let (rec, id) = self.task_for(params, principal).await?;
        self.require_task_scopes(&rec, principal)?;
        let engine = self.engine()?.clone();
        engine
            .update(&id, |r| {
                if r.status.is_terminal() {
                    return Change::Keep;
                }
                r.status = TaskStatus::Cancelled;
                r.status_message = Some("Cancelled at the client's request".into());
                clear_run(r);
                r.updated_at_ms = now_ms();
                Change::Write
            })
            .await
            .map_err(store_failure)?;
        engine.abort(&id);
        Ok(ack())
    }

    /// How many tasks run in this process (tests, metrics).
    pub fn running_tasks(&self) -> usize {
        self.inner.tasks.as_ref().map_or(0, |e| e.running())
    }
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
fn ack() -> Value {
    json!({ "resultType": "complete" })
}

/// Drops what only a running or waiting task needs.
fn clear_run(r: &mut TaskRecord) {
    r.resume = None;
    r.input_requests = JsonObject::new();
    r.answers = JsonObject::new();
    r.lease = None;
}

/// Marks `r` failed with the JSON-RPC error `e` (`statusMessage`: `reason`, else its message).
fn fail(r: &mut TaskRecord, e: ErrorObject, reason: &str) {
    r.status = TaskStatus::Failed;
    r.status_message = Some(if reason.is_empty() {
        e.message.clone()
    } else {
        reason.to_owned()
    });
    r.error = Some(to_value(&e));
    r.result = None;
    clear_run(r);
    r.updated_at_ms = now_ms();
}
