//! OTLP/HTTP export (protobuf) of the runtime's spans (feature `otel`): a
//! `tracing-subscriber` [`Layer`](tracing_subscriber::Layer) that turns the spans of
//! [`crate::telemetry`] into OpenTelemetry spans with the runtime's own W3C ids (the server
//! span's `trace_id`, `span_id`, `parent_span_id`, its link to a call's first round), and a
//! background thread that sends them in batches to the collector.
//!
//! Configured by the standard environment variables ([`OtlpConfig::from_env`]):
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (then `/v1/traces`) or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! (as is), `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` (`http/protobuf`, the only one),
//! `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` (`always_on`,
//! `always_off`, `traceidratio`, `parentbased_always_on` (the default),
//! `parentbased_always_off`, `parentbased_traceidratio`) with `OTEL_TRACES_SAMPLER_ARG`,
//! `OTEL_TRACES_EXPORTER` (`none` turns export off), `OTEL_SDK_DISABLED`, and the batch
//! settings `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`,
//! `OTEL_BSP_MAX_QUEUE_SIZE`. Without an endpoint nothing is exported.
//!
//! Only span fields become attributes; events (log lines) are never exported. A span with a
//! client's `traceparent` is taken as sampled by the parent-based samplers (the flags are
//! not kept). Spans are dropped, never blocked on, when the queue is full.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Link, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use prost::Message as _;
use tracing::span;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// A configuration that cannot be used (an unsupported protocol, a sampler or a number
/// that does not parse).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenTelemetry configuration: {0}")]
pub struct OtlpError(pub String);

/// Which traces are exported.
#[derive(Debug, Clone, PartialEq)]
pub enum Sampler {
    /// Every trace.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// A fraction of the traces, decided by the trace id (the same on every replica).
    TraceIdRatio(f64),
    /// A trace continued from a client follows the client (taken as sampled); a new trace
    /// is decided by the inner sampler.
    ParentBased(Box<Sampler>),
}

impl Sampler {
    fn sampled(&self, trace_id: &[u8; 16], remote_parent: bool) -> bool {
        match self {
            Sampler::AlwaysOn => true,
            Sampler::AlwaysOff => false,
            Sampler::TraceIdRatio(r) => {
                let mut low = [0u8; 8];
                low.copy_from_slice(&trace_id[8..]);
                let x = u64::from_be_bytes(low) >> 1;
                (x as f64) < r.clamp(0.0, 1.0) * (1u64 << 63) as f64
            }
            Sampler::ParentBased(root) => remote_parent || root.sampled(trace_id, false),
        }
    }
}

/// Where and how spans are exported.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The full URL spans are posted to (`…/v1/traces`).
    pub endpoint: String,
    /// Extra HTTP headers (authentication of the collector, say).
    pub headers: Vec<(String, String)>,
    /// Timeout of one export.
    pub timeout: Duration,
    /// `service.name` of the resource.
    pub service_name: String,
    /// Other resource attributes.
    pub resource: Vec<(String, String)>,
    /// Which traces are exported.
    pub sampler: Sampler,
    /// Longest wait before a batch is sent.
    pub delay: Duration,
    /// Most spans in one export.
    pub max_batch: usize,
    /// Most spans waiting; more are dropped.
    pub max_queue: usize,
}

impl OtlpConfig {
    /// The configuration of the process's `OTEL_*` environment variables; `None` when
    /// export is off (no endpoint, `OTEL_TRACES_EXPORTER=none`, `OTEL_SDK_DISABLED=true`).
    ///
    /// # Errors
    /// When a variable is set to something unusable.
    pub fn from_env() -> Result<Option<OtlpConfig>, OtlpError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// [`from_env`](Self::from_env) with the variables from `var`.
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>, OtlpError> {
        let get = |k: &str| {
            var(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let either = |specific: &str, general: &str| get(specific).or_else(|| get(general));
        if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if let Some(exporters) = get("OTEL_TRACES_EXPORTER")
            && !exporters.split(',').any(|e| e.trim() == "otlp")
        {
            return Ok(None);
        }
        let endpoint = match (
            get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            get("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(e), _) => e,
            (None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(OtlpError(format!(
                "the OTLP endpoint must be an http:// or https:// URL, not {endpoint:?}"
            )));
        }
        if let Some(p) = either(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ) && p != "http/protobuf"
        {
            return Err(OtlpError(format!(
                "OTLP protocol {p:?} is not supported: use http/protobuf"
            )));
        }
        let headers = either(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        )
        .map(|h| pairs(&h))
        .unwrap_or_default();
        let millis = |specific: &str, general: &str, default: u64| {
            either(specific, general).map_or(Ok(default), |v| {
                v.parse::<u64>()
                    .map_err(|_| OtlpError(format!("{specific}: {v:?} is not milliseconds")))
            })
        };
        let timeout = millis(
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
            10_000,
        )?;
        let delay = millis("OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_SCHEDULE_DELAY", 5_000)?;
        let count = |k: &str, default: u64| millis(k, k, default);
        let max_batch = count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?.max(1);
        let max_queue = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048)?.max(1);
        let mut resource = get("OTEL_RESOURCE_ATTRIBUTES")
            .map(|r| pairs(&r))
            .unwrap_or_default();
        let from_resource = resource
            .iter()
            .position(|(k, _)| k == "service.name")
            .map(|i| resource.remove(i).1);
        let service_name = get("OTEL_SERVICE_NAME")
            .or(from_resource)
            .unwrap_or_else(|| "unknown_service".to_owned());
        let ratio = || -> Result<f64, OtlpError> {
            get("OTEL_TRACES_SAMPLER_ARG").map_or(Ok(1.0), |a| {
                a.parse::<f64>()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| OtlpError(format!("OTEL_TRACES_SAMPLER_ARG {a:?}")))
            })
        };
        let sampler = match get("OTEL_TRACES_SAMPLER").as_deref() {
            None | Some("parentbased_always_on") => {
                Sampler::ParentBased(Box::new(Sampler::AlwaysOn))
            }
            Some("always_on") => Sampler::AlwaysOn,
            Some("always_off") => Sampler::AlwaysOff,
            Some("traceidratio") => Sampler::TraceIdRatio(ratio()?),
            Some("parentbased_always_off") => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
            Some("parentbased_traceidratio") => {
                Sampler::ParentBased(Box::new(Sampler::TraceIdRatio(ratio()?)))
            }
            Some(other) => {
                return Err(OtlpError(format!(
                    "OTEL_TRACES_SAMPLER {other:?} is not supported"
                )));
            }
        };
        Ok(Some(OtlpConfig {
            endpoint,
            headers,
            timeout: Duration::from_millis(timeout),
            service_name,
            resource,
            sampler,
            delay: Duration::from_millis(delay),
            max_batch: usize::try_from(max_batch).unwrap_or(usize::MAX),
            max_queue: usize::try_from(max_queue).unwrap_or(usize::MAX),
        }))
    }
}

/// `k=v,k=v` (W3C baggage-like, as the OTEL_* lists are), values percent-decoded.
fn pairs(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), percent_decode(v.trim())))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

enum Msg {
    Spans(Vec<Span>),
    Flush(mpsc::SyncSender<()>),
    Stop,
}

/// The layer: add it to a `tracing_subscriber::registry()`.
pub struct OtlpLayer {
    tx: mpsc::SyncSender<Msg>,
    sampler: Sampler,
}

/// The export thread: [`shutdown`](OtlpGuard::shutdown) (or dropping the guard) sends what
/// is queued and stops it.
pub struct OtlpGuard {
    tx: mpsc::SyncSender<Msg>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OtlpGuard {
    /// Sends the spans queued so far; waits at most `timeout`.
    pub fn flush(&self, timeout: Duration) {
        let (ack, done) = mpsc::sync_channel(1);
        if self.tx.send(Msg::Flush(ack)).is_ok() {
            let _ = done.recv_timeout(timeout);
        }
    }

    /// Sends what is queued and stops the export thread.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = self.tx.send(Msg::Stop);
            let _ = thread.join();
        }
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The layer and the guard of its export thread, for `config`.
///
/// # Errors
/// When the HTTP client or the thread cannot be made.
pub fn layer(config: OtlpConfig) -> Result<(OtlpLayer, OtlpGuard), OtlpError> {
    let (tx, rx) = mpsc::sync_channel(config.max_queue);
    let mut headers = reqwest::header::HeaderMap::new();
    for (k, v) in &config.headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| OtlpError(format!("OTLP header name {k:?}")))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| OtlpError(format!("OTLP header {k:?}: invalid value")))?;
        headers.insert(name, value);
    }
    let client = reqwest::Client::builder()
        .timeout(config.timeout)
        .default_headers(headers)
        .build()
        .map_err(|e| OtlpError(format!("OTLP HTTP client: {e}")))?;
    let sampler = config.sampler.clone();
    let thread = std::thread::Builder::new()
        .name("otlp-export".into())
        .spawn(move || export_loop(config, client, rx))
        .map_err(|e| OtlpError(format!("OTLP export thread: {e}")))?;
    Ok((
        OtlpLayer {
            tx: tx.clone(),
            sampler,
        },
        OtlpGuard {
            tx,
            thread: Some(thread),
        },
    ))
}

fn export_loop(config: OtlpConfig, client: reqwest::Client, rx: mpsc::Receiver<Msg>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let resource = Resource {
        attributes: std::iter::once(("service.name".to_owned(), config.service_name.clone()))
            .chain(config.resource.iter().cloned())
            .map(|(k, v)| kv(k, any_value::Value::StringValue(v)))
            .collect(),
        ..Default::default()
    };
    let send = |spans: Vec<Span>| {
        if spans.is_empty() {
            return;
        }
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(resource.clone()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "mcp-tool-runtime".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..Default::default()
                    }),
                    spans,
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let body = request.encode_to_vec();
        // The request is made inside the runtime: reqwest arms its timeout on `send`.
        let post = async {
            client
                .post(&config.endpoint)
                .header("content-type", "application/x-protobuf")
                .body(body)
                .send()
                .await
        };
        match rt.block_on(post) {
            Ok(r) if r.status().is_success() => {}
            // Never a span or its attributes in the message: only the status or the error.
            Ok(r) => eprintln!("OTLP export refused: HTTP {}", r.status()),
            Err(e) => eprintln!("OTLP export failed: {e}"),
        }
    };
    let mut batch: Vec<Span> = Vec::new();
    let mut due = std::time::Instant::now() + config.delay;
    loop {
        let wait = due.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(wait) {
            Ok(Msg::Spans(spans)) => {
                batch.extend(spans);
                while batch.len() >= config.max_batch {
                    let rest = batch.split_off(config.max_batch);
                    send(std::mem::replace(&mut batch, rest));
                }
            }
            Ok(Msg::Flush(ack)) => {
                send(std::mem::take(&mut batch));
                let _ = ack.send(());
            }
            Ok(Msg::Stop) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                send(std::mem::take(&mut batch));
                return;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                send(std::mem::take(&mut batch));
                due = std::time::Instant::now() + config.delay;
            }
        }
    }
}

fn kv(key: String, value: any_value::Value) -> KeyValue {
    KeyValue {
        key,
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// What the layer keeps of an open span.
struct Rec {
    name: String,
    kind: SpanKind,
    start: u64,
    attributes: BTreeMap<String, any_value::Value>,
    trace_id: Option<[u8; 16]>,
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    /// Whether `parent` is a remote span (a client's, or the call's first round).
    remote_parent: bool,
    link: (Option<[u8; 16]>, Option<[u8; 8]>),
    trace_state: String,
    error: Option<String>,
    /// Finished descendants, sent with the local root (whose trace id they take).
    done: Vec<Span>,
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

impl Rec {
    fn set(&mut self, key: &str, value: any_value::Value) {
        let text = match &value {
            any_value::Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        };
        match (key, text) {
            ("otel.name", Some(t)) => self.name = t.to_owned(),
            ("otel.kind", Some(t)) => {
                self.kind = match t {
                    "server" => SpanKind::Server,
                    "client" => SpanKind::Client,
                    "producer" => SpanKind::Producer,
                    "consumer" => SpanKind::Consumer,
                    _ => SpanKind::Internal,
                }
            }
            ("trace_id", Some(t)) => self.trace_id = unhex(t),
            ("span_id", Some(t)) => {
                if let Some(id) = unhex(t) {
                    self.span_id = id;
                }
            }
            ("parent_span_id", Some(t)) => {
                self.parent = unhex(t);
                self.remote_parent = self.parent.is_some();
            }
            ("link.trace_id", Some(t)) => self.link.0 = unhex(t),
            ("link.span_id", Some(t)) => self.link.1 = unhex(t),
            ("tracestate", Some(t)) => self.trace_state = t.to_owned(),
            _ => {
                if key == "error.type" {
                    self.error = text.map(str::to_owned).or(Some(String::new()));
                }
                self.attributes.insert(key.to_owned(), value);
            }
        }
    }

    fn finish(self, end: u64) -> (Span, Vec<Span>) {
        let mut links = Vec::new();
        if let (Some(t), Some(s)) = self.link {
            links.push(Link {
                trace_id: t.to_vec(),
                span_id: s.to_vec(),
                ..Default::default()
            });
        }
        let status = self.error.map(|e| Status {
            message: e,
            code: StatusCode::Error as i32,
        });
        let span = Span {
            trace_id: self.trace_id.map(|t| t.to_vec()).unwrap_or_default(),
            span_id: self.span_id.to_vec(),
            trace_state: self.trace_state,
            parent_span_id: self.parent.map(|p| p.to_vec()).unwrap_or_default(),
            name: self.name,
            kind: self.kind as i32,
            start_time_unix_nano: self.start,
            end_time_unix_nano: end,
            attributes: self.attributes.into_iter().map(|(k, v)| kv(k, v)).collect(),
            links,
            status,
            ..Default::default()
        };
        (span, self.done)
    }
}

struct Visit<'a>(&'a mut Rec);

impl tracing::field::Visit for Visit<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.set(
            field.name(),
            any_value::Value::StringValue(value.to_owned()),
        );
    }
    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.0.set(field.name(), any_value::Value::IntValue(value));
    }
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        let v = i64::try_from(value).unwrap_or(i64::MAX);
        self.0.set(field.name(), any_value::Value::IntValue(v));
    }
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.0.set(field.name(), any_value::Value::BoolValue(value));
    }
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.0
            .set(field.name(), any_value::Value::DoubleValue(value));
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.set(
            field.name(),
            any_value::Value::StringValue(format!("{value:?}")),
        );
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    while out == [0u8; N] {
        let mut i = 0;
        while i < N {
            let r = super::context::random_id().to_be_bytes();
            let n = (N - i).min(8);
            out[i..i + n].copy_from_slice(&r[..n]);
            i += n;
        }
    }
    out
}

impl<S> tracing_subscriber::Layer<S> for OtlpLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span
            .parent()
            .and_then(|p| p.extensions().get::<Rec>().map(|r| r.span_id));
        let mut rec = Rec {
            name: attrs.metadata().name().to_owned(),
            kind: SpanKind::Internal,
            start: now_nanos(),
            attributes: BTreeMap::new(),
            trace_id: None,
            span_id: random::<8>(),
            parent,
            remote_parent: false,
            link: (None, None),
            trace_state: String::new(),
            error: None,
            done: Vec::new(),
        };
        attrs.record(&mut Visit(&mut rec));
        span.extensions_mut().insert(rec);
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(rec) = span.extensions_mut().get_mut::<Rec>()
        {
            values.record(&mut Visit(rec));
        }
    }

    fn on_close(&self, id: span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(rec) = span.extensions_mut().remove::<Rec>() else {
            return;
        };
        let (finished, mut done) = rec_finish(rec);
        // A descendant waits for its local root, whose trace id is final only when it ends
        // (a later round learns the call's trace from its state, after its first children).
        if let Some(parent) = span.parent()
            && let Some(prec) = parent.extensions_mut().get_mut::<Rec>()
        {
            prec.done.push(finished.0);
            prec.done.append(&mut done);
            return;
        }
        let (mut root, remote_parent) = finished;
        let trace_id: [u8; 16] = root
            .trace_id
            .as_slice()
            .try_into()
            .unwrap_or_else(|_| random::<16>());
        if !self.sampler.sampled(&trace_id, remote_parent) {
            return;
        }
        root.trace_id = trace_id.to_vec();
        for s in &mut done {
            s.trace_id = trace_id.to_vec();
        }
        done.push(root);
        // Full queue: dropped (telemetry never slows the server down).
        let _ = self.tx.try_send(Msg::Spans(done));
    }
}

fn rec_finish(rec: Rec) -> ((Span, bool), Vec<Span>) {
    let remote = rec.remote_parent;
    let (span, done) = rec.finish(now_nanos());
    ((span, remote), done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<Option<OtlpConfig>, OtlpError> {
        let map: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OtlpConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn the_standard_variables_configure_export() {
        assert!(config(&[]).unwrap().is_none());
        let c = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/"),
            ("OTEL_SERVICE_NAME", "svc"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=other,deployment.environment=prod%20eu",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20x"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(c.service_name, "svc");
        assert_eq!(
            c.resource,
            vec![("deployment.environment".into(), "prod eu".into())]
        );
        assert_eq!(c.headers, vec![("authorization".into(), "Bearer x".into())]);
        assert_eq!(
            c.sampler,
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatio(0.25)))
        );
        let t = config(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2/x"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(t.endpoint, "http://b:2/x");
        assert!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ])
            .is_err()
        );
        assert!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ])
            .unwrap()
            .is_none()
        );
        assert!(
            config(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
                ("OTEL_TRACES_SAMPLER", "sometimes"),
            ])
            .is_err()
        );
    }

    #[test]
    fn ratio_sampling_keeps_about_the_ratio() {
        let s = Sampler::TraceIdRatio(0.25);
        let kept = (0..4000)
            .filter(|_| s.sampled(&random::<16>(), false))
            .count();
        assert!((800..1200).contains(&kept), "{kept}");
        assert!(!Sampler::AlwaysOff.sampled(&random::<16>(), false));
        let pb = Sampler::ParentBased(Box::new(Sampler::AlwaysOff));
        assert!(pb.sampled(&random::<16>(), true));
        assert!(!pb.sampled(&random::<16>(), false));
    }
}
