//! The legacy lifecycle: `initialize` and its version negotiation, the `InitializeResult`,
//! and the shape of legacy results (modern-only members removed).

use serde_json::{Value, json};

use serde::Deserialize as _;

use crate::protocol::errors;
use crate::protocol::{
    ClientCapabilities, ErrorObject, INVALID_PARAMS, Implementation, JsonObject,
};

/// The legacy protocol versions served, newest first.
///
/// - `2025-11-25`: today's hosts and the official SDKs (Python 1.x, rmcp in `Initialize`).
/// - `2025-06-18`: the first revision with elicitation; its messages are those of 2025-11-25
///   without URL-mode elicitation, icons and tasks, which a 2025-06-18 client never asks for.
///
/// Older revisions are not served: 2025-03-26 has no elicitation and requires JSON-RPC
/// batching, and 2024-11-05 uses the HTTP+SSE transport. A client asking for one of them is
/// answered with `2025-11-25`, and decides itself whether to go on (as the lifecycle says).
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18"];

/// The version to answer an `initialize` for `requested` with: the same when served,
/// else the newest legacy version.
pub fn negotiate(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// Longest client name and version a session keeps, in characters (control characters
/// dropped).
pub const MAX_CLIENT_NAME: usize = 64;

/// What a session keeps of a client's `initialize`: the negotiated version, the capability
/// flags the server acts on and a bounded client name — never the body as sent. Its size is
/// bounded whatever the client sent (see [`Hello::kept_bytes`]).
#[derive(Debug, Clone)]
pub struct Hello {
    /// The version negotiated (see [`negotiate`]).
    pub version: &'static str,
    /// The client's capabilities, reduced to their flags ([`ClientCapabilities::flags`]):
    /// `experimental`, `extensions` and unknown members are not kept.
    pub capabilities: ClientCapabilities,
    /// `clientInfo.name` and `clientInfo.version`, each cut to [`MAX_CLIENT_NAME`]
    /// characters without control characters; nothing else of `clientInfo` is kept.
    pub client_info: Implementation,
}

impl Hello {
    /// An estimate of the bytes this takes, on the heap included: bounded (a few hundred
    /// bytes) whatever the `initialize` body held.
    pub fn kept_bytes(&self) -> usize {
        let caps = serde_json::to_string(&self.capabilities).map_or(0, |s| s.len());
        std::mem::size_of::<Self>()
            + self.client_info.name.len()
            + self.client_info.version.len()
            // each flag is an empty map or a struct of them: a small multiple of its JSON
            + 8 * caps
    }
}

/// Reads the params of an `initialize` request: -32602 when they are not what the legacy
/// schema requires (`protocolVersion` a string, `capabilities` an object, `clientInfo` an
/// object with a `name`). Returns what a session keeps, and the version the client asked
/// for (as sent: to be logged through [`for_log`](crate::protocol::errors::for_log)
/// only).
pub fn parse_initialize(params: Option<&JsonObject>) -> Result<(Hello, &str), ErrorObject> {
    let bad = |m: &str| ErrorObject::new(INVALID_PARAMS, format!("Invalid params: {m}"));
    let params = params.ok_or_else(|| bad("initialize needs params"))?;
    let requested = params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("`protocolVersion` must be a string"))?;
    let capabilities = match params.get("capabilities") {
        // read in place (no copy of what the client sent), then only the flags are kept
        Some(c @ Value::Object(_)) => ClientCapabilities::deserialize(c)
            .map_err(|e| bad(&format!("`capabilities`: {e}")))?
            .flags(),
        _ => return Err(bad("`capabilities` must be an object")),
    };
    let client_info = match params.get("clientInfo") {
        Some(Value::Object(o)) => match o.get("name") {
            Some(Value::String(name)) => {
                let version = o.get("version").and_then(Value::as_str).unwrap_or("");
                Implementation::new(
                    errors::printable(name, MAX_CLIENT_NAME),
                    errors::printable(version, MAX_CLIENT_NAME),
                )
            }
            _ => return Err(bad("`clientInfo` must be an object with a `name`")),
        },
        _ => return Err(bad("`clientInfo` must be an object with a `name`")),
    };
    let hello = Hello {
        version: negotiate(requested),
        capabilities,
        client_info,
    };
    Ok((hello, requested))
}

/// The error a modern-only server answers `initialize` with: the shape of the legacy
/// lifecycle's "Unsupported protocol version" (-32602 with `data.supported` and
/// `data.requested`), naming the versions it serves, as the versioning page asks.
pub fn modern_only(requested: Option<&str>) -> ErrorObject {
    let supported = crate::protocol::SUPPORTED_VERSIONS;
    ErrorObject::new(
        INVALID_PARAMS,
        format!(
            "Unsupported protocol version: this server serves only {} (stateless: no initialize; \
             requests carry `_meta`, start with server/discover)",
            supported.join(", ")
        ),
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

/// Members a modern result has and a legacy one does not: removed from every result sent in
/// a legacy session.
const MODERN_ONLY_MEMBERS: &[&str] = &["resultType", "ttlMs", "cacheScope"];

/// `result` in its legacy shape.
pub fn to_legacy(mut result: Value) -> Value {
    if let Value::Object(m) = &mut result {
        for k in MODERN_ONLY_MEMBERS {
            m.remove(*k);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_keeps_a_served_version_and_offers_the_newest_otherwise() {
        assert_eq!(negotiate("2025-11-25"), "2025-11-25");
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2025-03-26"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
        assert_eq!(negotiate("nonsense"), "2025-11-25");
    }

    #[test]
    fn initialize_params_are_checked() {
        let ok = json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
                        "clientInfo": {"name": "c", "version": "1"}});
        let (h, requested) = parse_initialize(ok.as_object()).expect("valid");
        assert_eq!(requested, "2025-11-25");
        assert_eq!(h.version, "2025-11-25");
        assert!(h.capabilities.sampling.is_some());
        for bad in [
            json!({}),
            json!({"protocolVersion": 1, "capabilities": {}, "clientInfo": {"name": "c"}}),
            json!({"protocolVersion": "2025-11-25", "capabilities": [], "clientInfo": {"name": "c"}}),
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}),
            json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": 3}, "clientInfo": {"name": "c"}}),
        ] {
            let e = parse_initialize(bad.as_object()).expect_err("invalid");
            assert_eq!(e.code, INVALID_PARAMS, "{bad}");
        }
        assert!(parse_initialize(None).is_err());
    }

    #[test]
    fn legacy_results_lose_the_modern_members_only() {
        let r = to_legacy(
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "public",
                                 "tools": [], "_meta": {"x": 1}}),
        );
        assert_eq!(r, json!({"tools": [], "_meta": {"x": 1}}));
    }
}
