//! The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): a `tools/call` from a
//! client that declares the extension may be answered with a task handle
//! (`resultType: "task"`) while the tool's state machine runs in the background.
//!
//! The pieces:
//! - [`TaskSupport`] / [`TaskStart`]: what a tool opts in to (`#[mcp_tool(task = "…")]`);
//! - [`TaskRecord`]: one task as kept in a store: its status, its principal, and the point it
//!   resumes from — the *sealed* `requestState` of the MRTR engine, so any replica holding
//!   the keyring can continue it;
//! - [`store::TaskStore`]: the storage contract (atomic per task: compare-and-swap on a
//!   version), [`memory::MemoryTaskStore`] the embedded default;
//! - `run` (crate-private): the runner that drives a task round by round, renews its lease,
//!   and stops when the task is cancelled; `server::tasks` answers `tasks/get`,
//!   `tasks/update` and `tasks/cancel`.

pub(crate) mod engine;
pub mod memory;
pub mod store;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::principal::{Identity, Principal};
use crate::protocol::{ClientCapabilities, ErrorObject, JsonObject};

pub use memory::MemoryTaskStore;
pub use store::{Counted, StoreError, StoredTask, TaskAllowance, TaskStore};

/// The extension identifier, declared in per-request client capabilities and in the
/// server's `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool runs as a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default).
    #[default]
    Forbidden,
    /// A task when the client declares the extension on the request; a plain call otherwise.
    Optional,
    /// Always a task: a client without the extension gets -32021.
    Required,
}

impl TaskSupport {
    /// The wire name (`execution.taskSupport` in `tools/list`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Where a task-supporting call becomes a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStart {
    /// At the call: the answer to `tools/call` is the task handle (the default).
    #[default]
    Call,
    /// At the first checkpoint after `cx.detach()`: input before it is gathered with
    /// ordinary MRTR rounds on `tools/call` (SEP-2663: "resolve all MRTR exchanges
    /// synchronously before responding with a CreateTaskResult").
    Detach,
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running (or about to run) a round.
    Working,
    /// Waiting for `tasks/update` to answer its `inputRequests`.
    InputRequired,
    /// Done: `result` holds the tool result (also when `isError`).
    Completed,
    /// A JSON-RPC error: `error` holds it.
    Failed,
    /// Cancelled by `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// Completed, failed or cancelled.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// Who runs a working task, until when (a replica renews it while the code runs; an expired
/// lease means the replica died and another may take the task over).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The replica (a random id per server instance).
    pub owner: String,
    /// Unix milliseconds.
    pub until_ms: u64,
}

/// One task as kept in a [`TaskStore`] (serialized as JSON into [`StoredTask::body`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task id (random, 128 bits, base64url).
    pub id: String,
    /// The principal that created it, as its [`Principal::key`] (`None`: anonymous); another
    /// principal sees "not found".
    pub principal: Option<String>,
    /// What the creating request's authenticator established (scopes, client, claims): the
    /// task's rounds run with it, so `cx.principal()` reads the same in a task as in a
    /// direct call. `None` for anonymous (and for records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// The tool.
    pub tool: String,
    /// The call's arguments.
    pub args: Value,
    /// The client capabilities declared on the creating request (every round uses them).
    pub capabilities: ClientCapabilities,
    /// Current status.
    pub status: TaskStatus,
    /// `statusMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Unix milliseconds.
    pub created_at_ms: u64,
    /// Unix milliseconds.
    pub updated_at_ms: u64,
    /// `ttlMs` (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs`.
    pub poll_interval_ms: u64,
    /// The sealed `requestState` the next round resumes from (`None`: from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Outstanding input requests, by wire key (unique for the task's lifetime: the MRTR
    /// key plus `#<phase>`).
    #[serde(default)]
    pub input_requests: JsonObject,
    /// Answers received so far for `input_requests`, by wire key.
    #[serde(default)]
    pub answers: JsonObject,
    /// How many times the task asked for input (the suffix of its wire keys).
    #[serde(default)]
    pub phase: u32,
    /// The final result (`completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// Who runs it while `working`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// How many times a replica started a round of it (a takeover after a lost lease counts).
    #[serde(default)]
    pub attempts: u32,
}

impl TaskRecord {
    /// When the task may be collected (`None`: never).
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|t| self.created_at_ms.saturating_add(t))
    }

    /// Whether `principal` may see it.
    pub fn owned_by(&self, principal: &Principal) -> bool {
        principal_key(principal) == self.principal
    }

    /// The principal it is bound to: the stored identity (scopes, client, claims) when it is
    /// the one the key names, else the identity the key names. `None` when the key is none a
    /// principal makes (a record written into a shared store by something else).
    pub fn principal(&self) -> Option<Principal> {
        match &self.identity {
            Some(identity) if identity_matches(identity, self.principal.as_deref()) => {
                Some(Principal::from_identity(identity.clone()))
            }
            _ => Principal::from_key(self.principal.as_deref()),
        }
    }

    /// The wire form shared by `CreateTaskResult`, `tasks/get` and `notifications/tasks`:
    /// the `Task` fields, and with `detailed` the payload of the status (`inputRequests` still
    /// unanswered, `result`, `error`).
    pub fn to_wire(&self, detailed: bool) -> JsonObject {
        let mut m = JsonObject::new();
        m.insert("taskId".into(), Value::String(self.id.clone()));
        m.insert("status".into(), Value::String(self.status.as_str().into()));
        if let Some(msg) = &self.status_message {
            m.insert("statusMessage".into(), Value::String(msg.clone()));
        }
        m.insert(
            "createdAt".into(),
            Value::String(iso8601(self.created_at_ms)),
        );
        m.insert(
            "lastUpdatedAt".into(),
            Value::String(iso8601(self.updated_at_ms)),
        );
        m.insert(
            "ttlMs".into(),
            self.ttl_ms.map(Value::from).unwrap_or(Value::Null),
        );
        m.insert("pollIntervalMs".into(), Value::from(self.poll_interval_ms));
        if detailed {
            match self.status {
                TaskStatus::InputRequired => {
                    let outstanding: JsonObject = self
                        .input_requests
                        .iter()
                        .filter(|(k, _)| !self.answers.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    m.insert("inputRequests".into(), Value::Object(outstanding));
                }
                TaskStatus::Completed => {
                    if let Some(r) = &self.result {
                        m.insert("result".into(), r.clone());
                    }
                }
                TaskStatus::Failed => {
                    if let Some(e) = &self.error {
                        m.insert("error".into(), e.clone());
                    }
                }
                _ => {}
            }
        }
        m
    }
}

/// How the server keeps tasks.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// `ttlMs` of new tasks (default 1 hour; `None`: unlimited). Expired tasks are "not
    /// found" and collected. Input must still arrive within the sealed state's TTL.
    pub ttl: Option<Duration>,
    /// `pollIntervalMs` suggested to clients (default 500 ms).
    pub poll_interval: Duration,
    /// How long a replica's claim on a working task lasts without renewal (default 10 s;
    /// renewed every third of it while the code runs).
    pub lease: Duration,
    /// How many times a task's round is started before a lost lease marks it `failed`
    /// (default 3: the first run and two takeovers).
    pub max_attempts: u32,
    /// Largest stored record, in bytes of JSON (default 256 KiB; a larger one fails the task).
    pub max_record_bytes: usize,
    /// How often expired tasks are collected, at most (default 30 s).
    pub sweep_interval: Duration,
    /// How many tasks may run in this process at once (default 256); a `tools/call` that
    /// would start one more gets -32000 "Too many tasks are running" (resumes of waiting
    /// tasks are not refused).
    pub max_running: usize,
    /// How many unexpired tasks one principal may have (default 64; all anonymous callers
    /// share one allowance). Counted in the store when it counts
    /// ([`TaskStore::create_counted`]: the SQLite, PostgreSQL and Redis stores), so the
    /// allowance holds across every replica sharing it; otherwise (the in-process stores)
    /// per replica, and a fleet of R replicas allows R times as much. A record is at most
    /// [`max_record_bytes`](Self::max_record_bytes), so one principal makes the store hold at
    /// most `max_tasks_per_principal × max_record_bytes` (16 MiB by default). Beyond it:
    /// -32000 "Too many tasks".
    pub max_tasks_per_principal: usize,
    /// How many unexpired tasks the store may hold for all principals together (default
    /// 4,096: 1 GiB of records at most), counted like
    /// [`max_tasks_per_principal`](Self::max_tasks_per_principal) (in the shared store, or
    /// per replica): bounds what callers with fresh identities can make the store hold, and
    /// the memory of the per-replica allowance ledger.
    pub max_stored_tasks: usize,
}

impl Default for TaskConfig {
    fn default() -> Self {
        TaskConfig {
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(10),
            max_attempts: 3,
            max_record_bytes: 256 * 1024,
            sweep_interval: Duration::from_secs(30),
            max_running: 256,
            max_tasks_per_principal: 64,
            max_stored_tasks: 4096,
        }
    }
}

impl TaskConfig {
    /// Sets the TTL of new tasks.
    pub fn with_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }
    /// Sets the suggested poll interval.
    pub fn with_poll_interval(mut self, d: Duration) -> Self {
        self.poll_interval = d;
        self
    }
    /// Sets the lease length.
    pub fn with_lease(mut self, d: Duration) -> Self {
        self.lease = d;
        self
    }
    /// Sets how many starts a task gets.
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }
    /// Sets the record size bound.
    pub fn with_max_record_bytes(mut self, n: usize) -> Self {
        self.max_record_bytes = n;
        self
    }
    /// Sets how many tasks may run in this process at once.
    pub fn with_max_running(mut self, n: usize) -> Self {
        self.max_running = n;
        self
    }
    /// Sets how many unexpired tasks one principal may create through this replica.
    pub fn with_max_tasks_per_principal(mut self, n: usize) -> Self {
        self.max_tasks_per_principal = n;
        self
    }
    /// Sets how many unexpired tasks this replica creates in all.
    pub fn with_max_stored_tasks(mut self, n: usize) -> Self {
        self.max_stored_tasks = n;
        self
    }
    /// Sets the collection interval.
    pub fn with_sweep_interval(mut self, d: Duration) -> Self {
        self.sweep_interval = d;
        self
    }
}

/// The stored form of a principal.
pub(crate) fn principal_key(p: &Principal) -> Option<String> {
    p.key().map(std::borrow::Cow::into_owned)
}

/// Whether a stored identity is the one the record's key names (a record is one JSON body,
/// but the key is what ownership checks read: never let the two disagree).
fn identity_matches(identity: &Identity, key: Option<&str>) -> bool {
    let p = Principal::from_identity(identity.clone());
    p.key().as_deref() == key
}

/// A new task id: 128 random bits from the OS, base64url without padding.
pub(crate) fn new_task_id() -> String {
    crate::ledger::new_id().expect("the operating system's random number generator")
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

/// `d` in whole milliseconds, `u64::MAX` when it does not fit.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `2026-07-28T10:30:00.123Z` for Unix milliseconds (proleptic Gregorian, UTC).
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let millis = ms % 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{millis:03}Z")
}

/// Whether the request declared the tasks extension.
pub fn declares_tasks(caps: &ClientCapabilities) -> bool {
    caps.extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION))
}

/// -32021 naming the tasks extension.
pub fn missing_tasks_extension() -> ErrorObject {
    let required = JsonObject::from_iter([("extensions".into(), json!({ EXTENSION: {} }))]);
    crate::protocol::errors::missing_capability(required)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_785_234_600_123), "2026-07-28T10:30:00.123Z");
    }

    #[test]
    fn task_ids_are_long_and_distinct() {
        let a = new_task_id();
        let b = new_task_id();
        assert_eq!(a.len(), 22);
        assert_ne!(a, b);
    }
}
