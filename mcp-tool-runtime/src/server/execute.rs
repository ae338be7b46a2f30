//! One request's run in its era: [`Era::Modern`] through the stateless round engine
//! ([`crate::rounds`]), [`Era::Legacy`] in the session's process ([`crate::legacy`]).

use std::sync::Arc;

use serde_json::value::RawValue;

use super::Server;
use crate::code::{Code, Concluded, Target};
use crate::legacy::Session;
use crate::notify::{NotificationSink, Notifiers};
use crate::principal::Principal;
use crate::protocol::text::RoundIn;
use crate::protocol::{ClientCapabilities, ErrorObject};
use crate::rounds::Prepared;

/// How a request is served: statelessly (modern, its params carry the answers and the
/// sealed state), or inside a legacy session (the code's requests go to the client as real
/// requests while the call waits).
pub(crate) enum Era<'a> {
    /// A 2026-07-28 request: what its params carry for the round (`inputResponses`,
    /// `requestState`) and the capabilities its `_meta` declares.
    Modern {
        round: RoundIn<'a>,
        caps: &'a Arc<ClientCapabilities>,
    },
    /// A request of a legacy session; `sink` carries the call's messages to the client.
    Legacy {
        session: &'a Arc<Session>,
        sink: NotificationSink,
    },
}

impl Server {
    /// Runs `code` for target `t` with `input` (a tool's arguments, a prompt's arguments, a
    /// template's variables) in `era`.
    pub(crate) async fn execute<T>(
        &self,
        t: &Target<'_>,
        code: &(dyn Code<T> + '_),
        input: &RawValue,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Concluded<T>, ErrorObject> {
        match era {
            Era::Modern { round, caps } => {
                let engine = &self.inner.engine;
                let (digest, input) = crate::rounds::arguments(t.method, input)?;
                let input = &*input;
                let mut run = match engine.prepare(t, digest, round, caps, principal, notifiers)? {
                    Prepared::Reask(result) => return Ok(Concluded::InputRequired(result)),
                    Prepared::Run(run) => run,
                };
                let outcome = run.step(code, t.name, input).await;
                engine.conclude(t, principal, caps, run, outcome)
            }
            Era::Legacy { session, sink } => {
                // the principal this request came with: the session's subject, its current scopes
                let at = crate::legacy::InSession { session, principal };
                // boxed: a legacy run's future would otherwise size every modern call's
                Box::pin(crate::legacy::run(
                    t,
                    code,
                    input,
                    at,
                    sink,
                    notifiers,
                    self.state_map(),
                ))
                .await
            }
        }
    }
}
