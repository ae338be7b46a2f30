//! A [`Ledger`] that wraps the server's own in a child span per operation
//! (`mcp_tool.ledger`, with `mcp_tool.ledger.operation` and the outcome) and counts claims
//! and replays ([`super::metrics::LEDGER_CLAIMS`]). Ids, principals and outcomes stay out.

use std::sync::Arc;
use std::time::SystemTime;

use tracing::Instrument as _;

use crate::error::BoxFuture;
use crate::ledger::{Claim, Ledger, LedgerError};

/// The server's ledger, instrumented.
pub(crate) struct TracedLedger(pub(crate) Arc<dyn Ledger>);

fn span(operation: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: "mcp_tool_runtime::ledger",
        "mcp_tool.ledger",
        mcp_tool.ledger.operation = operation,
        mcp_tool.ledger.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

fn failed(span: &tracing::Span) {
    super::failed(span, "ledger_error");
}

/// `operation` of the wrapped ledger (started by `call`) in its span, marked failed on an error.
fn traced<'a, T: Send + 'a>(
    operation: &'static str,
    call: impl FnOnce() -> BoxFuture<'a, Result<T, LedgerError>> + Send + 'a,
) -> BoxFuture<'a, Result<T, LedgerError>> {
    Box::pin(
        async move {
            let out = call().await;
            if out.is_err() {
                failed(&tracing::Span::current());
            }
            out
        }
        .instrument(span(operation)),
    )
}

impl Ledger for TracedLedger {
    fn claim<'a>(
        &'a self,
        id: &'a str,
        principal: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        let span = span("claim");
        Box::pin(
            async move {
                let out = self.0.claim(id, principal, expires).await;
                let result = match &out {
                    Ok(Claim::Claimed) => "claimed",
                    Ok(Claim::Done(_)) => "replayed",
                    Ok(Claim::Running) => "running",
                    Err(_) => "error",
                };
                let current = tracing::Span::current();
                current.record("mcp_tool.ledger.result", result);
                if out.is_err() {
                    failed(&current);
                }
                super::metrics::ledger_claim(result);
                out
            }
            .instrument(span),
        )
    }

    fn complete<'a>(
        &'a self,
        id: &'a str,
        outcome: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), LedgerError>> {
        traced("complete", move || self.0.complete(id, outcome))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), LedgerError>> {
        traced("release", move || self.0.release(id))
    }

    fn remove_expired(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, LedgerError>> {
        traced("remove_expired", move || self.0.remove_expired(now))
    }
}
