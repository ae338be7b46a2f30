//! `server/discover`.

use serde::{Deserialize, Serialize};

use super::{CacheScope, JsonObject, ResultType, ServerCapabilities};

/// Result of `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoverResult {
    /// Always `complete`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// Protocol versions the server supports.
    #[serde(rename = "supportedVersions")]
    pub supported_versions: Vec<String>,
    /// Server capabilities.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Cache freshness in milliseconds.
    #[serde(rename = "ttlMs")]
    pub ttl_ms: u64,
    /// Cache scope.
    #[serde(rename = "cacheScope")]
    pub cache_scope: CacheScope,
    /// `_meta` (server info).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
