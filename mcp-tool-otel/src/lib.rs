//! OTLP export of [`mcp_tool_runtime`]'s spans on the standard OpenTelemetry stack: [`layer`]
//! is tracing-opentelemetry's layer over an `opentelemetry_sdk` tracer provider whose batch
//! processor sends to opentelemetry-otlp's span exporter.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! let otlp = mcp_tool_otel::layer()?;
//! let (spans, guard) = otlp.unzip();
//! tracing_subscriber::registry().with(spans).init();
//! // … serve; then send the last spans:
//! if let Some(guard) = guard {
//!     guard.shutdown()?;
//! }
//! # Ok::<(), mcp_tool_otel::OtlpError>(())
//! ```
//!
//! This crate turns on the runtime's feature `otel`, with which the runtime sets each server
//! span's OpenTelemetry parent through this layer: the client's `_meta` `traceparent`, else
//! the first round of the multi-round call, whose trace context the sealed state carries
//! (one trace per call across replicas). See [`mcp_tool_runtime::telemetry`] for the spans
//! and their attributes.
//!
//! The SDK and the exporter read the standard environment variables: the samplers
//! (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`), the batch processor (`OTEL_BSP_*`),
//! the resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`) and the exporter
//! (`OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`, `…_HEADERS`, `…_TIMEOUT`, `…_PROTOCOL`,
//! `…_COMPRESSION`). What is decided here: export is on only when an endpoint variable is
//! set and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER` without `otlp` says
//! otherwise, and `…_PROTOCOL=grpc` picks the gRPC exporter (feature `grpc`; call [`layer`]
//! inside a Tokio runtime then), anything else OTLP/HTTP.
//!
//! The layer takes the spans of `mcp_tool_runtime` (the runtime emits them) at `INFO` and
//! above, whatever the log's filter says, and no events: a span's fields are its
//! attributes, log lines stay in the log. Its tracer is the instrumentation scope
//! `mcp-tool-runtime`, the library the spans describe (the workspace's crates are released
//! at one version, the scope's version).
//!
//! OTLP/HTTP goes through reqwest 0.12 with rustls on ring, so that `https://` endpoints need
//! no C toolchain (blocking: the batch processor exports on a thread of its own).
//!
//! # Features
//!
//! - `grpc` (not default): OTLP over gRPC too (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`),
//!   opentelemetry-otlp's tonic exporter with TLS on ring and the webpki roots.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::io::Read as _;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{SpanExporter, WithHttpConfig as _};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

/// A configuration that cannot be used (an unsupported protocol, an exporter the SDK
/// refuses), or an export that failed on flush or shutdown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OpenTelemetry: {0}")]
pub struct OtlpError(pub String);

/// The tracer provider of [`layer`]: [`shutdown`](OtlpGuard::shutdown) (or dropping the
/// guard) sends what is queued and stops the batch processor's thread.
#[derive(Debug)]
pub struct OtlpGuard {
    provider: SdkTracerProvider,
}

impl OtlpGuard {
    /// The SDK's tracer provider (for a layer of the application's own spans, say).
    pub fn provider(&self) -> &SdkTracerProvider {
        &self.provider
    }

    /// Sends the spans queued so far.
    ///
    /// # Errors
    /// When the exporter failed or timed out.
    pub fn flush(&self) -> Result<(), OtlpError> {
        self.provider
            .force_flush()
            .map_err(|e| OtlpError(e.to_string()))
    }

    /// Sends what is queued and stops the batch processor.
    ///
    /// # Errors
    /// When the exporter failed or timed out.
    pub fn shutdown(self) -> Result<(), OtlpError> {
        self.provider
            .shutdown()
            .map_err(|e| OtlpError(e.to_string()))
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        // Once shut down, a second shutdown only reports that it was.
        let _ = self.provider.shutdown();
    }
}

/// The layer exporting the runtime's spans as the `OTEL_*` variables say, and the guard of
/// its tracer provider; `None` when export is off (no endpoint, `OTEL_SDK_DISABLED=true`,
/// `OTEL_TRACES_EXPORTER` without `otlp`).
///
/// # Errors
/// When the exporter cannot be made as the variables say.
#[allow(clippy::type_complexity)]
pub fn layer<S>() -> Result<Option<(impl Layer<S>, OtlpGuard)>, OtlpError>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let Some(exporter) = exporter()? else {
        return Ok(None);
    };
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    // The scope is the library whose spans these are, the runtime, not this installer.
    let scope = opentelemetry::InstrumentationScope::builder("mcp-tool-runtime")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let tracer = provider.tracer_with_scope(scope);
    let runtime = tracing_subscriber::filter::filter_fn(|m| {
        let target = m.target();
        m.is_span()
            && *m.level() <= tracing::Level::INFO
            && (target == "mcp_tool_runtime" || target.starts_with("mcp_tool_runtime::"))
    });
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_filter(runtime);
    Ok(Some((layer, OtlpGuard { provider })))
}

/// The process's environment variable `name`, trimmed, when not empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The span exporter the variables ask for; `None` when export is off.
fn exporter() -> Result<Option<SpanExporter>, OtlpError> {
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    if let Some(exporters) = var("OTEL_TRACES_EXPORTER")
        && !exporters.split(',').any(|e| e.trim() == "otlp")
    {
        return Ok(None);
    }
    if var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none()
        && var("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
    {
        return Ok(None);
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let built = if protocol.as_deref() == Some("grpc") {
        grpc()?
    } else {
        SpanExporter::builder()
            .with_http()
            .with_http_client(Blocking::new()?)
            .build()
    };
    built.map(Some).map_err(|e| OtlpError(e.to_string()))
}

/// The gRPC exporter; TLS (rustls on ring, the webpki roots) for an `https://` endpoint.
#[cfg(feature = "grpc")]
fn grpc() -> Result<Result<SpanExporter, opentelemetry_otlp::ExporterBuildError>, OtlpError> {
    use opentelemetry_otlp::WithTonicConfig as _;
    use opentelemetry_otlp::tonic_types::transport::ClientTlsConfig;
    let https = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .is_some_and(|e| e.starts_with("https://"));
    let builder = SpanExporter::builder().with_tonic();
    let builder = if https {
        builder.with_tls_config(ClientTlsConfig::new().with_webpki_roots())
    } else {
        builder
    };
    Ok(builder.build())
}

#[cfg(not(feature = "grpc"))]
fn grpc() -> Result<Result<SpanExporter, opentelemetry_otlp::ExporterBuildError>, OtlpError> {
    Err(OtlpError(
        "OTLP over gRPC needs the feature `grpc` of mcp-tool-otel".to_owned(),
    ))
}

/// Most bytes of a collector's answer read (it is an empty or tiny protobuf message).
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A blocking reqwest client as the exporter's HTTP client.
#[derive(Debug)]
struct Blocking(reqwest::blocking::Client);

impl Blocking {
    /// Made on a thread of its own: reqwest's blocking client refuses to start inside an
    /// async runtime (where an application calls [`layer`]).
    fn new() -> Result<Blocking, OtlpError> {
        std::thread::Builder::new()
            .name("otlp-client".into())
            .spawn(|| {
                reqwest::blocking::Client::builder()
                    .timeout(Duration::from_secs(10))
                    .build()
            })
            .map_err(|e| OtlpError(format!("OTLP HTTP client: {e}")))?
            .join()
            .map_err(|_| OtlpError("OTLP HTTP client: its thread panicked".to_owned()))?
            .map(Blocking)
            .map_err(|e| OtlpError(format!("OTLP HTTP client: {e}")))
    }
}

#[async_trait::async_trait]
impl HttpClient for Blocking {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut read = Vec::new();
        response
            .take(MAX_RESPONSE_BYTES + 1)
            .read_to_end(&mut read)?;
        if read.len() as u64 > MAX_RESPONSE_BYTES {
            return Err("the collector's answer is too long".into());
        }
        let mut out = Response::builder().status(status).body(Bytes::from(read))?;
        *out.headers_mut() = headers;
        Ok(out)
    }
}
