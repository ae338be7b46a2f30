//! Issue 22, items 1 and 2: the server span of each request by the OpenTelemetry MCP
//! conventions, its child spans, and one trace per multi-round call across two replicas
//! (the first round's ids travel in the sealed state), with and without a client
//! `traceparent` — and never an argument value, an answer or a state in any field.
//!
//! The ids are the OpenTelemetry SDK's: the subscriber has tracing-opentelemetry's layer
//! over an SDK tracer provider (always on, no exporter) next to the layer that records
//! what the spans' fields say.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tool_runtime::{Principal, Server};
use serde_json::{Value, json};
use support::{VERSION, example_server, sealer};
use tracing::span;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// One span as the subscriber saw it: its name, its fields (the last value recorded), the
/// name of its parent span.
#[derive(Debug, Clone)]
struct Seen {
    id: u64,
    name: String,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Visit<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for Visit<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Visit(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.id().into_u64());
        self.0.lock().unwrap().push(Seen {
            id: id.into_u64(),
            name: attrs.metadata().name().to_owned(),
            parent,
            fields,
        });
    }
    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        // ids are reused after a span closes: the last span with this id is the live one
        if let Some(s) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Visit(&mut s.fields));
        }
    }
}

impl Spans {
    /// Captures every span on this thread until the guard drops.
    fn capture() -> (Spans, tracing::subscriber::DefaultGuard) {
        use opentelemetry::trace::TracerProvider as _;
        let spans = Spans::default();
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        let subscriber = tracing_subscriber::registry()
            .with(otel)
            .with(spans.clone());
        let guard = tracing::subscriber::set_default(subscriber);
        tracing::callsite::rebuild_interest_cache();
        (spans, guard)
    }

    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn f<'a>(s: &'a Seen, k: &str) -> &'a str {
    s.fields
        .get(k)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("span {} has no `{k}`: {:?}", s.name, s.fields))
}

fn servers() -> (Server, Server) {
    let a = example_server(sealer(Duration::from_secs(600), None));
    let b = example_server(sealer(Duration::from_secs(600), None));
    (a, b)
}

fn call(id: u64, args: Value, state: Option<&str>, answers: Value, meta_extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    if let Value::Object(extra) = meta_extra {
        meta.as_object_mut().unwrap().extend(extra);
    }
    let mut params = json!({"name": "get_weather", "arguments": args, "_meta": meta});
    if let Some(s) = state {
        params["requestState"] = json!(s);
        params["inputResponses"] = answers;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

const LOCATION: &str = "Reykjavik-secret-place";
const LOGIN: &str = "octocat-secret-login";

/// Round 1 on `a`, round 2 on `b`; the spans of each round and the state between them.
async fn two_rounds(
    a: &Server,
    b: &Server,
    spans: &Spans,
    meta: Value,
) -> (Vec<Seen>, Vec<Seen>, String) {
    let alice = Principal::named("alice");
    let args = json!({"location": LOCATION});
    let r1 = a
        .handle(call(7, args.clone(), None, json!({}), meta.clone()), &alice)
        .await
        .unwrap();
    let r1 = r1.result_value().unwrap().clone();
    assert_eq!(r1["resultType"], "input_required", "{r1}");
    let state = r1["requestState"].as_str().unwrap().to_owned();
    let first = spans.take();
    let answers = json!({"github_login": {"action": "accept", "content": {"name": LOGIN}}});
    let r2 = b
        .handle(call(8, args, Some(&state), answers, meta), &alice)
        .await
        .unwrap();
    let r2 = r2.result_value().unwrap().clone();
    assert_eq!(r2["resultType"], "complete", "{r2}");
    assert!(r2["content"][0]["text"].as_str().unwrap().contains(LOGIN));
    (first, spans.take(), state)
}

fn server_span(spans: &[Seen]) -> &Seen {
    let mut it = spans.iter().filter(|s| s.name == "mcp.server");
    let s = it.next().expect("a server span");
    assert!(
        it.next().is_none(),
        "one server span per request: {spans:#?}"
    );
    s
}

fn children<'a>(spans: &'a [Seen], parent: &Seen, name: &str) -> Vec<&'a Seen> {
    spans
        .iter()
        .filter(|s| s.name == name && s.parent == Some(parent.id))
        .collect()
}

/// No field of any span holds the argument, the answer or the state (or a piece of it).
fn no_secrets(spans: &[Seen], state: &str) {
    for s in spans {
        for (k, v) in &s.fields {
            for secret in [LOCATION, LOGIN, &state[..40], &state[state.len() - 40..]] {
                assert!(
                    !v.contains(secret),
                    "span {} field {k} = {v:?} leaks",
                    s.name
                );
            }
        }
    }
}

#[tokio::test]
async fn rounds_on_two_replicas_make_one_trace_without_client_context() {
    let (a, b) = servers();
    let (spans, _guard) = Spans::capture();
    let (first, second, state) = two_rounds(&a, &b, &spans, json!({})).await;
    let s1 = server_span(&first);
    let s2 = server_span(&second);
    for (s, id) in [(s1, "7"), (s2, "8")] {
        assert_eq!(f(s, "otel.name"), "tools/call get_weather");
        assert_eq!(f(s, "otel.kind"), "server");
        assert_eq!(f(s, "mcp.method.name"), "tools/call");
        assert_eq!(f(s, "gen_ai.tool.name"), "get_weather");
        assert_eq!(f(s, "jsonrpc.request.id"), id);
        assert_eq!(f(s, "mcp.protocol.version"), VERSION);
        assert!(!s.fields.contains_key("error.type"), "{s:?}");
        assert_eq!(f(s, "trace_id").len(), 32);
        assert_eq!(f(s, "span_id").len(), 16);
    }
    // round 1: a fresh trace, the call id is its span id, round 0, no parent
    assert!(!s1.fields.contains_key("parent_span_id"));
    assert_eq!(f(s1, "mcp_tool.round"), "0");
    assert_eq!(f(s1, "mcp_tool.call.id"), f(s1, "span_id"));
    // round 2 on the other replica: the same trace, a child of round 1, linked to it
    assert_eq!(f(s2, "trace_id"), f(s1, "trace_id"));
    assert_ne!(f(s2, "span_id"), f(s1, "span_id"));
    assert_eq!(f(s2, "parent_span_id"), f(s1, "span_id"));
    assert_eq!(f(s2, "link.trace_id"), f(s1, "trace_id"));
    assert_eq!(f(s2, "link.span_id"), f(s1, "span_id"));
    assert_eq!(f(s2, "mcp_tool.call.id"), f(s1, "mcp_tool.call.id"));
    assert_eq!(f(s2, "mcp_tool.round"), "1");
    // child spans: round 1 runs its stage and seals; round 2 opens, runs, seals nothing
    let stage1 = children(&first, s1, "mcp_tool.stage");
    assert_eq!(stage1.len(), 1, "{first:#?}");
    assert_eq!(f(stage1[0], "mcp_tool.round"), "0");
    let seal = children(&first, s1, "mcp_tool.state.seal");
    assert_eq!(seal.len(), 1, "{first:#?}");
    assert_eq!(f(seal[0], "mcp_tool.state.bytes"), state.len().to_string());
    let open = children(&second, s2, "mcp_tool.state.open");
    assert_eq!(open.len(), 1, "{second:#?}");
    assert_eq!(f(open[0], "mcp_tool.state.bytes"), state.len().to_string());
    assert!(!open[0].fields.contains_key("error.type"));
    assert_eq!(children(&second, s2, "mcp_tool.stage").len(), 1);
    assert!(children(&second, s2, "mcp_tool.state.seal").is_empty());
    no_secrets(&first, &state);
    no_secrets(&second, &state);
}

#[tokio::test]
async fn a_client_traceparent_is_continued_and_rounds_stay_linked() {
    let (a, b) = servers();
    let (spans, _guard) = Spans::capture();
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let meta = json!({
        "traceparent": format!("00-{trace}-00f067aa0ba902b7-01"),
        "tracestate": "vendor=opaque",
    });
    let (first, second, state) = two_rounds(&a, &b, &spans, meta).await;
    let s1 = server_span(&first);
    let s2 = server_span(&second);
    assert_eq!(f(s1, "trace_id"), trace);
    assert_eq!(f(s2, "trace_id"), trace);
    assert_eq!(f(s1, "parent_span_id"), "00f067aa0ba902b7");
    // the client's span is round 2's parent; the first round is its link
    assert_eq!(f(s2, "parent_span_id"), "00f067aa0ba902b7");
    assert_eq!(f(s2, "link.trace_id"), trace);
    assert_eq!(f(s2, "link.span_id"), f(s1, "span_id"));
    assert_eq!(f(s2, "tracestate"), "vendor=opaque");
    assert_eq!(f(s2, "mcp_tool.call.id"), f(s1, "mcp_tool.call.id"));
    no_secrets(&first, &state);
    no_secrets(&second, &state);
}

#[tokio::test]
async fn an_is_error_result_is_tool_error_and_a_refused_state_its_code() {
    let (a, _) = servers();
    let (spans, _guard) = Spans::capture();
    let alice = Principal::named("alice");
    let r = a
        .handle(
            call(1, json!({"location": ""}), None, json!({}), json!({})),
            &alice,
        )
        .await
        .unwrap();
    assert_eq!(r.result_value().unwrap()["isError"], true);
    let got = spans.take();
    assert_eq!(f(server_span(&got), "error.type"), "tool_error");

    // a state altered by one character: refused, the open span says why, the server span
    // carries the JSON-RPC code
    let args = json!({"location": LOCATION});
    let r1 = a
        .handle(call(2, args.clone(), None, json!({}), json!({})), &alice)
        .await
        .unwrap();
    let state = r1.result_value().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bad = state.clone().into_bytes();
    let i = bad.len() - 5;
    bad[i] = if bad[i] == b'A' { b'B' } else { b'A' };
    let bad = String::from_utf8(bad).unwrap();
    spans.take();
    let answers = json!({"github_login": {"action": "accept", "content": {"name": LOGIN}}});
    let r2 = a
        .handle(call(3, args, Some(&bad), answers, json!({})), &alice)
        .await
        .unwrap();
    let code = r2.error_code().expect("refused");
    let got = spans.take();
    let s = server_span(&got);
    assert_eq!(f(s, "error.type"), code.to_string());
    let open = children(&got, s, "mcp_tool.state.open");
    assert_eq!(f(open[0], "error.type"), "tampered");
    no_secrets(&got, &state);
}

/// What the trace context adds to a sealed state: the same round sealed with and without
/// a subscriber (the figure the issue asks for; printed as a FIGURE line).
#[tokio::test]
async fn the_trace_context_adds_a_bounded_number_of_bytes_to_a_state() {
    let (a, _) = servers();
    let alice = Principal::named("alice");
    let args = json!({"location": LOCATION});
    let state = |r: mcp_tool_runtime::protocol::JsonRpcResponse| {
        r.result_value().unwrap()["requestState"]
            .as_str()
            .unwrap()
            .len()
    };
    let off = state(
        a.handle(call(1, args.clone(), None, json!({}), json!({})), &alice)
            .await
            .unwrap(),
    );
    let on = {
        let (_spans, _guard) = Spans::capture();
        state(
            a.handle(call(1, args, None, json!({}), json!({})), &alice)
                .await
                .unwrap(),
        )
    };
    println!(
        "FIGURE telemetry state_bytes_off={off} state_bytes_on={on} added={}",
        on - off
    );
    // 24 bytes of ids: the token's trace segment, `.` and 32 base64url characters
    assert_eq!(on - off, 33, "{on} vs {off}");
}
