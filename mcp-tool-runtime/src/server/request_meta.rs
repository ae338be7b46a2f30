//! Validation of request `_meta` (every request).

use serde::Deserialize;
use serde_json::Value;

use serde_json::value::RawValue;

use crate::protocol::errors::{invalid_params, unsupported_version};
use crate::protocol::text::{self, ParamsIn};
use crate::protocol::{
    ClientCapabilities, ErrorObject, JsonObject, LogLevel, META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL, META_PROTOCOL_VERSION, SUPPORTED_VERSIONS,
};

/// What a valid `_meta` tells the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidMeta {
    /// The protocol version (supported).
    pub protocol_version: String,
    /// The declared client capabilities.
    pub capabilities: ClientCapabilities,
    /// The log level the client asked for (none: no log messages for this request).
    pub log_level: Option<LogLevel>,
}

/// Checks `params._meta`: -32602 when `_meta`, the version (or a string version) or the
/// capabilities are missing; -32022 when the version is not supported.
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

/// The client's capabilities from their text (an object); -32602 when they do not parse,
/// with the message a tree's deserialization gives (no text position).
fn capabilities(raw: &RawValue) -> Result<ClientCapabilities, ErrorObject> {
    let invalid = |e: serde_json::Error| {
        invalid_params(format!(
            "_meta[\"{META_CLIENT_CAPABILITIES}\"] is invalid: {e}"
        ))
    };
    serde_json::from_str(raw.get()).or_else(|_| {
        let tree: Value = serde_json::from_str(raw.get()).map_err(invalid)?;
        ClientCapabilities::deserialize(&tree).map_err(invalid)
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

    /// Deserializing from the borrowed `clientCapabilities` (issue 18, item 9) gives what
    /// deserializing a copy gave: the same capabilities, unknown members included, and the
    /// same -32602 text for invalid ones.
    #[test]
    fn capabilities_read_in_place_are_what_a_copy_gave() {
        let cases = [
            json!({}),
            json!({"elicitation": {"form": {}, "url": {}, "x": 1}, "sampling": {}, "roots": {}}),
            json!({"experimental": {"a": [1, 2]}, "extensions": {"e": {}}, "other": "kept"}),
            json!({"elicitation": 5}),
            json!({"sampling": "yes"}),
            json!({"roots": []}),
            json!({"sampling": {"context": {}, "tools": {}, "z": [1]}, "elicitation": {"url": {}}}),
            json!({"elicitation": {"form": null, "y": "kept"}}),
            json!({"elicitation": {"form": 3}}),
            json!({"sampling": {"tools": []}}),
        ];
        for caps in cases {
            let copied = serde_json::from_value::<ClientCapabilities>(caps.clone());
            let got = validate_meta(Some(&params(caps.clone())));
            match (copied, got) {
                (Ok(want), Ok(meta)) => assert_eq!(meta.capabilities, want, "{caps}"),
                (Err(e), Err(err)) => {
                    assert_eq!(err.code, crate::protocol::INVALID_PARAMS, "{caps}");
                    assert_eq!(
                        err.message,
                        invalid_params(format!(
                            "_meta[\"{META_CLIENT_CAPABILITIES}\"] is invalid: {e}"
                        ))
                        .message,
                        "{caps}"
                    );
                }
                (want, got) => panic!("{caps}: a copy gave {want:?}, in place {got:?}"),
            }
        }
        // read member by member, the capabilities keep a derive's error text
        let err = validate_meta(Some(&params(json!({"elicitation": 5})))).unwrap_err();
        assert!(
            err.message
                .ends_with("invalid type: integer `5`, expected struct ElicitationCapability"),
            "{}",
            err.message
        );
        let caps = validate_meta(Some(&params(json!({"sampling": {"x": 1, "tools": {}}}))))
            .unwrap()
            .capabilities;
        let sampling = caps.sampling.unwrap();
        assert!(sampling.tools.is_some() && sampling.context.is_none());
        assert_eq!(sampling.extra["x"], 1);
    }

    /// A capability member sent twice counts once, the last, at every level: what a tree of
    /// the same text holds (a derive would refuse the text and accept the tree).
    #[test]
    fn a_repeated_capability_member_is_the_last_one_as_in_a_tree() {
        let text = r#"{"elicitation":{"url":{"a":1},"url":{"b":2}},"roots":{},"roots":null,
            "x":1,"x":2}"#;
        let raw = serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
        let in_place = capabilities(&raw).unwrap();
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(in_place, ClientCapabilities::deserialize(&tree).unwrap());
        assert_eq!(in_place.elicitation.unwrap().url.unwrap()["b"], 2);
        assert!(in_place.roots.is_none());
        assert_eq!(in_place.extra["x"], 2);
    }
}
