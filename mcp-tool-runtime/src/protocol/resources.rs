//! `resources/list`, `resources/templates/list`, `resources/read` and `completion/complete`.

use serde::{Deserialize, Serialize};

use super::{Annotations, JsonObject, ResourceContents, ResourceDescriptor, ResultType};

/// A resource template as listed by `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceTemplateDescriptor {
    /// The RFC 6570 URI template.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Name.
    pub name: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Other members (`icons`, `_meta`).
    #[serde(flatten)]
    pub extra: JsonObject,
}

cacheable_result! {
    /// Result of `resources/list`.
    ListResourcesResult, paginated {
        /// The resources of this page.
        pub resources: Vec<ResourceDescriptor>,
    }
}

cacheable_result! {
    /// Result of `resources/templates/list`.
    ListResourceTemplatesResult, paginated {
        /// The templates of this page.
        #[serde(rename = "resourceTemplates")]
        pub resource_templates: Vec<ResourceTemplateDescriptor>,
    }
}

cacheable_result! {
    /// Result of a completed `resources/read`.
    ReadResourceResult {
        /// The contents (never empty for a resource that exists).
        pub contents: Vec<ResourceContents>,
    }
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type,
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents (`bytes` are base64-encoded).
    pub fn blob(uri: impl Into<String>, mime_type: Option<String>, bytes: &[u8]) -> Self {
        use base64::Engine as _;
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        }
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// The completion of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Suggestions, best first (at most 100 on the wire).
    pub values: Vec<String>,
    /// How many matches there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more matches than `values`.
    #[serde(default, rename = "hasMore", skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// Result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// Always `complete`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// The suggestions.
    pub completion: Completion,
    /// `_meta` (server info).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}
