//! What the round engine keeps in a `requestState` besides the code's own state: the
//! requests it waits for (whole, or only their kind when the code makes them again), and
//! with the journal the answers so far. The envelope around it is [`crate::seal`]'s; the
//! code's own state (a generated stage and its variables) is `__private::stage`'s.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::context::{Journal, request_digest};
use crate::protocol::{Capability, InputRequest};

/// What the server keeps in a state between rounds: the code's state (`s`), the requests it
/// is waiting for (`p`), and with the journal the answers so far, each with its request's
/// digest (`j`), the keys requested since the call (re)started (`u`) and the single-use id
/// (`o`). Short names: the state travels to the client and back on every round. (The call's
/// trace context is the token's trace segment, see [`crate::seal`].)
#[derive(Deserialize)]
pub(super) struct Payload {
    #[serde(rename = "s")]
    pub(super) state: Box<RawValue>,
    #[serde(rename = "p", default)]
    pub(super) pending: BTreeMap<String, Pending>,
    #[serde(rename = "j", default)]
    pub(super) journal: Option<Journal>,
    #[serde(rename = "u", default)]
    pub(super) used: BTreeSet<String>,
    #[serde(rename = "o", default)]
    pub(super) once: Option<Once>,
}

/// The single-use id of a state (`#[mcp_tool(once)]`) and when the state expires (Unix
/// seconds): the ledger keeps the round's claim and outcome under `i` until `e`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Once {
    /// The id: 128 random bits, URL-safe base64.
    #[serde(rename = "i")]
    pub(crate) id: String,
    /// The state's expiry, Unix seconds.
    #[serde(rename = "e")]
    pub(crate) expires: u64,
}

/// [`Payload`] as written: borrowed, serialized straight to the sealed JSON text.
#[derive(Serialize)]
pub(super) struct PayloadOut<'a> {
    #[serde(rename = "s")]
    pub(super) state: &'a RawValue,
    #[serde(rename = "p", skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) pending: BTreeMap<&'a str, PendingOut<'a>>,
    #[serde(rename = "j", skip_serializing_if = "Option::is_none")]
    pub(super) journal: Option<&'a Journal>,
    #[serde(rename = "u", skip_serializing_if = "BTreeSet::is_empty")]
    pub(super) used: &'a BTreeSet<String>,
    #[serde(rename = "o", skip_serializing_if = "Option::is_none")]
    pub(super) once: Option<Once>,
}

/// A pending request as written (see [`Pending`]).
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum PendingOut<'a> {
    Stored(&'a InputRequest),
    Kind(std::borrow::Cow<'static, str>),
}

/// How a regenerated request's kind is written in the state.
const KIND_CODES: [(&str, Capability); 3] = [
    ("e", Capability::Elicitation),
    ("s", Capability::Sampling),
    ("r", Capability::Roots),
];

/// A request the code waits for, as kept in the state.
#[derive(Debug, Deserialize)]
#[serde(try_from = "PendingIn")]
pub(crate) enum Pending {
    /// The request itself (a hand-written tool's: the server asks it again by itself).
    /// Boxed: a request is a few hundred bytes, and a map node holds room for eleven
    /// entries, which would make every state's pending map a large allocation.
    Stored(Box<InputRequest>),
    /// Only its kind, and with the journal its digest: the code makes it again from its own
    /// state when it must be asked again (`#[mcp_tool]` and friends). Kept as `"e"`, `"s"`
    /// or `"r"`, with `":<digest>"` after it under the journal.
    Regenerated {
        kind: Capability,
        digest: Option<String>,
    },
}

impl Pending {
    pub(super) fn kind(&self) -> Capability {
        match self {
            Pending::Stored(r) => r.capability(),
            Pending::Regenerated { kind, .. } => *kind,
        }
    }

    /// The kept form of `req`: its kind (and digest with the journal) when the code can make
    /// it again, else the request.
    pub(super) fn keep(req: &InputRequest, regenerated: bool, journal: bool) -> PendingOut<'_> {
        if !regenerated {
            return PendingOut::Stored(req);
        }
        let kind = req.capability();
        let code = KIND_CODES
            .iter()
            .find(|(_, k)| *k == kind)
            .map_or("?", |(c, _)| *c);
        PendingOut::Kind(if journal {
            format!("{code}:{}", request_digest(req)).into()
        } else {
            code.into()
        })
    }
}

/// A pending request as read: a kind code (`"e"`, or `"e:<digest>"`), or the request.
#[derive(Deserialize)]
#[serde(untagged)]
enum PendingIn {
    Code(String),
    Stored(Box<InputRequest>),
}

impl TryFrom<PendingIn> for Pending {
    type Error = &'static str;

    fn try_from(read: PendingIn) -> Result<Self, Self::Error> {
        let code = match read {
            PendingIn::Stored(r) => return Ok(Pending::Stored(r)),
            PendingIn::Code(code) => code,
        };
        let (code, digest) = match code.split_once(':') {
            Some((c, d)) => (c, Some(d.to_owned())),
            None => (code.as_str(), None),
        };
        let kind = KIND_CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, k)| *k)
            .ok_or("unknown pending request kind")?;
        Ok(Pending::Regenerated { kind, digest })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<Pending, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// What `Pending::keep` writes reads back as the same kind (and digest); anything else
    /// in a pending entry is refused.
    #[test]
    fn a_pending_entry_reads_back_as_it_was_kept() {
        let req = InputRequest::Roots(crate::protocol::ListRootsParams::default());
        for journal in [false, true] {
            let kept = serde_json::to_string(&Pending::keep(&req, true, journal)).unwrap();
            match read(&kept).unwrap() {
                Pending::Regenerated { kind, digest } => {
                    assert_eq!(kind, Capability::Roots);
                    assert_eq!(digest.is_some(), journal, "{kept}");
                    if let Some(d) = digest {
                        assert_eq!(d, request_digest(&req));
                    }
                }
                other => panic!("{kept}: {other:?}"),
            }
        }
        let stored = serde_json::to_string(&Pending::keep(&req, false, false)).unwrap();
        assert!(matches!(read(&stored).unwrap(), Pending::Stored(r) if *r == req));
        for (code, kind) in [
            ("\"e\"", Capability::Elicitation),
            ("\"s:x\"", Capability::Sampling),
        ] {
            assert_eq!(read(code).unwrap().kind(), kind);
        }
        for bad in ["\"q\"", "\"\"", "5", "[]", "{\"method\":\"nope\"}"] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert!(
            read("\"q\"")
                .unwrap_err()
                .to_string()
                .contains("unknown pending request kind")
        );
    }
}
