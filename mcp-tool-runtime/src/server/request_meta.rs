//! Validation of request `_meta` (every request).

use serde_json::Value;

use serde_json::value::RawValue;

use crate::protocol::errors::{invalid_params, unsupported_version};
use crate::protocol::text::{self, ParamsIn};
use crate::protocol::{
    ClientCapabilities, ErrorObject, JsonObject, LogLevel, MAX_META_BYTES,
    META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION, SUPPORTED_VERSIONS,
};

/// What a valid `_meta` tells the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidMeta {
    /// The protocol version (supported).
    pub protocol_version: String,
    /// The declared client capabilities the server acts on: `roots` (`listChanged`),
    /// `sampling` (`context`, `tools`) and `elicitation` (`form`, `url`) as flags, and
    /// `extensions` as sent (at most 4 KiB of text). `experimental` and unknown members are
    /// skipped, never built.
    pub capabilities: ClientCapabilities,
    /// The log level the client asked for (none: no log messages for this request).
    pub log_level: Option<LogLevel>,
}

/// Checks `params._meta`: -32602 when `_meta`, the version (or a string version) or the
/// capabilities are missing, or when `_meta`'s text is longer than [`MAX_META_BYTES`];
/// -32022 when the version is not supported. Of the capabilities only what the server acts
/// on is kept ([`ValidMeta::capabilities`]).
pub fn validate_meta(params: Option<&JsonObject>) -> Result<ValidMeta, ErrorObject> {
    /// The params' `_meta` alone, written as text to be read as a request's.
    #[derive(serde::Serialize)]
    struct Only<'a> {
        #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<&'a Value>,
    }
    let text = match params {
        None => None,
        Some(p) => Some(
            serde_json::value::to_raw_value(&Only {
                meta: p.get("_meta"),
            })
            .map_err(|e| invalid_params(format!("params._meta does not serialize: {e}")))?,
        ),
    };
    validate_meta_in(text.as_deref().and_then(ParamsIn::parse).as_ref())
}

/// [`validate_meta`] of params read from their text.
pub(crate) fn validate_meta_in(params: Option<&ParamsIn<'_>>) -> Result<ValidMeta, ErrorObject> {
    let Some(params) = params.filter(|p| p.has_meta) else {
        return Err(invalid_params("Missing params._meta"));
    };
    if params.meta_len > MAX_META_BYTES {
        return Err(invalid_params(format!(
            "params._meta is longer than {MAX_META_BYTES} bytes"
        )));
    }
    let Some(meta) = params.meta.object() else {
        return Err(invalid_params("params._meta must be an object"));
    };
    let version = match meta.version {
        Some(v) => text::string(v).ok_or_else(|| {
            invalid_params(format!(
                "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            ))
        })?,
        None => {
            return Err(invalid_params(format!(
                "Missing _meta[\"{META_PROTOCOL_VERSION}\"]"
            )));
        }
    };
    if !SUPPORTED_VERSIONS.contains(&version.as_ref()) {
        return Err(unsupported_version(&version));
    }
    let capabilities = match meta.capabilities {
        Some(v) if text::is_object(v) => capabilities(v)?,
        Some(_) => {
            return Err(invalid_params(format!(
                "_meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"
            )));
        }
        None => {
            return Err(invalid_params(format!(
                "Missing _meta[\"{META_CLIENT_CAPABILITIES}\"]"
            )));
        }
    };
    let log_level = match meta.log_level {
        None => None,
        Some(v) if text::is_null(v) => None,
        Some(_) => Some(meta.log_level().ok_or_else(|| {
            invalid_params(format!(
                "_meta[\"{META_LOG_LEVEL}\"] must be one of debug, info, notice, warning, error, critical, alert, emergency"
            ))
        })?),
    };
    Ok(ValidMeta {
        protocol_version: version.into_owned(),
        capabilities,
        log_level,
    })
}

/// The client's capabilities from their text (an object), keeping only what the server acts
/// on ([`ClientCapabilities::read_kept`]); -32602 when they do not parse.
fn capabilities(raw: &RawValue) -> Result<ClientCapabilities, ErrorObject> {
    ClientCapabilities::read_kept(raw.get()).map_err(|e| {
        invalid_params(format!(
            "_meta[\"{META_CLIENT_CAPABILITIES}\"] is invalid: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(caps: Value) -> JsonObject {
        let p = json!({"_meta": {
            META_PROTOCOL_VERSION: SUPPORTED_VERSIONS[0],
            META_CLIENT_CAPABILITIES: caps,
        }});
        match p {
            Value::Object(p) => p,
            _ => unreachable!(),
        }
    }

    /// The capabilities keep what the server acts on: the flags of `roots` (with a boolean
    /// `listChanged`), `sampling` and `elicitation`, and `extensions` as sent; nothing of
    /// `experimental` or unknown members at any level. A known member of the wrong type is
    /// -32602 with a derive's error text.
    #[test]
    fn capabilities_keep_only_what_the_server_acts_on() {
        let kept = |caps: Value| validate_meta(Some(&params(caps))).map(|m| m.capabilities);
        let cases = [
            (json!({}), json!({})),
            (
                json!({"elicitation": {"form": {"a": 1}, "url": {}, "x": 1}, "sampling": {}, "roots": {}}),
                json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}),
            ),
            (
                json!({"experimental": {"a": [1, 2]}, "extensions": {"e": {"s": 1}}, "other": "x"}),
                json!({"extensions": {"e": {"s": 1}}}),
            ),
            (
                json!({"sampling": {"context": {"big": [1]}, "tools": {}, "z": [1]}}),
                json!({"sampling": {"context": {}, "tools": {}}}),
            ),
            (
                json!({"roots": {"listChanged": true, "pad": [1]}, "elicitation": {"form": null}}),
                json!({"roots": {"listChanged": true}, "elicitation": {}}),
            ),
            (json!({"roots": {"listChanged": [1]}}), json!({"roots": {}})),
        ];
        for (caps, want) in cases {
            let got = kept(caps.clone()).unwrap_or_else(|e| panic!("{caps}: {e:?}"));
            assert_eq!(serde_json::to_value(&got).unwrap(), want, "{caps}");
        }
        for (caps, ends) in [
            (
                json!({"elicitation": 5}),
                "invalid type: integer `5`, expected struct ElicitationCapability",
            ),
            (
                json!({"sampling": "yes"}),
                "expected struct SamplingCapability",
            ),
            (
                json!({"roots": []}),
                "invalid type: sequence, expected a map",
            ),
            (json!({"elicitation": {"form": 3}}), "expected a map"),
            (json!({"sampling": {"tools": []}}), "expected a map"),
            (json!({"extensions": 1}), "expected a map"),
        ] {
            let err = kept(caps.clone()).unwrap_err();
            assert_eq!(err.code, crate::protocol::INVALID_PARAMS, "{caps}");
            assert!(err.message.contains(ends), "{caps}: {}", err.message);
        }
        // a deep unknown member is skipped, not refused
        let deep: Value =
            serde_json::from_str(&format!("{}1{}", "[".repeat(120), "]".repeat(120))).unwrap();
        assert!(kept(json!({"x": deep})).is_ok());
        // `extensions` is bounded
        let long = json!({"extensions": {"e": {"s": "x".repeat(crate::protocol::MAX_REQUEST_EXTENSIONS_BYTES)}}});
        assert!(
            kept(long)
                .unwrap_err()
                .message
                .contains("`extensions` is longer than")
        );
    }

    /// A `_meta` longer than [`MAX_META_BYTES`] is -32602 whatever it holds.
    #[test]
    fn a_long_meta_is_refused() {
        let mut p = params(json!({}));
        p["_meta"]["pad"] = Value::String("x".repeat(MAX_META_BYTES));
        let err = validate_meta(Some(&p)).unwrap_err();
        assert_eq!(err.code, crate::protocol::INVALID_PARAMS);
        assert!(err.message.contains("longer than"), "{}", err.message);
        let mut p = params(json!({}));
        p["_meta"]["pad"] = Value::String("x".repeat(MAX_META_BYTES - 1024));
        assert!(validate_meta(Some(&p)).is_ok());
    }

    /// A capability member sent twice counts once, the last, at every level: what a tree of
    /// the same text holds.
    #[test]
    fn a_repeated_capability_member_is_the_last_one_as_in_a_tree() {
        let text = r#"{"elicitation":{"url":{"a":1},"url":null},"roots":{},"roots":null,
            "sampling":null,"sampling":{"tools":{}},"x":1,"x":2}"#;
        let raw = serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
        let in_place = capabilities(&raw).unwrap();
        assert!(in_place.elicitation.unwrap().url.is_none());
        assert!(in_place.roots.is_none());
        assert!(in_place.sampling.unwrap().tools.is_some());
        assert!(in_place.extra.is_empty());
    }
}
