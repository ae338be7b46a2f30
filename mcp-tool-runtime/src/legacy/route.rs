//! Where a message goes: [`route`] tells a transport whether it opens a legacy session, is
//! a modern request, or belongs to the session it arrived in.

use crate::protocol::text::MessageIn;

/// The methods a legacy session serves.
pub const LEGACY_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
];

/// How a transport should route one incoming message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// An `initialize` request: opens a legacy session ([`Server::initialize`](crate::Server::initialize)).
    Initialize,
    /// A message with modern `_meta` (`io.modelcontextprotocol/protocolVersion`): served
    /// statelessly ([`Server::handle_text`](crate::Server::handle_text)), session or not.
    Modern,
    /// Anything else: the session's, when there is one ([`Server::handle_in_session`](crate::Server::handle_in_session));
    /// without a session it is served (and refused) statelessly.
    Session,
}

/// [`route`] of a message read from its text.
pub(crate) fn route_in(message: &MessageIn<'_>) -> Route {
    // A modern `_meta` wins, even on `initialize`: a 2026-07-28 client sending a removed
    // method gets the modern answer (-32601; HTTP 404), not a session.
    if message.is_modern() {
        Route::Modern
    } else if message.method().as_deref() == Some("initialize") && message.id.is_some() {
        Route::Initialize
    } else {
        Route::Session
    }
}
