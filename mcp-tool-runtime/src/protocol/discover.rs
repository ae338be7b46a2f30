//! `server/discover`.

use super::ServerCapabilities;

cacheable_result! {
    /// Result of `server/discover`.
    DiscoverResult {
        /// Protocol versions the server supports.
        #[serde(rename = "supportedVersions")]
        pub supported_versions: Vec<String>,
        /// Server capabilities.
        pub capabilities: ServerCapabilities,
        /// Guidance for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub instructions: Option<String>,
    }
}
