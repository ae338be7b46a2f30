//! `tools/call` of a single-use tool (`#[mcp_tool(once)]`): claim the state's id in the
//! ledger, run the stage, store its response — or answer a replay with the stored response.
//!
//! The sequence, for a round that opens a state (a first round has no state and nothing to
//! claim: it runs as usual):
//! 1. open the state (seal, binding: another principal gets -32602 here, no claim taken);
//! 2. `claim(id)`: `Done(bytes)` answers those bytes; `Running` waits up to
//!    `OnceConfig::wait` for them, then answers busy (-32000 with `retryAfter`);
//!    `Claimed` goes on; a ledger that fails (a store outage) answers busy too: nothing
//!    ran, a retry is safe;
//! 3. run the stage; 4. `complete(id, response)` — or `release(id)` when the tool returned
//!    an error (it reported that it failed: a retry of the same state runs it again).
//!
//! A stage that never returns (a panic, or the request dropped mid-run) keeps its claim
//! with a stored -32603: whether its effect happened is unknown, so it never runs again.

use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::Server;
use crate::code::{Concluded, Target};
use crate::ledger::{Claim, Ledger};
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::protocol::errors;
use crate::protocol::text::RoundIn;
use crate::protocol::{CallToolResult, ClientCapabilities, ErrorObject};
use crate::rounds::Prepared;
use crate::tool::Tool;

/// Seconds a busy replay is asked to wait.
const RETRY_AFTER_SECS: u64 = 1;
/// Pause between two claims of a replay that waits.
const POLL: Duration = Duration::from_millis(20);

/// A stored outcome: the response's `result` or its `error`.
#[derive(Serialize, Deserialize)]
enum Stored {
    #[serde(rename = "result")]
    Result(Value),
    #[serde(rename = "error")]
    Error(ErrorObject),
}

fn encode(answer: &Result<Value, ErrorObject>) -> Vec<u8> {
    let stored = match answer {
        Ok(v) => Stored::Result(v.clone()),
        Err(e) => Stored::Error(e.clone()),
    };
    // A `Value` and an `ErrorObject` always serialize.
    serde_json::to_vec(&stored).unwrap_or_default()
}

fn decode(bytes: &[u8]) -> Result<Value, ErrorObject> {
    match serde_json::from_slice::<Stored>(bytes) {
        Ok(Stored::Result(v)) => Ok(v),
        Ok(Stored::Error(e)) => Err(e),
        Err(e) => Err(errors::internal(format!(
            "a stored single-use outcome does not parse: {e}"
        ))),
    }
}

/// The outcome kept for a round that never returned, or whose response was too large.
fn lost_outcome() -> Vec<u8> {
    encode(&Err(ErrorObject::new(
        crate::protocol::INTERNAL_ERROR,
        errors::INTERNAL_ERROR_MESSAGE,
    )))
}

/// A claim held while the stage runs. Dropped without [`Held::settle`] (a panic, or the
/// request's future dropped), it keeps the claim with [`lost_outcome`], in a spawned task.
struct Held {
    ledger: Arc<dyn Ledger>,
    id: Option<String>,
}

impl Held {
    /// Stores `outcome`, or with `None` releases the claim.
    async fn settle(mut self, outcome: Option<Vec<u8>>) -> Result<(), crate::ledger::LedgerError> {
        let Some(id) = self.id.take() else {
            return Ok(());
        };
        match outcome {
            Some(bytes) => self.ledger.complete(&id, bytes).await,
            None => self.ledger.release(&id).await,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        tracing::error!(
            "a single-use round did not return (a panic, or its request was dropped): \
             its claim is kept, replays get an internal error"
        );
        let ledger = self.ledger.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Err(e) = ledger.complete(&id, lost_outcome()).await {
                    tracing::error!(error = %e, "could not keep an interrupted single-use claim");
                }
            });
        }
    }
}

impl Server {
    /// A modern `tools/call` round of a single-use tool (see the module's sequence).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call_once(
        &self,
        t: &Target<'_>,
        tool: &dyn Tool,
        args: &RawValue,
        round: RoundIn<'_>,
        caps: &Arc<ClientCapabilities>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Value, ErrorObject> {
        let engine = &self.inner.engine;
        let (digest, args) = crate::rounds::arguments(t.method, args)?;
        let args = &*args;
        let mut run = match engine.prepare(t, digest, round, caps, principal, notifiers)? {
            Prepared::Reask(s) => return Ok(self.suspended(&s)),
            Prepared::Run(run) => run,
        };
        let Some(once) = run.once.take() else {
            // A first round (or a re-asking run): nothing to claim.
            let outcome = run.step(&tool, t.name, args).await;
            return self.call_answer(t.name, engine.conclude(t, principal, caps, run, outcome));
        };
        let ledger = &self.inner.ledger;
        let key = principal.key();
        let expires = UNIX_EPOCH + Duration::from_secs(once.expires);
        let deadline = Instant::now() + self.inner.once.wait;
        loop {
            let claim = ledger
                .claim(&once.id, key.as_deref().unwrap_or(""), expires)
                .await
                .map_err(|e| {
                    // Nothing ran: the client may retry (an outage of a shared store).
                    tracing::warn!(tool = t.name, error = %e, "single-use ledger unavailable");
                    errors::busy(
                        "Server busy: the single-use ledger is unavailable, retry later",
                        RETRY_AFTER_SECS,
                    )
                })?;
            match claim {
                Claim::Claimed => {
                    self.maybe_sweep_ledger();
                    break;
                }
                Claim::Done(bytes) => {
                    tracing::debug!(tool = t.name, "single-use round replayed: stored response");
                    return decode(&bytes);
                }
                Claim::Running => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(errors::busy(
                            "Server busy: this single-use round is still running, retry later",
                            RETRY_AFTER_SECS,
                        ));
                    }
                    tokio::time::sleep(POLL.min(deadline - now)).await;
                }
            }
        }
        let held = Held {
            ledger: ledger.clone(),
            id: Some(once.id),
        };
        let outcome = run.step(&tool, t.name, args).await;
        let failed = outcome.is_err();
        let answer = self.call_answer(t.name, engine.conclude(t, principal, caps, run, outcome));
        let keep = if failed {
            // The tool returned an error: release, a retry of this state runs it again.
            None
        } else {
            let bytes = encode(&answer);
            let max = self.inner.once.max_outcome_bytes;
            Some(if bytes.len() > max {
                tracing::error!(
                    tool = t.name,
                    bytes = bytes.len(),
                    max,
                    "a single-use outcome exceeds the ledger's bound: replays get an internal error"
                );
                lost_outcome()
            } else {
                bytes
            })
        };
        if let Err(e) = held.settle(keep).await {
            // The stage ran; the client gets its answer. Replays wait for the entry's expiry.
            tracing::error!(tool = t.name, error = %e, "could not store a single-use outcome");
        }
        answer
    }

    /// Removes the ledger's expired entries in the background, at most once per
    /// [`SWEEP_INTERVAL`](crate::ledger::SWEEP_INTERVAL) (on a claim: a ledger nobody
    /// claims in holds nothing new).
    fn maybe_sweep_ledger(&self) {
        use std::sync::atomic::Ordering;
        let now = std::time::SystemTime::now();
        let now_ms = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, crate::tasks::millis);
        let every = crate::ledger::SWEEP_INTERVAL.as_millis() as u64;
        let last = self.inner.ledger_swept_ms.load(Ordering::Relaxed);
        if now_ms.saturating_sub(last) < every
            || self
                .inner
                .ledger_swept_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let ledger = self.inner.ledger.clone();
        tokio::spawn(async move {
            match ledger.remove_expired(now).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(removed = n, "removed expired single-use entries"),
                Err(e) => tracing::warn!(error = %e, "could not remove expired single-use entries"),
            }
        });
    }

    /// The `tools/call` result of a concluded round (a detaching checkpoint is an ordinary
    /// one here: single-use tools do not run as tasks).
    pub(super) fn call_answer(
        &self,
        name: &str,
        concluded: Result<Concluded<CallToolResult>, ErrorObject>,
    ) -> Result<Value, ErrorObject> {
        match concluded? {
            Concluded::Complete { value, .. } => Ok(self.complete(value)),
            Concluded::InputRequired(s) | Concluded::Detached(s) => Ok(self.suspended(&s)),
            Concluded::Failed(e) => match crate::error::map_tool_error(name, e) {
                crate::error::Mapped::Result(r) => Ok(self.complete(r)),
                crate::error::Mapped::Error(e) => Err(e),
            },
        }
    }
}
