//! What an operator sets: [`HttpConfig`] (path, limits, timeouts, authenticator) and
//! [`OriginPolicy`] (DNS-rebinding protection), with the defaults and why.

use std::sync::Arc;
use std::time::Duration;

use crate::transport::auth::{AnonymousAuth, Authenticator};

/// A combination of [`HttpConfig`] values that [`serve`](super::serve) and
/// [`spawn`](super::spawn) refuse (see [`HttpConfig::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpConfigError {
    /// [`HttpConfig::max_streams`] is not below [`HttpConfig::max_connections`]: streams
    /// could take every connection and leave none for requests.
    #[error(
        "HttpConfig: max_streams ({max_streams}) must be below max_connections \
         ({max_connections}): the difference is the connections kept for requests, \
         which long-lived streams never take"
    )]
    StreamsNotBelowConnections {
        /// The configured stream budget.
        max_streams: usize,
        /// The configured connection limit.
        max_connections: usize,
    },
}

/// Default endpoint path.
pub const DEFAULT_PATH: &str = "/mcp";
/// Default request body limit: 1 MiB.
///
/// Why: what a request costs follows from its body. A 2026-07-28 `tools/call` is read from
/// its text, not parsed into a tree: while it runs it holds its body, what is kept of
/// `_meta` (whose text is at most [`MAX_META_BYTES`](crate::protocol::MAX_META_BYTES); of
/// the capabilities only the flags the server acts on and `extensions`, at most
/// [`MAX_REQUEST_EXTENSIONS_BYTES`](crate::protocol::MAX_REQUEST_EXTENSIONS_BYTES) of text),
/// and while its arguments are digested less than twice their text more (keys out of order
/// are sorted in place, 4 bytes a member; a key sent twice costs a canonical copy no longer
/// than the arguments). At most about 3 times its body, 3 MiB at 1 MiB; measured, 64 such
/// requests of 1 MiB padded in `_meta` or in their arguments peak at about +110 MiB of
/// resident memory (`tests/padded_request_memory.rs`). What a tool then builds of its
/// arguments is the tool's.
///
/// The other methods and legacy (2025-11-25) requests still parse their params (legacy:
/// the message) into a `serde_json::Value`. `tests/body_expansion.rs` measures the peak
/// while parsing a 1 MiB body: `[{},{},…]` 24x (a 32-byte `Value` per 3 bytes, plus the
/// array's reallocation), `[[],[],…]` 24x, `[[[]],…]` 34x, and the worst shape we know,
/// `[{"a":0},…]` (one map node per 8 bytes), 83x: at most about 90 MiB per such request,
/// so [`DEFAULT_MAX_CONCURRENT_REQUESTS`] (32) of them at once cost at most about 2.8 GiB.
/// The largest legitimate body is far smaller: the server caps the answers a round uses at
/// 256 KiB and a `requestState` at 64 KiB, and tool arguments are typically a few KiB.
/// Raise it (with [`HttpConfig::max_body_bytes`]) for tools with large arguments; lower
/// both limits for small containers.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default limit of requests in progress at once: 32 (see [`DEFAULT_MAX_BODY_BYTES`]).
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 32;
/// Default [`HttpConfig::max_body_bytes_in_flight`]: 32 MiB, that is
/// [`DEFAULT_MAX_CONCURRENT_REQUESTS`] bodies of [`DEFAULT_MAX_BODY_BYTES`].
///
/// Why: a body is received and parsed under this budget, before a request permit is
/// taken, so a client that sends its body slowly holds only the bytes it has sent, never
/// a permit. Read as a `tools/call`, those bytes cost at most about 3 times their size
/// while they are checked; parsed into a tree (other methods, legacy requests) at most
/// about 83 times (see [`DEFAULT_MAX_BODY_BYTES`]): about 2.7 GiB, the same ceiling as the
/// permits.
pub const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT: usize =
    DEFAULT_MAX_CONCURRENT_REQUESTS * DEFAULT_MAX_BODY_BYTES;
/// Default time allowed to receive a request body: 10 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default interval of the keep-alive comments on a `subscriptions/listen` stream
/// ([`HttpConfig::listen_keep_alive`]).
pub const DEFAULT_LISTEN_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Default time a request may run, its SSE stream included: 30 seconds.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HttpConfig::session_request_timeout`]: 30 minutes.
pub const DEFAULT_SESSION_REQUEST_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default time allowed to receive a request's headers ([`serve`](super::serve), [`spawn`](super::spawn)): 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time a connection's write may make no progress ([`serve`](super::serve), [`spawn`](super::spawn)): 30 seconds.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Default kernel send buffer of a connection ([`serve`](super::serve), [`spawn`](super::spawn)): 256 KiB.
///
/// Why: what a connection holds of answers its client has not read is this buffer (Linux
/// doubles the value set, for its bookkeeping) plus hyper's write buffer (at most about
/// 400 KB): under 1 MiB per connection, against the up to 4 MiB the kernel's automatic
/// sizing grows it to on loopback. 512 KiB in flight still fills a 40 Mbit/s link with
/// 100 ms of round trip.
pub const DEFAULT_SEND_BUFFER_BYTES: usize = 256 * 1024;
/// Default limit of open connections ([`serve`](super::serve), [`spawn`](super::spawn)): 1024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default share of [`HttpConfig::max_connections`] kept for requests: a quarter (rounded
/// up), so 256 of the default 1024 connections are never taken by long-lived streams and
/// [`HttpConfig::stream_budget`] is 768.
///
/// Why: a long-lived stream (`subscriptions/listen`, a legacy session's `GET`, a legacy call
/// waiting on a person) holds its connection for as long as its client likes, and principals may cost an attacker nothing
/// (an authenticator that [admits anyone](Authenticator::admits_anyone)), so per-caller
/// caps alone cannot keep streams from taking every connection. The headroom is what is
/// left for everything else: it holds all [`DEFAULT_MAX_CONCURRENT_REQUESTS`] (32)
/// requests eight times over, with room for idle keep-alive connections.
pub const DEFAULT_STREAM_HEADROOM_DIVISOR: usize = 4;
/// Default [`HttpConfig::max_streams_per_principal`]: 16.
///
/// Why: a client needs one or two listen streams (one per filter it keeps apart) and one
/// `GET` per legacy session; 16 leaves room for several clients of one user.
pub const DEFAULT_MAX_STREAMS_PER_PRINCIPAL: usize = 16;
/// Default [`HttpConfig::max_streams_per_address`]: 64.
///
/// Why: many users may share one address (a NAT, an office, a proxy that does not hand
/// on the client's address); 64 is four principals' worth. IPv6 peers are counted by
/// their /64 prefix (one host usually holds a whole /64).
pub const DEFAULT_MAX_STREAMS_PER_ADDRESS: usize = 64;
/// Default [`HttpConfig::max_anonymous_streams`]: 128.
///
/// Why: anonymous callers, and every caller of an authenticator that [admits
/// anyone](Authenticator::admits_anyone) (a principal that costs nothing to name), are
/// one crowd; 128 is a sixth of the default stream budget.
pub const DEFAULT_MAX_ANONYMOUS_STREAMS: usize = 128;
/// Default [`HttpConfig::max_anonymous_streams_per_address`]: 8.
///
/// Why: one local, single-user client rarely holds more than a couple of streams; 8 per
/// address means an anonymous crowd needs 16 addresses to fill
/// [`DEFAULT_MAX_ANONYMOUS_STREAMS`].
pub const DEFAULT_MAX_ANONYMOUS_STREAMS_PER_ADDRESS: usize = 8;
/// Default [`HttpConfig::max_stream_lifetime`]: 30 minutes.
///
/// Why: a stream that may never end pins its connection and its slot forever; after 30
/// minutes the server ends it gracefully (a listen stream with its `subscriptions/listen`
/// result) and the client listens again, which the protocol allows at any time. One
/// re-listen per half hour costs a client nothing noticeable.
pub const DEFAULT_MAX_STREAM_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// Default number of notifications an SSE stream buffers: 32.
pub const DEFAULT_SSE_BUFFER: usize = 32;
/// The JSON-RPC error code of answers refused by a transport limit (`503`: too many
/// requests in progress, or a request that ran out of time): -32000, in JSON-RPC's
/// range for implementation-defined server errors.
pub const LIMIT_EXCEEDED: i64 = -32000;
/// Which `Origin` header values are accepted. Requests without `Origin` (non-browser
/// clients) are always accepted; a present `Origin` must match this policy or the
/// request gets `403 Forbidden`.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    /// Accept `http(s)://localhost`, `127.0.0.1` and `[::1]` on any port.
    /// `None` (the default) means: yes for [`router`](super::router()), and for [`serve`](super::serve)/[`spawn`](super::spawn)
    /// only when bound to a loopback address.
    pub allow_localhost: Option<bool>,
    /// Exact origins to accept (`scheme://host[:port]`, compared case-insensitively).
    pub allowed: Vec<String>,
    /// Accept every origin (turns DNS-rebinding protection off; not recommended).
    pub allow_any: bool,
}

impl OriginPolicy {
    /// Accept only the listed origins (no localhost default).
    pub fn only<I, S>(origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            allow_localhost: Some(false),
            allowed: origins.into_iter().map(Into::into).collect(),
            allow_any: false,
        }
    }

    /// Accept every origin. Only for servers that are protected otherwise.
    pub fn any() -> Self {
        Self {
            allow_localhost: Some(true),
            allowed: Vec::new(),
            allow_any: true,
        }
    }

    /// Whether `origin` is accepted (with `None` for `allow_localhost` taken as `true`).
    pub fn allows(&self, origin: &str) -> bool {
        if self.allow_any {
            return true;
        }
        let origin = origin.trim().trim_end_matches('/');
        if self.allow_localhost.unwrap_or(true) && is_localhost_origin(origin) {
            return true;
        }
        self.allowed
            .iter()
            .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(origin))
    }
}

/// Whether `origin` is `http(s)://localhost|127.0.0.1|[::1]` with an optional port.
pub(super) fn is_localhost_origin(origin: &str) -> bool {
    let lower = origin.to_ascii_lowercase();
    let rest = match lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    {
        Some(r) => r,
        None => return false,
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, port)) if port.is_empty() || valid_port(port) => return h == "::1",
            _ => return false,
        }
    } else {
        match rest.split_once(':') {
            Some((h, port)) if valid_port(port) => h,
            Some(_) => return false,
            None => rest,
        }
    };
    host == "localhost" || host == "127.0.0.1"
}

fn valid_port(p: &str) -> bool {
    p.strip_prefix(':')
        .unwrap_or(p)
        .parse::<u16>()
        .is_ok_and(|_| !p.is_empty())
}

/// Configuration of the Streamable HTTP endpoint.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The endpoint path (default `/mcp`).
    pub path: String,
    /// The request body limit in bytes (default 1 MiB, see [`DEFAULT_MAX_BODY_BYTES`]
    /// for why); larger bodies get `413`.
    pub max_body_bytes: usize,
    /// Which `Origin` values are accepted.
    pub origins: OriginPolicy,
    /// Turns each request into the principal states are bound to (default: anonymous).
    pub authenticator: Arc<dyn Authenticator>,
    /// Requests in progress at once, SSE streams counted until they end (default 32).
    /// One more is refused at once with `503`, `Retry-After: 1` and [`LIMIT_EXCEEDED`]
    /// (refused rather than queued: a queue only moves the wait into the client's
    /// timeout, and a load balancer can send the retry elsewhere).
    pub max_concurrent_requests: usize,
    /// Bytes of request bodies received and being parsed at once, over all requests, with
    /// or without `Mcp-Session-Id` (default 32 MiB, see
    /// [`DEFAULT_MAX_BODY_BYTES_IN_FLIGHT`] for why). Bytes are counted as they arrive and
    /// released once the body is parsed; a body that would go beyond the budget is refused
    /// with `503`, `Retry-After: 1` and [`LIMIT_EXCEEDED`], and the connection is closed.
    /// Bodies are read before a request permit is taken, so a slow sender holds bytes, not
    /// permits. Raising [`HttpConfig::max_body_bytes`] does not raise this: set both.
    pub max_body_bytes_in_flight: usize,
    /// Time allowed to receive the whole body once the headers are in (default 10 s);
    /// then `408` and the connection is closed.
    pub body_read_timeout: Duration,
    /// Time a request may run once its body is in (default 30 s): the server's handling,
    /// and an SSE stream until its last event. Then `503` with [`LIMIT_EXCEEDED`] (an SSE
    /// stream just ends) and the request is cancelled.
    pub request_timeout: Duration,
    /// Time a request of a legacy session may run (default 30 minutes): its tool may wait
    /// for a person to answer forms ([`LegacyConfig::response_timeout`] bounds each wait).
    ///
    /// [`LegacyConfig::response_timeout`]: crate::legacy::LegacyConfig::response_timeout
    pub session_request_timeout: Duration,
    /// Notifications an SSE stream buffers (default 32). While a client does not read,
    /// further progress notifications are dropped (each supersedes the previous one);
    /// the response always gets through.
    pub sse_buffer: usize,
    /// [`serve`](super::serve) and [`spawn`](super::spawn) only: time allowed to receive a request's headers
    /// (default 10 s), counted from when the server starts waiting for them, so it also
    /// closes a connection that stays silent (at first, or idle between requests).
    pub header_read_timeout: Duration,
    /// [`serve`](super::serve) and [`spawn`](super::spawn) only: open connections at once (default 1024); more are
    /// closed as soon as they are accepted.
    pub max_connections: usize,
    /// [`serve`](super::serve) and [`spawn`](super::spawn) only: time a write to a connection may make no progress
    /// (default 30 s); then the connection is closed, with whatever it held. A client
    /// that stops reading its answers (pipelining requests, or leaving an SSE stream
    /// unread) is disconnected after this time.
    pub write_timeout: Duration,
    /// [`serve`](super::serve) and [`spawn`](super::spawn) only: the kernel send buffer of each connection
    /// (`SO_SNDBUF`, default 256 KiB, see [`DEFAULT_SEND_BUFFER_BYTES`]): with hyper's
    /// write buffer, the bound on the bytes of answers a connection holds unsent. `None`
    /// leaves the operating system's automatic sizing.
    pub send_buffer_bytes: Option<usize>,
    /// Interval of the SSE comment (`:`) sent on a quiet `subscriptions/listen` stream
    /// (default 15 s, [`DEFAULT_LISTEN_KEEP_ALIVE`]), so that proxies and idle timeouts
    /// do not cut it. A listen stream has no request timeout: it lasts until the client
    /// closes it, it lags, the server shuts down, or it reaches
    /// [`max_stream_lifetime`](Self::max_stream_lifetime).
    pub listen_keep_alive: Duration,
    /// Long-lived streams open at once: `subscriptions/listen` streams, legacy sessions'
    /// `GET` streams and legacy calls waiting on a person (their SSE answer), together; `None` (the default) is
    /// [`max_connections`](Self::max_connections) minus a quarter of it, rounded up (768
    /// of 1024, see [`DEFAULT_STREAM_HEADROOM_DIVISOR`]);
    /// [`stream_budget`](Self::stream_budget) says what is in force. The connections
    /// above it are kept for requests: streams never take them. A value that is not below
    /// `max_connections` is refused by [`serve`](super::serve) and
    /// [`spawn`](super::spawn) ([`HttpConfigError`]). One more stream is refused with
    /// `503`, `Retry-After: 1`, [`LIMIT_EXCEEDED`] and `Connection: close`.
    pub max_streams: Option<usize>,
    /// Streams one principal may hold open at once (default 16, see
    /// [`DEFAULT_MAX_STREAMS_PER_PRINCIPAL`]); one more is `429` with [`LIMIT_EXCEEDED`]
    /// and `Connection: close`. (The server's own
    /// [`ListenLimits`](crate::server::ListenLimits) also cap listens, per principal and per
    /// process; the smaller cap decides.)
    pub max_streams_per_principal: usize,
    /// Streams one peer address may hold open at once, whoever the principals (default 64,
    /// see [`DEFAULT_MAX_STREAMS_PER_ADDRESS`]); IPv6 addresses count by their /64 prefix.
    /// One more is `429` as above. The peer address is the connection's:
    /// [`serve`](super::serve) and [`spawn`](super::spawn) know it; a
    /// [`router`](super::router()) mounted by hand knows it only when served with
    /// `into_make_service_with_connect_info::<SocketAddr>()` (without it, no per-address
    /// cap applies). Behind a reverse proxy every client has the proxy's address: raise
    /// this, or cap per client at the proxy.
    pub max_streams_per_address: usize,
    /// Streams of anonymous callers open at once, all together (default 128, see
    /// [`DEFAULT_MAX_ANONYMOUS_STREAMS`]). When the authenticator [admits
    /// anyone](Authenticator::admits_anyone), every caller counts as anonymous here: a
    /// principal that costs nothing to name is no bound. One more is `429` as above.
    pub max_anonymous_streams: usize,
    /// Streams of anonymous callers (as above) from one peer address (default 8, see
    /// [`DEFAULT_MAX_ANONYMOUS_STREAMS_PER_ADDRESS`]). One more is `429` as above.
    pub max_anonymous_streams_per_address: usize,
    /// How long a stream may stay open (default 30 minutes, see
    /// [`DEFAULT_MAX_STREAM_LIFETIME`]). Then the server ends it gracefully: a listen
    /// stream gets its `subscriptions/listen` result (as at shutdown) and ends, and the
    /// client listens again; a legacy `GET` stream ends, and the client opens a new one.
    /// (A legacy call waiting on a person is bounded by
    /// [`session_request_timeout`](Self::session_request_timeout) instead.)
    pub max_stream_lifetime: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            path: DEFAULT_PATH.to_owned(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            origins: OriginPolicy::default(),
            authenticator: Arc::new(AnonymousAuth),
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_body_bytes_in_flight: DEFAULT_MAX_BODY_BYTES_IN_FLIGHT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            session_request_timeout: DEFAULT_SESSION_REQUEST_TIMEOUT,
            sse_buffer: DEFAULT_SSE_BUFFER,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            send_buffer_bytes: Some(DEFAULT_SEND_BUFFER_BYTES),
            listen_keep_alive: DEFAULT_LISTEN_KEEP_ALIVE,
            max_streams: None,
            max_streams_per_principal: DEFAULT_MAX_STREAMS_PER_PRINCIPAL,
            max_streams_per_address: DEFAULT_MAX_STREAMS_PER_ADDRESS,
            max_anonymous_streams: DEFAULT_MAX_ANONYMOUS_STREAMS,
            max_anonymous_streams_per_address: DEFAULT_MAX_ANONYMOUS_STREAMS_PER_ADDRESS,
            max_stream_lifetime: DEFAULT_MAX_STREAM_LIFETIME,
        }
    }
}

impl HttpConfig {
    /// Sets the endpoint path (a leading `/` is added when missing).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let p = path.into();
        self.path = if p.starts_with('/') {
            p
        } else {
            format!("/{p}")
        };
        self
    }

    /// Sets the request body limit in bytes.
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Replaces the origin policy.
    pub fn origins(mut self, policy: OriginPolicy) -> Self {
        self.origins = policy;
        self
    }

    /// Accepts one more origin (in addition to the current policy).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.allowed.push(origin.into());
        self
    }

    /// Sets the authenticator.
    pub fn authenticator(mut self, auth: impl Authenticator + 'static) -> Self {
        self.authenticator = Arc::new(auth);
        self
    }

    /// Sets the limit of requests in progress at once (at least 1).
    pub fn max_concurrent_requests(mut self, n: usize) -> Self {
        self.max_concurrent_requests = n.max(1);
        self
    }

    /// Sets the budget of request-body bytes received and being parsed at once (at least
    /// 1; see [`HttpConfig::max_body_bytes_in_flight`]).
    pub fn max_body_bytes_in_flight(mut self, n: usize) -> Self {
        self.max_body_bytes_in_flight = n.max(1);
        self
    }

    /// Sets the time allowed to receive a request body.
    pub fn body_read_timeout(mut self, t: Duration) -> Self {
        self.body_read_timeout = t;
        self
    }

    /// Sets the time a request may run.
    pub fn request_timeout(mut self, t: Duration) -> Self {
        self.request_timeout = t;
        self
    }

    /// Sets the time a request of a legacy session may run.
    pub fn session_request_timeout(mut self, t: Duration) -> Self {
        self.session_request_timeout = t;
        self
    }

    /// Sets [`listen_keep_alive`](Self::listen_keep_alive) (at least 10 ms).
    pub fn listen_keep_alive(mut self, every: Duration) -> Self {
        self.listen_keep_alive = every.max(Duration::from_millis(10));
        self
    }

    /// Sets the number of notifications an SSE stream buffers (at least 1).
    pub fn sse_buffer(mut self, n: usize) -> Self {
        self.sse_buffer = n.max(1);
        self
    }

    /// Sets the time allowed to receive a request's headers ([`serve`](super::serve), [`spawn`](super::spawn)).
    pub fn header_read_timeout(mut self, t: Duration) -> Self {
        self.header_read_timeout = t;
        self
    }

    /// Sets the limit of open connections ([`serve`](super::serve), [`spawn`](super::spawn); at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sets the time a write to a connection may make no progress ([`serve`](super::serve), [`spawn`](super::spawn)).
    pub fn write_timeout(mut self, t: Duration) -> Self {
        self.write_timeout = t;
        self
    }

    /// Sets the kernel send buffer of each connection ([`serve`](super::serve), [`spawn`](super::spawn)); `None`
    /// leaves the operating system's automatic sizing.
    pub fn send_buffer_bytes(mut self, bytes: Option<usize>) -> Self {
        self.send_buffer_bytes = bytes;
        self
    }

    /// Sets the budget of long-lived streams (see [`max_streams`](Self::max_streams)); it
    /// must stay below [`max_connections`](Self::max_connections).
    pub fn max_streams(mut self, n: usize) -> Self {
        self.max_streams = Some(n);
        self
    }

    /// Sets the streams one principal may hold open.
    pub fn max_streams_per_principal(mut self, n: usize) -> Self {
        self.max_streams_per_principal = n;
        self
    }

    /// Sets the streams one peer address (an IPv6 /64) may hold open.
    pub fn max_streams_per_address(mut self, n: usize) -> Self {
        self.max_streams_per_address = n;
        self
    }

    /// Sets the streams anonymous callers may hold open together (0: none).
    pub fn max_anonymous_streams(mut self, n: usize) -> Self {
        self.max_anonymous_streams = n;
        self
    }

    /// Sets the streams anonymous callers may hold open from one peer address (0: none).
    pub fn max_anonymous_streams_per_address(mut self, n: usize) -> Self {
        self.max_anonymous_streams_per_address = n;
        self
    }

    /// Sets how long a stream may stay open before the server ends it gracefully (at
    /// least 10 ms).
    pub fn max_stream_lifetime(mut self, t: Duration) -> Self {
        self.max_stream_lifetime = t.max(Duration::from_millis(10));
        self
    }

    /// The stream budget in force: [`max_streams`](Self::max_streams), or when unset
    /// [`max_connections`](Self::max_connections) minus a quarter of it, rounded up (768 of
    /// 1024; 0 when there is a single connection).
    pub fn stream_budget(&self) -> usize {
        let connections = self.max_connections.max(1);
        self.max_streams
            .unwrap_or_else(|| connections - connections.div_ceil(DEFAULT_STREAM_HEADROOM_DIVISOR))
    }

    /// Checks that the values work together: a [`max_streams`](Self::max_streams) that is
    /// not below [`max_connections`](Self::max_connections) is refused, since streams could
    /// then take every connection. [`serve`](super::serve) and [`spawn`](super::spawn)
    /// call it before binding.
    ///
    /// # Errors
    /// The first combination that does not hold.
    pub fn validate(&self) -> Result<(), HttpConfigError> {
        let max_connections = self.max_connections.max(1);
        if let Some(max_streams) = self.max_streams
            && max_streams >= max_connections
        {
            return Err(HttpConfigError::StreamsNotBelowConnections {
                max_streams,
                max_connections,
            });
        }
        Ok(())
    }
}
