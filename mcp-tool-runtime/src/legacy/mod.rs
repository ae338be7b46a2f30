//! Dual era: the same tools, prompts and resources served to today's 2025-11-25 clients.
//!
//! A modern (2026-07-28) request carries `_meta` and is served statelessly by
//! [`Server::handle_text`](crate::server::Server::handle_text). A legacy client opens with
//! `initialize` instead; [`Server::initialize`](crate::server::Server::initialize) then opens
//! a [`Session`] scoped to the stdio process or to an HTTP `Mcp-Session-Id`, and every later
//! message of that session goes to
//! [`Server::handle_in_session`](crate::server::Server::handle_in_session). Both eras may be
//! served at once on one endpoint; [`route`] tells a transport which is which.
//!
//! In a session, `tools/call`, `prompts/get` and `resources/read` run the author's function
//! *as written*, in direct mode ([`Tool::direct`](crate::Tool::direct)): each `ask`, `sample`
//! or `roots` sends a real `elicitation/create`, `sampling/createMessage` or `roots/list`
//! request to the client on the call's own stream and awaits the response. Code without a
//! direct mode has its rounds driven in the process instead. No second code path is
//! written by the author, and nothing is sealed.
//!
//! - [`lifecycle`]: versions served, `initialize`, legacy result shapes.
//! - `session`: a session's traffic in flight; [`Sessions`], the bounded HTTP table.
//! - `peer`: the host that sends requests to the client (timeouts, cancellation).
//! - `direct`: direct mode, or rounds driven in the process.
//! - `route`: which era a message belongs to.
//!
//! The session's methods and notifications are served by the server
//! (`server/legacy.rs`), which owns the registry they reach.
//!
//! Sessions are the only server-side state of the runtime: behind a load balancer, a legacy
//! HTTP client needs sticky routing (by `Mcp-Session-Id`); the modern path needs none.

mod direct;
pub mod lifecycle;
mod peer;
mod route;
mod session;

use std::time::Duration;

pub(crate) use route::route_in;
pub use route::{LEGACY_METHODS, Route};
#[cfg(feature = "http-server")]
pub use session::{Missing, OpenError};
pub use session::{Session, Sessions};

pub(crate) use direct::{InSession, run};
pub(crate) use session::new_session_id;

/// Default most open HTTP sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Default most open HTTP sessions of one authenticated principal: 16 (a person's few
/// hosts and their reconnects fit; a runaway or hostile client can never hold more than
/// 1/64 of [`DEFAULT_MAX_SESSIONS`]).
pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 16;
/// Default most open HTTP sessions of anonymous callers, all together: 64. Anonymous callers
/// cannot be told apart, so they share one budget; it is kept to 1/16 of
/// [`DEFAULT_MAX_SESSIONS`], so that anonymous traffic can never crowd out authenticated
/// principals.
pub const DEFAULT_MAX_ANONYMOUS_SESSIONS: usize = 64;
/// Default most calls of one session that may wait on a person at once (legacy calls over
/// HTTP that can ask the client: `tools/call`, `prompts/get`, `resources/read` with an SSE
/// answer): 8.
pub const DEFAULT_MAX_WAITING_PER_SESSION: usize = 8;
/// Default most such calls of one principal (all anonymous callers together) at once: 32.
pub const DEFAULT_MAX_WAITING_PER_PRINCIPAL: usize = 32;
/// Default most such calls of the whole server at once: 512.
pub const DEFAULT_MAX_WAITING: usize = 512;
/// Default most resource subscriptions of one session: 32 (with
/// URIs of at most 1 KiB each, at most 32 KiB of URIs per session).
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION: usize = 32;
/// Default idle time after which an HTTP session is closed.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default longest wait for the client's answer to a request of the server (a person may be
/// filling in a form).
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Settings of the legacy half of a dual-era server
/// ([`ServerBuilder::legacy`](crate::server::ServerBuilder::legacy)).
#[derive(Debug, Clone)]
pub struct LegacyConfig {
    /// Whether `initialize` opens sessions (default `true`); `false` makes a modern-only
    /// server, which answers `initialize` with an error naming the versions it serves.
    pub enabled: bool,
    /// Most open HTTP sessions; `initialize` beyond it is refused (HTTP 503).
    pub max_sessions: usize,
    /// Most open HTTP sessions of one authenticated principal (default
    /// [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`], 16); its `initialize` beyond it is refused
    /// (HTTP 429), so one principal cannot fill the table.
    pub max_sessions_per_principal: usize,
    /// Most open HTTP sessions of anonymous callers, together (default
    /// [`DEFAULT_MAX_ANONYMOUS_SESSIONS`], 64); an anonymous `initialize` beyond it is refused
    /// (HTTP 429). Anonymous callers are one principal, so this replaces
    /// `max_sessions_per_principal` for them.
    pub max_anonymous_sessions: usize,
    /// Most calls of one session that may wait on a person at once (default
    /// [`DEFAULT_MAX_WAITING_PER_SESSION`], 8). Such calls — `tools/call`, `prompts/get` and
    /// `resources/read` of a session over HTTP with an SSE answer, which can ask the client
    /// and then wait up to `response_timeout` for a person — take a place in this budget
    /// instead of one of the HTTP request permits; beyond it they are refused (HTTP 429).
    pub max_waiting_per_session: usize,
    /// Most such calls of one principal at once, all its sessions together (all anonymous
    /// callers together for the anonymous principal); default
    /// [`DEFAULT_MAX_WAITING_PER_PRINCIPAL`], 32.
    pub max_waiting_per_principal: usize,
    /// Most such calls of the server at once (default [`DEFAULT_MAX_WAITING`], 512).
    pub max_waiting: usize,
    /// An HTTP session without a message for this long is closed (its id then gets 404),
    /// unless one of its requests is still being handled.
    pub idle_timeout: Duration,
    /// Longest wait for the client's answer to one request of the server; then the server
    /// sends `notifications/cancelled` for it and the tool fails.
    pub response_timeout: Duration,
    /// Most URIs one session may subscribe to with `resources/subscribe` (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION`], 32); one more is refused (-32602).
    pub max_subscriptions_per_session: usize,
}

impl Default for LegacyConfig {
    fn default() -> Self {
        LegacyConfig {
            enabled: true,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_principal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
            max_anonymous_sessions: DEFAULT_MAX_ANONYMOUS_SESSIONS,
            max_waiting_per_session: DEFAULT_MAX_WAITING_PER_SESSION,
            max_waiting_per_principal: DEFAULT_MAX_WAITING_PER_PRINCIPAL,
            max_waiting: DEFAULT_MAX_WAITING,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            max_subscriptions_per_session: DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
        }
    }
}

impl LegacyConfig {
    /// A modern-only server: no legacy sessions.
    pub fn disabled() -> Self {
        LegacyConfig {
            enabled: false,
            ..Self::default()
        }
    }

    /// Sets the most open HTTP sessions (at least 1).
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// Sets the most open HTTP sessions of one authenticated principal (at least 1).
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.max_sessions_per_principal = n.max(1);
        self
    }

    /// Sets the most open HTTP sessions of anonymous callers together (0: anonymous callers
    /// cannot open sessions).
    pub fn max_anonymous_sessions(mut self, n: usize) -> Self {
        self.max_anonymous_sessions = n;
        self
    }

    /// Sets the budget of calls that may wait on a person: per session, per principal and in
    /// all (each at least 1).
    pub fn max_waiting(mut self, per_session: usize, per_principal: usize, total: usize) -> Self {
        self.max_waiting_per_session = per_session.max(1);
        self.max_waiting_per_principal = per_principal.max(1);
        self.max_waiting = total.max(1);
        self
    }

    /// Sets the idle expiry of HTTP sessions.
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.idle_timeout = d;
        self
    }

    /// Sets the most resource subscriptions of one session (0: `resources/subscribe` is
    /// always refused).
    pub fn max_subscriptions_per_session(mut self, n: usize) -> Self {
        self.max_subscriptions_per_session = n;
        self
    }

    /// Sets the longest wait for the client's answer to a request of the server.
    pub fn response_timeout(mut self, d: Duration) -> Self {
        self.response_timeout = d;
        self
    }
}
