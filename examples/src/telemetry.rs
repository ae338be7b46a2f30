//! `serve`'s telemetry: the log and OTLP export of spans (the crate `mcp-tool-otel`,
//! configured by the `OTEL_*` variables) as one `tracing` subscriber, and `--metrics ADDR`,
//! a Prometheus scrape endpoint at `/metrics` rendering the runtime's metrics
//! (`mcp_tool_runtime::telemetry::metrics`).

use std::net::SocketAddr;

use mcp_tool_otel::OtlpGuard;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use mcp_tool_runtime::telemetry::metrics as m;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Installs the process's subscriber: the log on stderr (`RUST_LOG` filters it, `info` by
/// default) and, when the `OTEL_*` variables configure it, OTLP export of the runtime's
/// spans. The guard sends the last spans when shut down or dropped.
///
/// # Errors
/// When the `OTEL_*` variables are set to something unusable.
pub fn init_tracing() -> Result<Option<OtlpGuard>, String> {
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        );
    let (spans, guard) = mcp_tool_otel::layer().map_err(|e| e.to_string())?.unzip();
    let exporting = guard.is_some();
    tracing_subscriber::registry().with(log).with(spans).init();
    if exporting {
        tracing::info!("exporting spans over OTLP");
    }
    Ok(guard)
}

/// Histogram buckets of the operation durations, in seconds.
const DURATION_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Buckets of the rounds of a completed call.
const ROUND_BUCKETS: &[f64] = &[1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 16.0, 32.0];
/// Buckets of sealed state sizes, in bytes.
const SIZE_BUCKETS: &[f64] = &[
    128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 65536.0,
];

/// Installs the Prometheus recorder as the process's `metrics` recorder; the handle
/// renders what it holds.
///
/// # Errors
/// When a recorder is installed already, or the buckets are refused.
pub fn install_prometheus() -> Result<PrometheusHandle, String> {
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(m::OPERATION_DURATION.into()),
            DURATION_BUCKETS,
        )
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(m::CALL_ROUNDS.into()), ROUND_BUCKETS))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Full(m::STATE_SIZE.into()), SIZE_BUCKETS))
        .map_err(|e| format!("metrics buckets: {e}"))?;
    let recorder = builder.build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(|e| format!("metrics recorder: {e}"))?;
    // Series that exist before the first event, so that a scrape shows them at zero.
    metrics::gauge!(m::LEGACY_SESSIONS).set(0.0);
    Ok(handle)
}

/// Serves `GET /metrics` (Prometheus text format 0.0.4) at `addr`; the address bound
/// (port 0 picks one).
///
/// # Errors
/// When the recorder cannot be installed or `addr` cannot be bound.
pub async fn serve_metrics(addr: SocketAddr) -> Result<SocketAddr, String> {
    let handle = install_prometheus()?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let handle = handle.clone();
            async move {
                // Upkeep drains the histograms' pending samples before they are rendered.
                handle.run_upkeep();
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    handle.render(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--metrics {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("--metrics {addr}: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the metrics endpoint stopped");
        }
    });
    Ok(bound)
}
