//! The budget of long-lived streams (`subscriptions/listen` streams and legacy sessions'
//! `GET` streams): in all, below the connection limit so that requests always find a
//! connection; per principal; per peer address; and for anonymous callers, all together
//! and per address. A stream holds a [`StreamSlot`] until its body is dropped.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::ConnectInfo;
use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;

use crate::principal::Principal;
use crate::throttle::release;

use super::config::*;
use super::respond::rpc_error;
use crate::sync::lock;

/// The caps of [`StreamBudget`], from [`HttpConfig`].
#[derive(Debug, Clone, Copy)]
struct Caps {
    total: usize,
    per_principal: usize,
    per_address: usize,
    anonymous: usize,
    anonymous_per_address: usize,
}

/// What is open, by what it counts against.
#[derive(Default)]
struct Open {
    total: usize,
    anonymous: usize,
    principals: HashMap<String, usize>,
    addresses: HashMap<IpAddr, usize>,
    anonymous_addresses: HashMap<IpAddr, usize>,
}

/// The streams open on one endpoint, against their caps.
pub(super) struct StreamBudget {
    caps: Caps,
    open: Mutex<Open>,
}

/// Why a stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Every slot of the budget is taken.
    Full,
    /// The principal holds as many streams as it may.
    Principal,
    /// The peer address holds as many streams as it may.
    Address,
    /// Anonymous callers hold as many streams as they may, together or from this address.
    Anonymous,
}

/// One open stream's place in the budget, given back when dropped.
pub(super) struct StreamSlot {
    budget: Arc<StreamBudget>,
    principal: Option<String>,
    address: Option<IpAddr>,
    anonymous: bool,
}

/// Who opens a stream, as the budget counts it.
pub(super) struct Opener {
    principal: Option<String>,
    address: Option<IpAddr>,
    anonymous: bool,
}

impl Opener {
    /// `principal`, admitted by an authenticator that does (`admits_anyone`) or does not
    /// let anyone in, from the peer address `peer` (see [`peer_of`]). The anonymous
    /// principal, and every principal of an authenticator that admits anyone, count as
    /// anonymous.
    pub(super) fn of(principal: &Principal, admits_anyone: bool, peer: Option<IpAddr>) -> Self {
        Opener {
            principal: principal.key().map(|k| k.into_owned()),
            address: peer.map(address_key),
            anonymous: admits_anyone || principal.is_anonymous(),
        }
    }
}

/// The peer address of the connection a request came on, when the server recorded it
/// ([`serve`](super::serve) and [`spawn`](super::spawn) always do; a router served with
/// `into_make_service_with_connect_info::<SocketAddr>()` too).
pub(super) fn peer_of(parts: &Parts) -> Option<IpAddr> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// The address a peer counts as: an IPv4 address as it is (also when mapped into IPv6),
/// an IPv6 address by its /64 prefix (a host usually holds a whole /64).
fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !((1u128 << 64) - 1))),
        },
    }
}

/// `map[key]`, 0 when absent (or when there is no key).
fn count<K: std::hash::Hash + Eq>(map: &HashMap<K, usize>, key: Option<&K>) -> usize {
    key.and_then(|k| map.get(k)).copied().unwrap_or(0)
}

/// Adds one to `map[key]`.
fn add<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: K) {
    *map.entry(key).or_default() += 1;
}

impl StreamBudget {
    /// The budget `config` sets.
    pub(super) fn of(config: &HttpConfig) -> Arc<Self> {
        Arc::new(StreamBudget {
            caps: Caps {
                total: config.stream_budget(),
                per_principal: config.max_streams_per_principal,
                per_address: config.max_streams_per_address,
                anonymous: config.max_anonymous_streams,
                anonymous_per_address: config.max_anonymous_streams_per_address,
            },
            open: Mutex::new(Open::default()),
        })
    }

    /// A slot for one more stream of `who`, or why not.
    pub(super) fn take(self: &Arc<Self>, who: Opener) -> Result<StreamSlot, Refused> {
        let caps = self.caps;
        let mut open = lock(&self.open);
        if open.total >= caps.total {
            return Err(Refused::Full);
        }
        if who.anonymous
            && (open.anonymous >= caps.anonymous
                || count(&open.anonymous_addresses, who.address.as_ref())
                    >= caps.anonymous_per_address)
        {
            return Err(Refused::Anonymous);
        }
        if who.principal.is_some()
            && count(&open.principals, who.principal.as_ref()) >= caps.per_principal
        {
            return Err(Refused::Principal);
        }
        if who.address.is_some() && count(&open.addresses, who.address.as_ref()) >= caps.per_address
        {
            return Err(Refused::Address);
        }
        open.total += 1;
        if let Some(p) = &who.principal {
            add(&mut open.principals, p.clone());
        }
        if let Some(a) = who.address {
            add(&mut open.addresses, a);
        }
        if who.anonymous {
            open.anonymous += 1;
            if let Some(a) = who.address {
                add(&mut open.anonymous_addresses, a);
            }
        }
        Ok(StreamSlot {
            budget: Arc::clone(self),
            principal: who.principal,
            address: who.address,
            anonymous: who.anonymous,
        })
    }

    /// How many streams are open.
    #[cfg(test)]
    fn open(&self) -> usize {
        lock(&self.open).total
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = lock(&self.budget.open);
        open.total = open.total.saturating_sub(1);
        if let Some(p) = &self.principal {
            release(&mut open.principals, p);
        }
        if let Some(a) = &self.address {
            release(&mut open.addresses, a);
        }
        if self.anonymous {
            open.anonymous = open.anonymous.saturating_sub(1);
            if let Some(a) = &self.address {
                release(&mut open.anonymous_addresses, a);
            }
        }
    }
}

/// The answer refusing a stream for `why` (the request's `id` when it has one): `503` with
/// `Retry-After: 1` when the whole budget is taken, `429` when the caller's share is; both
/// with [`LIMIT_EXCEEDED`] and `Connection: close` (a refused opener keeps no connection).
pub(super) fn refusal(why: Refused, config: &HttpConfig, id: Option<&Value>) -> Response {
    crate::telemetry::metrics::concurrency_refused("streams");
    let (status, message) = match why {
        Refused::Full => {
            throttled_warn!(
                max = config.stream_budget(),
                "too many long-lived streams open: refusing another"
            );
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "Server busy: too many open streams, retry later",
            )
        }
        Refused::Principal => {
            throttled_warn!(
                max = config.max_streams_per_principal,
                "a principal holds its most streams: refusing another"
            );
            (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many streams: this caller holds as many open streams as it may; \
                 close one first",
            )
        }
        Refused::Address => {
            throttled_warn!(
                max = config.max_streams_per_address,
                "a peer address holds its most streams: refusing another"
            );
            (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many streams: this address holds as many open streams as it may; \
                 close one first",
            )
        }
        Refused::Anonymous => {
            throttled_warn!(
                max = config.max_anonymous_streams,
                max_per_address = config.max_anonymous_streams_per_address,
                "anonymous callers hold their most streams: refusing another"
            );
            (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many streams: anonymous callers hold as many open streams as they may; \
                 authenticate, or close one first",
            )
        }
    };
    let mut resp = rpc_error(status, id, LIMIT_EXCEEDED, message);
    let h = resp.headers_mut();
    h.insert(CONNECTION, HeaderValue::from_static("close"));
    if why == Refused::Full {
        h.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(
        total: usize,
        principal: usize,
        address: usize,
        anon: usize,
        anon_addr: usize,
    ) -> Arc<StreamBudget> {
        StreamBudget::of(
            &HttpConfig::default()
                .max_connections(total + 1)
                .max_streams(total)
                .max_streams_per_principal(principal)
                .max_streams_per_address(address)
                .max_anonymous_streams(anon)
                .max_anonymous_streams_per_address(anon_addr),
        )
    }

    fn who(principal: Option<&str>, address: &str, anonymous: bool) -> Opener {
        Opener {
            principal: principal.map(str::to_owned),
            address: Some(address_key(address.parse().unwrap())),
            anonymous,
        }
    }

    #[test]
    fn each_cap_refuses_and_a_dropped_slot_is_given_back() {
        let b = budget(6, 2, 3, 2, 1);
        let a1 = b.take(who(Some("a"), "10.0.0.1", false)).unwrap();
        let _a2 = b.take(who(Some("a"), "10.0.0.2", false)).unwrap();
        let refused = b.take(who(Some("a"), "10.0.0.3", false)).err();
        assert_eq!(refused, Some(Refused::Principal));
        let _b1 = b.take(who(Some("b"), "10.0.0.1", false)).unwrap();
        let _c1 = b.take(who(Some("c"), "10.0.0.1", false)).unwrap();
        let refused = b.take(who(Some("d"), "10.0.0.1", false)).err();
        assert_eq!(refused, Some(Refused::Address));
        // anonymous: one per address, two in all
        let _n1 = b.take(who(None, "10.0.0.9", true)).unwrap();
        let refused = b.take(who(None, "10.0.0.9", true)).err();
        assert_eq!(refused, Some(Refused::Anonymous));
        let _n2 = b.take(who(Some("x"), "10.0.0.8", true)).unwrap();
        assert_eq!(b.open(), 6);
        let refused = b.take(who(Some("e"), "10.0.0.7", false)).err();
        assert_eq!(refused, Some(Refused::Full));
        drop(a1);
        assert_eq!(b.open(), 5);
        let refused = b.take(who(None, "10.0.0.7", true)).err();
        assert_eq!(refused, Some(Refused::Anonymous), "two anonymous in all");
        let _e = b.take(who(Some("e"), "10.0.0.7", false)).unwrap();
        // given back in full: principal, address and anonymous counts
        drop((_a2, _b1, _c1, _n1, _n2, _e));
        assert_eq!(b.open(), 0);
        let open = b.open.lock().unwrap();
        assert!(open.principals.is_empty() && open.addresses.is_empty());
        assert!(open.anonymous == 0 && open.anonymous_addresses.is_empty());
    }

    #[test]
    fn anonymous_callers_are_one_crowd() {
        let b = budget(10, 10, 10, 2, 10);
        let _s1 = b.take(who(Some("named-1"), "10.0.0.1", true)).unwrap();
        let _s2 = b.take(who(None, "10.0.0.2", true)).unwrap();
        assert_eq!(
            b.take(who(Some("named-3"), "10.0.0.3", true)).err(),
            Some(Refused::Anonymous)
        );
        // a verified principal is not one of them
        let _s3 = b.take(who(Some("named-3"), "10.0.0.3", false)).unwrap();
    }

    #[test]
    fn ipv6_peers_count_by_their_64_prefix_and_mapped_ipv4_as_ipv4() {
        let b = budget(10, 10, 2, 10, 10);
        let _s1 = b.take(who(Some("a"), "2001:db8::1", false)).unwrap();
        let _s2 = b.take(who(Some("b"), "2001:db8::ffff:2", false)).unwrap();
        assert_eq!(
            b.take(who(Some("c"), "2001:db8::abcd:1:2:3", false)).err(),
            Some(Refused::Address)
        );
        let _s3 = b.take(who(Some("c"), "2001:db8:0:1::1", false)).unwrap();
        assert_eq!(
            address_key("::ffff:10.1.2.3".parse().unwrap()),
            "10.1.2.3".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn without_a_peer_address_only_the_other_caps_apply() {
        let b = budget(3, 2, 1, 1, 1);
        let no_addr = |p: &str| Opener {
            principal: Some(p.to_owned()),
            address: None,
            anonymous: false,
        };
        let _s1 = b.take(no_addr("a")).unwrap();
        let _s2 = b.take(no_addr("a")).unwrap();
        assert_eq!(b.take(no_addr("a")).err(), Some(Refused::Principal));
        let _s3 = b.take(no_addr("b")).unwrap();
        assert_eq!(b.take(no_addr("c")).err(), Some(Refused::Full));
    }

    #[test]
    fn the_default_budget_keeps_a_quarter_of_the_connections_and_bad_budgets_are_refused() {
        let d = HttpConfig::default();
        assert_eq!(d.stream_budget(), 768);
        assert!(d.validate().is_ok());
        assert_eq!(
            HttpConfig::default().max_connections(24).stream_budget(),
            18
        );
        assert_eq!(HttpConfig::default().max_connections(1).stream_budget(), 0);
        assert_eq!(HttpConfig::default().max_connections(2).stream_budget(), 1);
        let bad = HttpConfig::default().max_connections(10).max_streams(10);
        let e = bad.validate().unwrap_err();
        assert_eq!(
            e,
            HttpConfigError::StreamsNotBelowConnections {
                max_streams: 10,
                max_connections: 10
            }
        );
        assert!(
            e.to_string().contains("must be below max_connections"),
            "{e}"
        );
        assert!(
            HttpConfig::default()
                .max_connections(10)
                .max_streams(9)
                .validate()
                .is_ok()
        );
    }
}
