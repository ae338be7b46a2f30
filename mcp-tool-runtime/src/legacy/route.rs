//! Where a message goes: [`route`] tells a transport whether it opens a legacy session, is
//! a modern request, or belongs to the session it arrived in.

use serde_json::Value;

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
    /// An `initialize` request: opens a legacy session ([`Server::initialize`]).
    Initialize,
    /// A message with modern `_meta` (`io.modelcontextprotocol/protocolVersion`): served
    /// statelessly ([`Server::handle_with`]), session or not.
    Modern,
    /// Anything else: the session's, when there is one ([`Server::handle_in_session`]);
    /// without a session it is served (and refused) statelessly.
    Session,
}

/// Where `message` goes (see [`Route`]). Cheap: looks at `method` and `params._meta` only.
pub fn route(message: &Value) -> Route {
    let Some(obj) = message.as_object() else {
        return Route::Session;
    };
    let modern = obj
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(crate::protocol::META_PROTOCOL_VERSION));
    // A modern `_meta` wins, even on `initialize`: a 2026-07-28 client sending a removed
    // method gets the modern answer (-32601; HTTP 404), not a session.
    if modern {
        Route::Modern
    } else if obj.get("method").and_then(Value::as_str) == Some("initialize")
        && obj.contains_key("id")
    {
        Route::Initialize
    } else {
        Route::Session
    }
}
