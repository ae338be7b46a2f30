//! The server's metrics, through the `metrics` crate's facade (feature `metrics`; without
//! it every function here is empty and compiles away). The application installs a recorder
//! (a Prometheus exporter, say); without one the facade drops the values.
//!
//! Names follow the OpenTelemetry conventions (dots; a Prometheus exporter renders them with
//! underscores). Labels are names, categories and codes, never values the client sent
//! beyond the method and tool names the server knows.

/// Histogram, seconds: the duration of one request, by `mcp.method.name` (a method the
/// server knows, else `_OTHER`), `gen_ai.tool.name` (tools/call; empty otherwise) and
/// `outcome` (`ok`, `input_required`, `tool_error`, or the JSON-RPC error code).
pub const OPERATION_DURATION: &str = "mcp.server.operation.duration";
/// Histogram: the rounds of a completed multi-round call (1 for a call that never asked),
/// by `gen_ai.tool.name`.
pub const CALL_ROUNDS: &str = "mcp.server.call.rounds";
/// Histogram, bytes: the size of a `requestState` when sealed, by `gen_ai.tool.name`.
pub const STATE_SIZE: &str = "mcp.server.request_state.size";
/// Counter: `requestState`s refused, by `reason` (`expired`, `tampered`, `malformed`,
/// `version`, `unknown_key`, `retired_key`, `not_yet_valid`, `ttl_too_long`, `oversize`,
/// `layout`, `other`). `tampered` includes a state presented by another principal or for
/// other arguments: the binding is inside the tag, and the two are indistinguishable.
pub const STATE_REFUSALS: &str = "mcp.server.request_state.refusals";
/// Gauge: legacy (2025-11-25) sessions open.
pub const LEGACY_SESSIONS: &str = "mcp.server.legacy.sessions";
/// Counter: tasks reaching a status, by `status` (`working`, `input_required`,
/// `completed`, `failed`, `cancelled`).
pub const TASKS: &str = "mcp.server.tasks";
/// Counter: ledger claims of single-use rounds, by `result` (`claimed`, `replayed`,
/// `running`, `error`).
pub const LEDGER_CLAIMS: &str = "mcp.server.ledger.claims";
/// Counter: requests refused for lack of capacity, by `reason`: `requests` (HTTP: too many
/// in progress), `request_bodies` (HTTP: too many body bytes in flight), `busy` (a JSON-RPC
/// -32000: a single-use round still running elsewhere, or the task allowance used up),
/// `legacy_sessions` (no room for another session), `legacy_waiting` (no room for another
/// call waiting on a person), `streams` (HTTP: no room for another long-lived stream).
pub const CONCURRENCY_REFUSALS: &str = "mcp.server.concurrency.refusals";

/// Records one request's duration and outcome. The tool's name is shared (the server keeps
/// one per registered tool) and the outcome is a constant but for rare error codes, so the
/// labels copy no string per request.
#[allow(unused_variables)]
pub fn operation(
    method: &'static str,
    tool: Option<std::sync::Arc<str>>,
    outcome: std::borrow::Cow<'static, str>,
    seconds: f64,
) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!(
        OPERATION_DURATION,
        "mcp.method.name" => method,
        "gen_ai.tool.name" => tool.map_or(::metrics::SharedString::const_str(""), Into::into),
        "outcome" => outcome,
    )
    .record(seconds);
}

/// Records the rounds of a completed call of `tool`.
#[allow(unused_variables)]
pub fn call_rounds(tool: std::sync::Arc<str>, rounds: u32) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!(CALL_ROUNDS, "gen_ai.tool.name" => tool).record(f64::from(rounds));
}

/// The `outcome` label of a JSON-RPC error: its code, a constant for the codes the server
/// answers itself.
///
/// ```
/// use mcp_tool_runtime::telemetry::metrics::error_outcome;
/// use std::borrow::Cow;
///
/// assert!(matches!(error_outcome(-32602), Cow::Borrowed("-32602")));
/// assert_eq!(error_outcome(-32099), "-32099");
/// ```
pub fn error_outcome(code: i64) -> std::borrow::Cow<'static, str> {
    std::borrow::Cow::Borrowed(match code {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32000 => "-32000",
        -32001 => "-32001",
        -32002 => "-32002",
        -32042 => "-32042",
        other => return std::borrow::Cow::Owned(other.to_string()),
    })
}

/// Records the size of a state sealed for `tool`.
#[allow(unused_variables)]
pub fn state_size(tool: &str, bytes: usize) {
    #[cfg(feature = "metrics")]
    ::metrics::histogram!(STATE_SIZE, "gen_ai.tool.name" => tool.to_owned()).record(bytes as f64);
}

/// Counts a refused `requestState`.
#[allow(unused_variables)]
pub fn state_refused(reason: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(STATE_REFUSALS, "reason" => reason).increment(1);
}

/// Sets the number of open legacy sessions.
#[allow(unused_variables)]
pub fn legacy_sessions(open: usize) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!(LEGACY_SESSIONS).set(open as f64);
}

/// Counts a task reaching `status`.
#[allow(unused_variables)]
pub fn task(status: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(TASKS, "status" => status).increment(1);
}

/// Counts a ledger claim with its `result`.
#[allow(unused_variables)]
pub fn ledger_claim(result: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(LEDGER_CLAIMS, "result" => result).increment(1);
}

/// Counts a request refused for lack of capacity.
#[allow(unused_variables)]
pub fn concurrency_refused(reason: &'static str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!(CONCURRENCY_REFUSALS, "reason" => reason).increment(1);
}

/// The refusal reason of a state that did not open (a label of [`STATE_REFUSALS`]).
pub fn refusal_reason(e: &crate::seal::SealError) -> &'static str {
    use crate::seal::SealError as E;
    match e {
        E::Expired { .. } => "expired",
        E::BadSignature => "tampered",
        E::Malformed(_) => "malformed",
        E::Version => "version",
        E::UnknownKey { .. } => "unknown_key",
        E::RetiredKey { .. } => "retired_key",
        E::NotYetValid { .. } => "not_yet_valid",
        E::TtlTooLong { .. } => "ttl_too_long",
        E::Oversize { .. } | E::PayloadTooLarge { .. } => "oversize",
        _ => "other",
    }
}

/// When a request started (with the feature `metrics`; nothing without it).
#[derive(Debug, Clone, Copy)]
pub struct Started {
    #[cfg(feature = "metrics")]
    at: std::time::Instant,
}

impl Started {
    /// Seconds since [`start`].
    pub fn elapsed(&self) -> f64 {
        #[cfg(feature = "metrics")]
        {
            self.at.elapsed().as_secs_f64()
        }
        #[cfg(not(feature = "metrics"))]
        {
            0.0
        }
    }
}

/// The start of a request, for [`OPERATION_DURATION`].
pub fn start() -> Started {
    Started {
        #[cfg(feature = "metrics")]
        at: std::time::Instant::now(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_outcome_is_its_code_as_text() {
        for code in [
            -32700, -32600, -32601, -32602, -32603, -32000, -32001, -32002, -32042,
        ] {
            let label = super::error_outcome(code);
            assert!(matches!(label, std::borrow::Cow::Borrowed(_)), "{code}");
            assert_eq!(label, code.to_string());
        }
        for code in [-32003, 7, i64::MIN] {
            assert_eq!(super::error_outcome(code), code.to_string());
        }
    }
}
