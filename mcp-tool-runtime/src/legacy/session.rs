//! A legacy session and the bounded table of HTTP sessions.
//!
//! A [`Session`] is what `initialize` negotiated (version, the client's capability flags, a
//! bounded client name: a few hundred bytes, never the body as sent) plus the traffic in flight: the requests the server sent to the client and
//! awaits ([`Session::deliver`] routes the client's responses to them), and the client's
//! requests being handled (`notifications/cancelled` stops one). On stdio the process is the
//! session; on Streamable HTTP, [`Sessions`] keeps them by `Mcp-Session-Id`, bounded in
//! number and closed after an idle time. This is the only server-side state of the runtime,
//! and only legacy clients create it: sessions need sticky routing behind a load balancer,
//! the modern path needs none.
//!
//! A session also keeps what the client subscribed to (`resources/subscribe`: at most
//! [`LegacyConfig::max_subscriptions_per_session`] URIs of at most
//! [`MAX_SUBSCRIPTION_URI_BYTES`] each) and whether its one standalone notification stream
//! (the HTTP `GET`) is open.

// The HTTP transport's pieces of a session (its GET stream's claim, the waits on the
// client's answers and their bounds) serve only the `http-server` feature.
#![cfg_attr(not(feature = "http-server"), allow(dead_code))]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{oneshot, watch};

use super::LegacyConfig;
use super::lifecycle::Hello;
use crate::principal::Principal;
use crate::protocol::{ClientCapabilities, ErrorObject, Implementation, LogLevel, RequestId};
use crate::sync::lock;
use crate::throttle::release;

/// Longest URI a session may subscribe to, in bytes (longer is refused): with
/// [`LegacyConfig::max_subscriptions_per_session`], what one session's subscriptions can
/// hold is bounded.
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 1024;

/// The answer to a request the server sent: the client's `result`, or its `error`.
pub(crate) type PeerAnswer = Result<Value, ErrorObject>;

/// One legacy session.
pub struct Session {
    id: String,
    hello: Hello,
    principal: Principal,
    initialized: AtomicBool,
    /// The client can send nothing more (stdio: end of input): requests to it fail at once.
    input_closed: AtomicBool,
    last_seen: Mutex<Instant>,
    /// The level `logging/setLevel` asked for (none: no log messages).
    log_level: Mutex<Option<LogLevel>>,
    next_id: AtomicI64,
    /// Requests sent to the client, by id, waiting for its response.
    outgoing: Mutex<HashMap<RequestId, oneshot::Sender<PeerAnswer>>>,
    /// The client's requests being handled, by id: sending on the channel stops one.
    incoming: Mutex<HashMap<RequestId, oneshot::Sender<()>>>,
    /// `true` once the session is closed (DELETE, expiry, end of stdin).
    closed: watch::Sender<bool>,
    /// How long the server waits for the client's answer to one of its requests.
    pub(crate) response_timeout: Duration,
    /// The URIs the client subscribed to (`resources/subscribe`).
    subscriptions: Mutex<HashSet<String>>,
    max_subscriptions: usize,
    /// Whether the standalone notification stream (HTTP `GET`) is open.
    stream_open: AtomicBool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("version", &self.hello.version)
            .field("principal", &self.principal)
            .field("initialized", &self.is_initialized())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session for `hello`, opened by `principal`.
    pub(crate) fn new(
        id: String,
        hello: Hello,
        principal: Principal,
        config: &LegacyConfig,
    ) -> Self {
        Session {
            id,
            hello,
            principal,
            initialized: AtomicBool::new(false),
            input_closed: AtomicBool::new(false),
            last_seen: Mutex::new(Instant::now()),
            log_level: Mutex::new(None),
            next_id: AtomicI64::new(0),
            outgoing: Mutex::new(HashMap::new()),
            incoming: Mutex::new(HashMap::new()),
            closed: watch::channel(false).0,
            response_timeout: config.response_timeout,
            subscriptions: Mutex::new(HashSet::new()),
            max_subscriptions: config.max_subscriptions_per_session,
            stream_open: AtomicBool::new(false),
        }
    }

    /// Subscribes the session to `uri` (already subscribed is fine). Refused when the URI is
    /// longer than `MAX_SUBSCRIPTION_URI_BYTES` or the session holds
    /// [`LegacyConfig::max_subscriptions_per_session`] subscriptions.
    pub(crate) fn subscribe(&self, uri: &str) -> Result<(), SubscribeRefused> {
        if uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
            return Err(SubscribeRefused::UriTooLong(uri.len()));
        }
        let mut subs = lock(&self.subscriptions);
        if subs.contains(uri) {
            return Ok(());
        }
        if subs.len() >= self.max_subscriptions {
            return Err(SubscribeRefused::TooMany(subs.len()));
        }
        subs.insert(uri.to_owned());
        Ok(())
    }

    /// Ends the subscription to `uri`; `false` when there was none.
    pub fn unsubscribe(&self, uri: &str) -> bool {
        lock(&self.subscriptions).remove(uri)
    }

    /// Whether the session is subscribed to `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// How many URIs the session is subscribed to.
    pub fn subscriptions(&self) -> usize {
        lock(&self.subscriptions).len()
    }

    /// Claims the session's one standalone notification stream; `None` while another is
    /// open. The claim is given back when the returned value drops.
    pub(crate) fn claim_stream(self: &Arc<Self>) -> Option<StreamClaim> {
        self.stream_open
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| StreamClaim(self.clone()))
    }

    /// The session id (`Mcp-Session-Id` on HTTP; on stdio a random id used in logs).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &'static str {
        self.hello.version
    }

    /// The capabilities the client declared in `initialize`, reduced to the flags the server
    /// acts on ([`ClientCapabilities::flags`]).
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.hello.capabilities
    }

    /// The log level the client set with `logging/setLevel`; `None` until it does (the
    /// server then sends no log messages, as a 2026-07-28 request without a level gets none).
    pub fn log_level(&self) -> Option<LogLevel> {
        *lock(&self.log_level)
    }

    /// Records the level of `logging/setLevel`; later requests log at it.
    pub fn set_log_level(&self, level: LogLevel) {
        *lock(&self.log_level) = Some(level);
    }

    /// The client's name and version from `clientInfo`, bounded; the rest of
    /// `clientInfo` is not kept.
    pub fn client_info(&self) -> &Implementation {
        &self.hello.client_info
    }

    /// An estimate of the bytes what `initialize` left in this session takes (the session
    /// itself and what it kept of `initialize`): bounded whatever the client sent. The traffic in
    /// flight (requests being handled, requests to the client) comes on top, bounded by
    /// the transport's limits.
    pub fn kept_bytes(&self) -> usize {
        let subscriptions: usize = lock(&self.subscriptions).iter().map(String::len).sum();
        std::mem::size_of::<Self>() + self.id.len() + self.hello.kept_bytes() + subscriptions
    }

    /// The principal that opened the session (every later request must come from it).
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Whether `notifications/initialized` arrived.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    /// Whether the session was closed.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Closes the session: every request of the client still being handled stops (its
    /// tool's pending requests to the client are cancelled), and no new one is accepted.
    pub fn close(&self) {
        self.closed.send_replace(true);
        let stops: Vec<_> = lock(&self.incoming).drain().map(|(_, s)| s).collect();
        for stop in stops {
            let _ = stop.send(());
        }
        lock(&self.outgoing).clear();
    }

    /// The client can send nothing more (stdio: end of input): calls waiting for its
    /// answers fail now, and their tools report it; requests that need no answer complete.
    pub fn end_of_input(&self) {
        self.input_closed.store(true, Ordering::Relaxed);
        lock(&self.outgoing).clear();
    }

    /// Whether the client can still answer requests.
    pub(crate) fn can_answer(&self) -> bool {
        !self.input_closed.load(Ordering::Relaxed) && !self.is_closed()
    }

    /// A receiver that sees the session close.
    pub(crate) fn closed_signal(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    /// Records activity (the idle clock restarts).
    pub(crate) fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        lock(&self.last_seen).elapsed()
    }

    fn busy(&self) -> bool {
        !lock(&self.incoming).is_empty()
    }

    /// A fresh id for a request to the client.
    pub(crate) fn next_request_id(&self) -> RequestId {
        RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Registers a request to the client; its answer arrives on the receiver.
    pub(crate) fn expect(&self, id: RequestId) -> oneshot::Receiver<PeerAnswer> {
        let (tx, rx) = oneshot::channel();
        let mut outgoing = lock(&self.outgoing);
        // checked under the lock `end_of_input` clears: no request is left waiting forever
        if self.can_answer() {
            outgoing.insert(id, tx);
        }
        rx
    }

    /// Forgets a request to the client (answered, timed out or abandoned). Whether it was
    /// still waiting.
    pub(crate) fn forget(&self, id: &RequestId) -> bool {
        lock(&self.outgoing).remove(id).is_some()
    }

    /// Routes a response of the client (`result` or `error` with the id of a request the
    /// server sent). `false` when no request with that id is waiting (unknown, answered
    /// already, or given up): the response is ignored.
    pub fn deliver(&self, id: &RequestId, answer: Result<Value, ErrorObject>) -> bool {
        self.touch();
        match lock(&self.outgoing).remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Registers a request of the client being handled; `None` when one with the same id is
    /// already in flight (JSON-RPC ids must be unique among a peer's pending requests).
    pub(crate) fn begin(&self, id: RequestId) -> Option<oneshot::Receiver<()>> {
        let mut incoming = lock(&self.incoming);
        if incoming.contains_key(&id) {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        incoming.insert(id, tx);
        Some(rx)
    }

    /// The client's request `id` is answered.
    pub(crate) fn end(&self, id: &RequestId) {
        lock(&self.incoming).remove(id);
    }

    /// `notifications/cancelled` for the client's request `id`: stops it if it is still being
    /// handled (no response will be sent). `false` when there was nothing to stop.
    pub fn cancel(&self, id: &RequestId) -> bool {
        match lock(&self.incoming).remove(id) {
            Some(stop) => stop.send(()).is_ok(),
            None => false,
        }
    }
}

/// A session's claim on its standalone notification stream ([`Session::claim_stream`]).
#[derive(Debug)]
pub struct StreamClaim(Arc<Session>);

impl Drop for StreamClaim {
    fn drop(&mut self) {
        self.0.stream_open.store(false, Ordering::Release);
    }
}

/// Why [`Session::subscribe`] refused a URI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscribeRefused {
    /// The session holds as many subscriptions as it may.
    #[error(
        "too many subscriptions: this session holds {0}, the most it may; unsubscribe from one first"
    )]
    TooMany(usize),
    /// The URI is longer than [`MAX_SUBSCRIPTION_URI_BYTES`].
    #[error(
        "the URI is too long to subscribe to ({0} bytes; at most {MAX_SUBSCRIPTION_URI_BYTES})"
    )]
    UriTooLong(usize),
}

/// Why a session could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The table is full of sessions that are neither idle nor expired.
    #[error("too many sessions ({0} open)")]
    Full(usize),
    /// The principal (all anonymous callers together, for the anonymous principal) has as
    /// many sessions open as it may ([`LegacyConfig::max_sessions_per_principal`],
    /// [`LegacyConfig::max_anonymous_sessions`]).
    #[error("too many sessions for this caller ({0} open)")]
    PrincipalFull(usize),
}

/// Why [`Sessions::lookup`] found no session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// No session has this id (never had, or closed and removed).
    Unknown,
    /// The session expired or was closed; it is removed now.
    Expired,
    /// The session belongs to another principal (the caller is told it is unknown).
    OtherPrincipal,
}

/// The HTTP sessions, by id: at most `max_sessions`, at most `max_sessions_per_principal` of
/// one principal (`max_anonymous_sessions` of anonymous callers), each closed after
/// `idle_timeout` without a message (unless one of its requests is still being handled).
#[derive(Debug)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    max: usize,
    per_principal: usize,
    anonymous: usize,
    idle: Duration,
    waiting: Arc<Mutex<Waiting>>,
}

impl Sessions {
    /// An empty table with the limits of `config`.
    pub fn new(config: &LegacyConfig) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            max: config.max_sessions,
            per_principal: config.max_sessions_per_principal,
            anonymous: config.max_anonymous_sessions,
            idle: config.idle_timeout,
            waiting: Arc::new(Mutex::new(Waiting {
                per_session: config.max_waiting_per_session,
                per_principal: config.max_waiting_per_principal,
                max: config.max_waiting,
                total: 0,
                by_session: HashMap::new(),
                by_principal: HashMap::new(),
            })),
        }
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `session`; expired sessions are closed first. Refused when its principal has as
    /// many sessions as it may, or when the table is full.
    pub fn insert(&self, session: Arc<Session>) -> Result<(), OpenError> {
        let mut map = lock(&self.map);
        self.sweep(&mut map);
        let principal = session.principal();
        let limit = if principal.is_anonymous() {
            self.anonymous
        } else {
            self.per_principal
        };
        let own = map.values().filter(|s| s.principal() == principal).count();
        if own >= limit {
            crate::telemetry::metrics::concurrency_refused("legacy_sessions");
            return Err(OpenError::PrincipalFull(own));
        }
        if map.len() >= self.max {
            crate::telemetry::metrics::concurrency_refused("legacy_sessions");
            return Err(OpenError::Full(map.len()));
        }
        map.insert(session.id().to_owned(), session);
        crate::telemetry::metrics::legacy_sessions(map.len());
        Ok(())
    }

    /// The open session `id`, if it exists, is not expired, and belongs to `principal`
    /// (another principal's session is reported as unknown, never as someone else's).
    pub fn get(&self, id: &str, principal: &Principal) -> Option<Arc<Session>> {
        self.lookup(id, principal).ok()
    }

    /// [`Sessions::get`], saying why there is no session (for the transport's log; a client
    /// must be told only that the session is not found).
    pub fn lookup(&self, id: &str, principal: &Principal) -> Result<Arc<Session>, Missing> {
        let mut map = lock(&self.map);
        let s = map.get(id).ok_or(Missing::Unknown)?.clone();
        if self.expired(&s) {
            map.remove(id);
            s.close();
            crate::telemetry::metrics::legacy_sessions(map.len());
            return Err(Missing::Expired);
        }
        if s.principal() != principal {
            return Err(Missing::OtherPrincipal);
        }
        s.touch();
        Ok(s)
    }

    /// A place for one call of `session` that may wait on a person, held until the
    /// `WaitSlot` drops; refused when the session, its principal or the server has as many
    /// such calls as [`LegacyConfig`] allows (`max_waiting_per_session`,
    /// `max_waiting_per_principal`, `max_waiting`).
    pub(crate) fn wait_slot(&self, session: &Session) -> Result<WaitSlot, WaitRefused> {
        let mut w = lock(&self.waiting);
        let own = w.by_session.get(session.id()).copied().unwrap_or(0);
        if own >= w.per_session {
            return Err(WaitRefused::Session(own));
        }
        let principal = session.principal();
        let theirs = w.by_principal.get(principal).copied().unwrap_or(0);
        if theirs >= w.per_principal {
            return Err(WaitRefused::Principal(theirs));
        }
        if w.total >= w.max {
            crate::telemetry::metrics::concurrency_refused("legacy_waiting");
            return Err(WaitRefused::Server(w.total));
        }
        w.total += 1;
        *w.by_session.entry(session.id().to_owned()).or_default() += 1;
        *w.by_principal.entry(principal.clone()).or_default() += 1;
        Ok(WaitSlot {
            waiting: self.waiting.clone(),
            session: session.id().to_owned(),
            principal: principal.clone(),
        })
    }

    /// How many calls wait for an answer of the client now.
    pub fn waiting(&self) -> usize {
        lock(&self.waiting).total
    }

    /// Closes and removes session `id` (DELETE). `false` when there is no such session of
    /// `principal`.
    pub fn remove(&self, id: &str, principal: &Principal) -> bool {
        let mut map = lock(&self.map);
        if !map.get(id).is_some_and(|s| s.principal() == principal) {
            return false;
        }
        if let Some(s) = map.remove(id) {
            s.close();
        }
        crate::telemetry::metrics::legacy_sessions(map.len());
        true
    }

    /// Closes every expired session; returns how many.
    pub fn sweep_now(&self) -> usize {
        let mut map = lock(&self.map);
        self.sweep(&mut map)
    }

    fn expired(&self, s: &Session) -> bool {
        s.is_closed() || (s.idle_for() > self.idle && !s.busy())
    }

    fn sweep(&self, map: &mut HashMap<String, Arc<Session>>) -> usize {
        let before = map.len();
        map.retain(|_, s| {
            let keep = !self.expired(s);
            if !keep {
                s.close();
            }
            keep
        });
        if map.len() != before {
            crate::telemetry::metrics::legacy_sessions(map.len());
        }
        before - map.len()
    }
}

/// The counts behind [`Sessions::wait_slot`].
#[derive(Debug)]
struct Waiting {
    per_session: usize,
    per_principal: usize,
    max: usize,
    total: usize,
    by_session: HashMap<String, usize>,
    by_principal: HashMap<Principal, usize>,
}

/// A call's place in the budget of calls that may wait on a person
/// ([`Sessions::wait_slot`]); given back when dropped.
#[derive(Debug)]
pub struct WaitSlot {
    waiting: Arc<Mutex<Waiting>>,
    session: String,
    principal: Principal,
}

impl Drop for WaitSlot {
    fn drop(&mut self) {
        let mut w = lock(&self.waiting);
        w.total = w.total.saturating_sub(1);
        release(&mut w.by_session, &self.session);
        release(&mut w.by_principal, &self.principal);
    }
}

/// Why [`Sessions::wait_slot`] refused a call (each with the number of calls waiting).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitRefused {
    /// The session has `max_waiting_per_session` calls that may wait.
    #[error("too many calls waiting in this session ({0})")]
    Session(usize),
    /// The principal has `max_waiting_per_principal` calls that may wait.
    #[error("too many calls waiting for this caller ({0})")]
    Principal(usize),
    /// The server has `max_waiting` calls that may wait.
    #[error("too many calls waiting on the server ({0})")]
    Server(usize),
}

/// A new session id: 128 random bits, base64url (visible ASCII, as the transport requires).
pub(crate) fn new_session_id() -> String {
    crate::ledger::new_id().expect("the operating system's random number generator")
}
