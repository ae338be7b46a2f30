//! Validation of request `_meta` (every request).

use serde_json::Value;

use crate::protocol::errors::{invalid_params, unsupported_version};
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
    let meta = match params.and_then(|p| p.get("_meta")) {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(invalid_params("params._meta must be an object")),
        None => return Err(invalid_params("Missing params._meta")),
    };
    let version = match meta.get(META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v,
        Some(_) => {
            return Err(invalid_params(format!(
                "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )));
        }
        None => {
            return Err(invalid_params(format!(
                "Missing _meta[\"{META_PROTOCOL_VERSION}\"]"
            )));
        }
    };
    if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
        return Err(unsupported_version(version));
    }
    let capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(v @ Value::Object(_)) => serde_json::from_value::<ClientCapabilities>(v.clone())
            .map_err(|e| {
                invalid_params(format!(
                    "_meta[\"{META_CLIENT_CAPABILITIES}\"] is invalid: {e}"
                ))
            })?,
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
    let log_level = match meta.get(META_LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            invalid_params(format!(
                "_meta[\"{META_LOG_LEVEL}\"] must be one of debug, info, notice, warning, error, critical, alert, emergency"
            ))
        })?),
    };
    Ok(ValidMeta {
        protocol_version: version.clone(),
        capabilities,
        log_level,
    })
}
