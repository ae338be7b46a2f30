//! The trace context of one request (a task-local while the server handles it) and of one
//! multi-round call (the token's trace segment): with the feature `otel`, the server span's
//! OpenTelemetry parent (the client's `traceparent`, else the call's first round), its link
//! to the first round and its ids, through tracing-opentelemetry; the call id; the round.

use std::borrow::Cow;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tracing::field::Empty;

use crate::protocol::errors::for_log;

/// The trace context a multi-round call carries from round to round: the trace id and the
/// span id of its first round's server span, when OpenTelemetry sampled that span. The
/// call id is the first round's span id, the round index is the envelope's own. Kept in the
/// token's trace segment (see [`crate::seal`]) as base64url: 32 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTrace {
    /// The trace id of the first round.
    pub trace_id: [u8; 16],
    /// The span id of the first round's server span.
    pub span_id: [u8; 8],
}

impl CallTrace {
    /// The form kept in a token: base64url (no padding) of the trace id, then the span id.
    pub fn encode(&self) -> String {
        let mut raw = [0u8; 24];
        raw[..16].copy_from_slice(&self.trace_id);
        raw[16..].copy_from_slice(&self.span_id);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// Reads [`encode`](Self::encode)'s form; `None` for anything else (all-zero ids too).
    pub fn decode(s: &str) -> Option<CallTrace> {
        if s.len() != 32 {
            return None;
        }
        let mut raw = [0u8; 24];
        if URL_SAFE_NO_PAD.decode_slice(s, &mut raw).ok()? != 24 {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        trace_id.copy_from_slice(&raw[..16]);
        span_id.copy_from_slice(&raw[16..]);
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(CallTrace { trace_id, span_id })
    }

    /// The call id: the first round's span id, 16 lowercase hex digits.
    pub fn call_id(&self) -> String {
        format!("{:016x}", u64::from_be_bytes(self.span_id))
    }
}

/// The trace context of the request being handled (a task-local while its method runs).
pub(crate) struct RequestTrace {
    span: tracing::Span,
    /// This request's server span, when OpenTelemetry sampled it (its ids): only then are
    /// ids recorded and a first round's trace context sealed into its state.
    own: Option<CallTrace>,
    /// The call's trace context, once known: carried by the state, or this first round's.
    call: Cell<Option<CallTrace>>,
    /// The round index, once known (`tools/call`, `prompts/get`, `resources/read`).
    round: Cell<Option<u32>>,
}

tokio::task_local! {
    static REQUEST: RequestTrace;
}

/// Client-chosen values that go into attributes (ids, names, versions), as they go into the
/// log: escaped and cut by [`for_log`] (an attribute is also written into every log line of
/// the span's events).
fn bounded(s: &str) -> Cow<'_, str> {
    for_log(s)
}

/// The trace segment of the `requestState` in `params`, read without opening the state
/// (an altered one makes the open fail; until then it only places the span in a trace, as a
/// client's `traceparent` would).
fn carried_by(params: Option<&crate::protocol::text::ParamsIn<'_>>) -> Option<CallTrace> {
    // The raw JSON string: a token has nothing to escape (one that has is not ours).
    let raw = params?.round.state?.get();
    let token = raw.strip_prefix('"')?.strip_suffix('"')?;
    CallTrace::decode(crate::seal::peek_trace(token)?)
}

/// The server span of one request (disabled, and nothing else made, when no subscriber
/// wants it), and its trace context.
pub(crate) fn server_span(
    method: &str,
    id: &crate::protocol::RequestId,
    params: Option<&crate::protocol::text::ParamsIn<'_>>,
) -> (tracing::Span, Option<RequestTrace>) {
    let span = tracing::info_span!(
        target: "mcp_tool_runtime::server",
        "mcp.server",
        otel.name = Empty,
        otel.kind = "server",
        mcp.method.name = &*bounded(method),
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = Empty,
        mcp.protocol.version = Empty,
        error.type = Empty,
        trace_id = Empty,
        span_id = Empty,
        parent_span_id = Empty,
        tracestate = Empty,
        mcp_tool.call.id = Empty,
        mcp_tool.round = Empty,
        link.trace_id = Empty,
        link.span_id = Empty,
    );
    let carried = carried_by(params);
    // A span is also made (not disabled) on a thread without a subscriber while another
    // thread's subscriber wants it: that is no subscriber either.
    let enabled = !span.is_disabled()
        && !tracing::dispatcher::get_default(|d| d.is::<tracing::subscriber::NoSubscriber>());
    if !enabled {
        // Metrics need the round index even when no subscriber wants the span; a state's
        // trace context passes through to the next round.
        let trace = (cfg!(feature = "metrics") || carried.is_some()).then(|| RequestTrace {
            span: span.clone(),
            own: None,
            call: Cell::new(None),
            round: Cell::new(None),
        });
        return (span, trace);
    }
    let target = match method {
        "tools/call" => params.and_then(|p| p.name()).inspect(|n| {
            span.record("gen_ai.tool.name", &*bounded(n));
        }),
        "prompts/get" => params.and_then(|p| p.name()).inspect(|n| {
            span.record("gen_ai.prompt.name", &*bounded(n));
        }),
        "resources/read" => params.and_then(|p| p.uri()).inspect(|u| {
            span.record("mcp.resource.uri", &*bounded(u));
        }),
        _ => None,
    };
    match target {
        Some(t) => span.record("otel.name", format!("{} {}", bounded(method), bounded(&t))),
        None => span.record("otel.name", &*bounded(method)),
    };
    let id_text = match id {
        crate::protocol::RequestId::String(s) => bounded(s),
        other => Cow::Owned(other.to_string()),
    };
    span.record("jsonrpc.request.id", &*id_text);
    let meta = params.and_then(|p| p.meta.object());
    if let Some(v) = meta
        .and_then(|m| m.version)
        .and_then(crate::protocol::text::string)
    {
        span.record("mcp.protocol.version", &*bounded(&v));
    }
    #[cfg(feature = "otel")]
    let own = otel::start(&span, meta, carried);
    #[cfg(not(feature = "otel"))]
    let own = None;
    let trace = RequestTrace {
        span: span.clone(),
        own,
        call: Cell::new(None),
        round: Cell::new(None),
    };
    (span, Some(trace))
}

/// The server span's OpenTelemetry context, through tracing-opentelemetry's layer (none
/// installed: the span has no OpenTelemetry context, and no ids are recorded).
#[cfg(feature = "otel")]
mod otel {
    use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::{CallTrace, bounded};
    use crate::protocol::text::{MetaIn, string};

    /// A request's `_meta` as the W3C propagator reads it.
    struct Meta<'a> {
        traceparent: &'a str,
        tracestate: Option<&'a str>,
    }

    impl Extractor for Meta<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => Some(self.traceparent),
                "tracestate" => self.tracestate,
                _ => None,
            }
        }

        fn keys(&self) -> Vec<&str> {
            vec!["traceparent", "tracestate"]
        }
    }

    /// Sets `span`'s parent (the client's `traceparent`, else the call's first round
    /// `carried` by the state) and its link to the first round, then starts it: its ids
    /// when the SDK's sampler samples it, recorded as fields too (for the log).
    pub(super) fn start(
        span: &tracing::Span,
        meta: Option<&MetaIn<'_>>,
        carried: Option<CallTrace>,
    ) -> Option<CallTrace> {
        let traceparent = meta.and_then(|m| m.traceparent).and_then(string);
        let tracestate = meta.and_then(|m| m.tracestate).and_then(string);
        let client = traceparent
            .as_deref()
            .map(|traceparent| {
                TraceContextPropagator::new().extract(&Meta {
                    traceparent,
                    tracestate: tracestate.as_deref(),
                })
            })
            .filter(|cx| cx.span().span_context().is_valid());
        let first = carried.map(|c| {
            SpanContext::new(
                TraceId::from_bytes(c.trace_id),
                SpanId::from_bytes(c.span_id),
                TraceFlags::SAMPLED,
                true,
                TraceState::default(),
            )
        });
        let parent = match (&client, &first) {
            (Some(cx), _) => Some(cx.clone()),
            (None, Some(sc)) => {
                Some(opentelemetry::Context::new().with_remote_span_context(sc.clone()))
            }
            (None, None) => None,
        };
        if let Some(parent) = &parent {
            // Only fails without the layer (then nothing is exported either).
            let _ = span.set_parent(parent.clone());
        }
        if let Some(first) = &first {
            span.add_link(first.clone());
        }
        let cx = span.context();
        let own = cx.span().span_context().clone();
        if !own.is_valid() || !own.is_sampled() {
            return None;
        }
        span.record("trace_id", own.trace_id().to_string());
        span.record("span_id", own.span_id().to_string());
        if let Some(parent) = &parent {
            let parent = parent.span().span_context().span_id();
            span.record("parent_span_id", parent.to_string());
        }
        if client.is_some()
            && let Some(state) = &tracestate
        {
            span.record("tracestate", &*bounded(state));
        }
        if let Some(first) = &first {
            span.record("link.trace_id", first.trace_id().to_string());
            span.record("link.span_id", first.span_id().to_string());
        }
        Some(CallTrace {
            trace_id: own.trace_id().to_bytes(),
            span_id: own.span_id().to_bytes(),
        })
    }

    /// Marks `span` failed for OpenTelemetry (status `ERROR`, the error type its message).
    pub(super) fn failed(span: &tracing::Span, kind: &str) {
        span.set_status(opentelemetry::trace::Status::error(kind.to_owned()));
    }
}

/// Runs `fut` with `trace` as the request's trace context (none: no telemetry).
///
/// A future, not an `async fn`: an `async fn` would hold `fut` and `trace` both as its
/// arguments and inside the task-local scope it makes of them, and this future is part of
/// every request's.
pub(crate) fn scope<F: Future>(trace: Option<RequestTrace>, fut: F) -> Scope<F> {
    match trace {
        None => Scope::Plain { fut },
        Some(t) => Scope::Traced {
            fut: REQUEST.scope(t, Finishing { fut }),
        },
    }
}

pin_project_lite::pin_project! {
    /// The future of [`scope`]: the output of the work, and what its trace context learnt.
    #[project = ScopeProjection]
    pub(crate) enum Scope<F> {
        /// No telemetry: the work alone.
        Plain { #[pin] fut: F },
        /// The work inside its trace context's task-local scope.
        Traced { #[pin] fut: tokio::task::futures::TaskLocalFuture<RequestTrace, Finishing<F>> },
    }
}

impl<F: Future> Future for Scope<F> {
    type Output = (F::Output, Option<Finished>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            ScopeProjection::Plain { fut } => fut.poll(cx).map(|out| (out, None)),
            ScopeProjection::Traced { fut } => fut.poll(cx),
        }
    }
}

pin_project_lite::pin_project! {
    /// The work, then what the trace context learnt while it ran (read inside the scope).
    pub(crate) struct Finishing<F> {
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Finishing<F> {
    type Output = (F::Output, Option<Finished>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().fut.poll(cx).map(|out| {
            let done = REQUEST
                .try_with(|t| Finished {
                    round: t.round.get(),
                })
                .ok();
            (out, done)
        })
    }
}

/// What the request's trace context learnt while it ran.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished {
    /// The round index of a round-engine request.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) round: Option<u32>,
}

/// A first round (no state): the call's id is this span's id, the round index 0; the call's
/// trace context is this span's when it is sampled.
pub(crate) fn first_round() {
    let _ = REQUEST.try_with(|t| {
        t.round.set(Some(0));
        t.span.record("mcp_tool.round", 0i64);
        if let Some(own) = t.own {
            t.call.set(Some(own));
            t.span.record("mcp_tool.call.id", own.call_id());
        }
    });
}

/// A later round: the state it opened is round `round` of the call whose trace context is
/// `carried` (the token's trace segment, absent when the first round was not sampled). The
/// span's parent and link were set from the same segment before the state was opened.
pub(crate) fn opened_round(carried: Option<&str>, round: u32) {
    let _ = REQUEST.try_with(|t| {
        t.round.set(Some(round));
        t.span.record("mcp_tool.round", i64::from(round));
        let call = carried.and_then(CallTrace::decode);
        t.call.set(call);
        if let Some(call) = call {
            t.span.record("mcp_tool.call.id", call.call_id());
        }
    });
}

/// The span around one stage of the code of `name` (a tool, prompt or resource template).
pub(crate) fn stage_span(name: &str, round: u32) -> tracing::Span {
    tracing::info_span!(
        target: "mcp_tool_runtime::rounds",
        "mcp_tool.stage",
        mcp_tool.target = &*bounded(name),
        mcp_tool.round = i64::from(round),
    )
}

/// The telemetry member of the state about to be sealed (the call's first round's ids),
/// `None` without telemetry.
pub(crate) fn carried_for_seal() -> Option<String> {
    REQUEST
        .try_with(|t| t.call.get().map(|c| c.encode()))
        .ok()
        .flatten()
}

/// `error.type` of a finished request: the JSON-RPC error code, `tool_error` for a result
/// with `isError: true`, nothing for a success. Recorded on `span`.
pub(crate) fn outcome(
    span: &tracing::Span,
    result: &Result<crate::protocol::Answer, crate::protocol::ErrorObject>,
) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(a) if a.outcome() == crate::protocol::Outcome::IsError => failed(span, "tool_error"),
        Ok(_) => {}
        Err(e) => failed(span, &e.code.to_string()),
    }
}

/// `span` failed with the error type `kind`: its `error.type` field and, with the feature
/// `otel`, its OpenTelemetry status (`ERROR`).
pub(crate) fn failed(span: &tracing::Span, kind: &str) {
    span.record("error.type", kind);
    #[cfg(feature = "otel")]
    otel::failed(span, kind);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_trace_round_trips_in_32_characters() {
        let call = CallTrace {
            trace_id: *b"0123456789abcdef",
            span_id: *b"ghijklmn",
        };
        let s = call.encode();
        assert_eq!(s.len(), 32);
        assert_eq!(CallTrace::decode(&s), Some(call));
        assert_eq!(call.call_id(), "6768696a6b6c6d6e");
        assert_eq!(CallTrace::decode(&s[1..]), None);
        assert_eq!(CallTrace::decode(&format!("{s}A")), None);
        assert_eq!(CallTrace::decode("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"), None);
        assert_eq!(CallTrace::decode(&"A".repeat(32)), None);
    }
}
