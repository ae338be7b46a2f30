//! The trace context of one request (a task-local while the server handles it) and of one
//! multi-round call (sealed in its state): W3C ids, the client's `traceparent`, the call id.

use std::borrow::Cow;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tracing::field::Empty;

use crate::protocol::errors::for_log;

/// What a sealed state carries for telemetry: the trace id and the span id of the call's
/// first round. The call id is the first round's span id, the round index is the envelope's
/// own. Kept in the state's payload as base64url: 22 characters when the trace is the
/// server's own (its trace id ends with the first round's span id, see `server_span`),
/// 32 when a client's `traceparent` chose the trace id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTrace {
    /// The trace id of the first round.
    pub trace_id: [u8; 16],
    /// The span id of the first round's server span.
    pub span_id: [u8; 8],
}

impl CallTrace {
    /// The form kept in a state: base64url (no padding) of the trace id, then the span id
    /// unless the trace id ends with it.
    pub fn encode(&self) -> String {
        if self.trace_id[8..] == self.span_id {
            return URL_SAFE_NO_PAD.encode(self.trace_id);
        }
        let mut raw = [0u8; 24];
        raw[..16].copy_from_slice(&self.trace_id);
        raw[16..].copy_from_slice(&self.span_id);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// Reads [`encode`](Self::encode)'s form; `None` for anything else.
    pub fn decode(s: &str) -> Option<CallTrace> {
        let want = match s.len() {
            22 => 16,
            32 => 24,
            _ => return None,
        };
        let mut raw = [0u8; 24];
        let n = URL_SAFE_NO_PAD.decode_slice(s, &mut raw).ok()?;
        if n != want {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        trace_id.copy_from_slice(&raw[..16]);
        span_id.copy_from_slice(if want == 16 {
            &raw[8..16]
        } else {
            &raw[16..24]
        });
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(CallTrace { trace_id, span_id })
    }

    /// The call id: the first round's span id, in hex.
    pub fn call_id(&self) -> String {
        hex(&self.span_id)
    }
}

/// A valid W3C `traceparent` (version `00`, or a later version read as `00`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The caller's span id (never all zero).
    pub parent_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Parses a `traceparent` header value; `None` when it is not valid W3C Trace Context.
    pub fn parse(s: &str) -> Option<TraceParent> {
        let b = s.as_bytes();
        // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2
        if b.len() < 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return None;
        }
        let version = unhex::<1>(&b[0..2])?[0];
        // Version ff is invalid; version 00 has exactly this length, a later one may go on
        // after a dash.
        if version == 0xff || (version == 0 && b.len() != 55) || (b.len() > 55 && b[55] != b'-') {
            return None;
        }
        let trace_id = unhex::<16>(&b[3..35])?;
        let parent_id = unhex::<8>(&b[36..52])?;
        let flags = unhex::<1>(&b[53..55])?[0];
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }
}

/// Lowercase hex digits of `bytes` (W3C ids are lowercase; uppercase is refused on read).
fn unhex<const N: usize>(s: &[u8]) -> Option<[u8; N]> {
    if s.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (digit(s[2 * i])? << 4) | digit(s[2 * i + 1])?;
    }
    Some(out)
}

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// A random non-zero-ish 64-bit value (for span ids made by exporters).
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) fn random_id() -> u64 {
    random_u64()
}

/// Random ids: a per-thread xorshift generator seeded from the operating system (ids need
/// to be unique, not secret: they are never used for authorization).
fn random_u64() -> u64 {
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let mut seed = [0u8; 8];
            // Without the OS generator, time and the thread's address still differ per
            // thread and start: ids stay unique enough for telemetry.
            if getrandom::getrandom(&mut seed).is_err() {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                seed = (t ^ (s as *const _ as u64)).to_le_bytes();
            }
            x = u64::from_le_bytes(seed) | 1;
        }
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

fn random_span_id() -> [u8; 8] {
    loop {
        let v = random_u64();
        if v != 0 {
            return v.to_be_bytes();
        }
    }
}

/// A new trace id for a request whose span id is `span_id`: 64 random bits, then the span
/// id (also random), so that a state carries 16 bytes for both (see [`CallTrace`]).
fn new_trace_id(span_id: [u8; 8]) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&random_u64().to_be_bytes());
    id[8..].copy_from_slice(&span_id);
    id
}

/// The trace context of the request being handled (a task-local while its method runs).
pub(crate) struct RequestTrace {
    span: tracing::Span,
    trace_id: Cell<[u8; 16]>,
    span_id: [u8; 8],
    /// Whether a subscriber wants the span (else the ids are zero and never used).
    traced: bool,
    /// Whether the client sent a valid `traceparent` (then the trace is the client's).
    client_parent: bool,
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
    // A span is also made (not disabled) on a thread without a subscriber while another
    // thread's subscriber wants it: that is no subscriber either.
    let traced = !span.is_disabled()
        && !tracing::dispatcher::get_default(|d| d.is::<tracing::subscriber::NoSubscriber>());
    if !traced {
        // Metrics need the round index even when no subscriber wants the span; no ids are
        // made, but a state's trace context passes through to the next round.
        let trace = cfg!(feature = "metrics").then(|| RequestTrace {
            span: span.clone(),
            trace_id: Cell::new([0; 16]),
            span_id: [0; 8],
            traced: false,
            client_parent: false,
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
    let string = crate::protocol::text::string;
    if let Some(v) = meta.and_then(|m| m.version).and_then(string) {
        span.record("mcp.protocol.version", &*bounded(&v));
    }
    let parent = meta
        .and_then(|m| m.traceparent)
        .and_then(string)
        .and_then(|t| TraceParent::parse(&t));
    let span_id = random_span_id();
    let trace_id = match parent {
        Some(p) => {
            span.record("parent_span_id", hex(&p.parent_id));
            if let Some(state) = meta.and_then(|m| m.tracestate).and_then(string) {
                span.record("tracestate", &*bounded(&state));
            }
            p.trace_id
        }
        None => new_trace_id(span_id),
    };
    span.record("trace_id", hex(&trace_id));
    span.record("span_id", hex(&span_id));
    let trace = RequestTrace {
        span: span.clone(),
        trace_id: Cell::new(trace_id),
        span_id,
        traced: true,
        client_parent: parent.is_some(),
        call: Cell::new(None),
        round: Cell::new(None),
    };
    (span, Some(trace))
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

/// A first round (no state): the call's id is this span's id, the round index 0.
pub(crate) fn first_round() {
    let _ = REQUEST.try_with(|t| {
        t.round.set(Some(0));
        if !t.traced {
            return;
        }
        let call = CallTrace {
            trace_id: t.trace_id.get(),
            span_id: t.span_id,
        };
        t.call.set(Some(call));
        t.span.record("mcp_tool.call.id", call.call_id());
        t.span.record("mcp_tool.round", 0u64);
    });
}

/// A later round: the state it opened is round `round` of the call that `carried` (the
/// state's telemetry member, absent from states sealed without telemetry) traces. Links
/// this span to the first round's and, when the client sent no `traceparent`, joins the
/// call's trace as a child of the first round.
pub(crate) fn opened_round(carried: Option<&str>, round: u32) {
    let _ = REQUEST.try_with(|t| {
        t.round.set(Some(round));
        t.span.record("mcp_tool.round", u64::from(round));
        let Some(call) = carried.and_then(CallTrace::decode) else {
            return;
        };
        t.call.set(Some(call));
        if !t.traced {
            return;
        }
        t.span.record("mcp_tool.call.id", call.call_id());
        t.span.record("link.trace_id", hex(&call.trace_id));
        t.span.record("link.span_id", hex(&call.span_id));
        if !t.client_parent {
            t.trace_id.set(call.trace_id);
            t.span.record("trace_id", hex(&call.trace_id));
            t.span.record("parent_span_id", hex(&call.span_id));
        }
    });
}

/// The span around one stage of the code of `name` (a tool, prompt or resource template).
pub(crate) fn stage_span(name: &str, round: u32) -> tracing::Span {
    tracing::info_span!(
        target: "mcp_tool_runtime::rounds",
        "mcp_tool.stage",
        mcp_tool.target = &*bounded(name),
        mcp_tool.round = u64::from(round),
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
        Ok(a) if a.outcome() == crate::protocol::Outcome::IsError => {
            span.record("error.type", "tool_error");
        }
        Ok(_) => {}
        Err(e) => {
            span.record("error.type", e.code.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_by_the_w3c_rules() {
        let ok = TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
            .expect("valid");
        assert_eq!(hex(&ok.trace_id), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(hex(&ok.parent_id), "00f067aa0ba902b7");
        assert_eq!(ok.flags, 1);
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "00_0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-0",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902bé-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
        // A later version may carry more after a dash.
        assert!(
            TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-xyz")
                .is_some()
        );
    }

    #[test]
    fn call_trace_round_trips_in_22_or_32_characters() {
        let span_id = random_span_id();
        let own = CallTrace {
            trace_id: new_trace_id(span_id),
            span_id,
        };
        let s = own.encode();
        assert_eq!(s.len(), 22);
        assert_eq!(CallTrace::decode(&s), Some(own));
        let client = CallTrace {
            trace_id: new_trace_id(random_span_id()),
            span_id,
        };
        let s = client.encode();
        assert_eq!(s.len(), 32);
        assert_eq!(CallTrace::decode(&s), Some(client));
        assert_eq!(client.call_id().len(), 16);
        assert_eq!(CallTrace::decode(&s[1..]), None);
        assert_eq!(CallTrace::decode("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"), None);
        assert_eq!(CallTrace::decode("AAAAAAAAAAAAAAAAAAAAAA"), None);
    }

    #[test]
    fn ids_are_not_zero_and_differ() {
        let a = random_span_id();
        let b = random_span_id();
        assert_ne!(a, [0; 8]);
        assert_ne!(a, b);
    }
}
