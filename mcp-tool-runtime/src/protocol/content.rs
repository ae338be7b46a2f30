//! Content blocks of tool results and sampling messages.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JsonObject;

/// The sender or recipient of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (model).
    Assistant,
}

/// Optional annotations for the client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotations {
    /// Intended audience.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification.
    #[serde(rename = "lastModified", skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Base64 binary content (image or audio).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinaryContent {
    /// Base64-encoded data.
    pub data: String,
    /// MIME type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A resource as listed by `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceDescriptor {
    /// Its URI.
    pub uri: String,
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
    /// Size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Other members (`icons`, `_meta`).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A link to a resource the server can read: a resource as `resources/list` lists it, sent
/// as a content block (`type: "resource_link"`).
pub type ResourceLink = ResourceDescriptor;

/// Contents of a resource: text or base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// URI.
        uri: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// `_meta`.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// Binary contents.
    Blob {
        /// URI.
        uri: String,
        /// MIME type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
        /// `_meta`.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A content block of a tool result or prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// `type: "text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `type: "image"`.
    #[serde(rename = "image")]
    Image(BinaryContent),
    /// `type: "audio"`.
    #[serde(rename = "audio")]
    Audio(BinaryContent),
    /// `type: "resource_link"`.
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    /// `type: "resource"`.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An image block (base64 data).
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(BinaryContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// An audio block (base64 data).
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(BinaryContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }

    /// A resource link.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            extra: JsonObject::new(),
        })
    }

    /// An embedded text resource.
    pub fn embedded_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ContentBlock::Resource(EmbeddedResource {
            resource: ResourceContents::Text {
                uri: uri.into(),
                mime_type: None,
                text: text.into(),
                meta: None,
            },
            annotations: None,
            meta: None,
        })
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A tool-use request from the model (sampling with tools).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifier of this tool use.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of a tool use, given back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultContent {
    /// Id of the tool use answered.
    #[serde(rename = "toolUseId")]
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(
        default,
        rename = "structuredContent",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, rename = "isError", skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A content block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SamplingContent {
    /// `type: "text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `type: "image"`.
    #[serde(rename = "image")]
    Image(BinaryContent),
    /// `type: "audio"`.
    #[serde(rename = "audio")]
    Audio(BinaryContent),
    /// `type: "tool_use"`.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// `type: "tool_result"`.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContent::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// One value or an array of values (`content` of sampling messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// A single value.
    One(T),
    /// Several values.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The values as a slice.
    pub fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(t) => std::slice::from_ref(t),
            OneOrMany::Many(v) => v,
        }
    }
}

/// A message sent to or received from an LLM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One content block or several.
    pub content: OneOrMany<SamplingContent>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SamplingMessage {
    /// A user message with text.
    pub fn user(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: OneOrMany::One(SamplingContent::text(text)),
            meta: None,
        }
    }

    /// An assistant message with text.
    pub fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: OneOrMany::One(SamplingContent::text(text)),
            meta: None,
        }
    }
}
