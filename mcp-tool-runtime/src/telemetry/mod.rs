//! Telemetry of requests: the server span of each request by the OpenTelemetry semantic
//! conventions for MCP, the trace context a multi-round call carries from round to round in
//! its sealed state ([`CallTrace`]), and the metrics ([`metrics`], through the `metrics`
//! crate's facade with the feature `metrics`; no-ops without it).
//!
//! The instrumentation is the `tracing` crate: what is exported, and where, is the
//! subscriber's business. With the feature `otel`, the runtime sets each server span's
//! OpenTelemetry parent and link through tracing-opentelemetry's layer, when the subscriber
//! has one; the crate `mcp-tool-otel` installs that layer with the OTLP exporter. The server
//! span of a request is named [`SERVER_SPAN`]; its fields are the convention's attributes
//! (`mcp.method.name`, `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.resource.uri`,
//! `jsonrpc.request.id`, `mcp.protocol.version`, `error.type`), the span name the
//! convention asks for (`otel.name`, `{mcp.method.name} {target}`), its round index
//! ([`ROUND`]) and, when OpenTelemetry sampled the span, its W3C ids as the SDK made them
//! ([`TRACE_ID`], [`SPAN_ID`], [`PARENT_SPAN_ID`]: for the log), the call id ([`CALL_ID`])
//! and the link to the call's first round ([`LINK_TRACE_ID`], [`LINK_SPAN_ID`]).
//!
//! No field ever carries an argument value, an answer or the contents of a state
//! (docs/SECURITY.md): only names, ids, sizes, counts and error categories.
//!
//! When no subscriber wants the server span (the span is disabled), nothing else is made:
//! the cost is one disabled-span check per request. A state carries a trace context (the
//! token's trace segment) only when OpenTelemetry sampled the call's first round.

mod context;
pub mod metrics;
mod traced_ledger;

pub use context::CallTrace;
pub(crate) use context::{
    Finished, carried_for_seal, failed, first_round, opened_round, outcome, scope, server_span,
    stage_span,
};
pub(crate) use traced_ledger::TracedLedger;

/// Name (target-independent) of the server span of every request.
pub const SERVER_SPAN: &str = "mcp.server";
/// Field: the span name by the conventions, `{mcp.method.name} {target}`.
pub const OTEL_NAME: &str = "otel.name";
/// Field: the trace id, 32 lowercase hex digits (W3C).
pub const TRACE_ID: &str = "trace_id";
/// Field: this span's id, 16 lowercase hex digits (W3C).
pub const SPAN_ID: &str = "span_id";
/// Field: the parent span's id (the client's `traceparent`, or the call's first round).
pub const PARENT_SPAN_ID: &str = "parent_span_id";
/// Field (our namespace): the id of a multi-round call, the same on every round.
pub const CALL_ID: &str = "mcp_tool.call.id";
/// Field (our namespace): the round index of a call (0 for its first request).
pub const ROUND: &str = "mcp_tool.round";
/// Field: the trace id of the call's first round, for a span link.
pub const LINK_TRACE_ID: &str = "link.trace_id";
/// Field: the span id of the call's first round, for a span link.
pub const LINK_SPAN_ID: &str = "link.span_id";
/// Name of the child span that opens a `requestState`.
pub const OPEN_SPAN: &str = "mcp_tool.state.open";
/// Name of the child span that seals a `requestState`.
pub const SEAL_SPAN: &str = "mcp_tool.state.seal";
/// Name of the child span around one stage of the author's code.
pub const STAGE_SPAN: &str = "mcp_tool.stage";
/// Name of the child span around a ledger operation (`mcp_tool.ledger.operation`: claim,
/// complete, release, remove_expired).
pub const LEDGER_SPAN: &str = "mcp_tool.ledger";
