//! `tools/list` and `tools/call`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, JsonObject, ResultType, StructuredContent};

/// Hints describing a tool's behaviour (never trusted by clients).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no additional effect.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDescriptor {
    /// Programmatic name.
    pub name: String,
    /// Display title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (root `type: "object"`).
    #[serde(rename = "inputSchema")]
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`.
    #[serde(rename = "outputSchema", skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Other members (`icons`, `execution`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

cacheable_result! {
    /// Result of `tools/list`.
    ListToolsResult, paginated {
        /// The tools.
        pub tools: Vec<ToolDescriptor>,
    }
}

/// Parameters of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// Tool name.
    pub name: String,
    /// Arguments (an object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to the previous round's `inputRequests`.
    #[serde(
        default,
        rename = "inputResponses",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_responses: Option<JsonObject>,
    /// The echoed `requestState`.
    #[serde(
        default,
        rename = "requestState",
        skip_serializing_if = "Option::is_none"
    )]
    pub request_state: Option<String>,
    /// Request `_meta` (kept as JSON; the server validates it).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Result of a completed `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// `complete` (the server sets it).
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// Unstructured content.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured result (any JSON value, held as its text: see [`StructuredContent`]).
    #[serde(
        default,
        rename = "structuredContent",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<StructuredContent>,
    /// Whether the call ended in a tool execution error.
    #[serde(default, rename = "isError", skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `_meta` (server info).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            result_type: ResultType::Complete,
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::success(vec![ContentBlock::text(text)])
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// A successful result with structured content (and its JSON text as content): a
    /// [`Value`], or a [`StructuredContent`] (a typed value serialized once, no tree).
    pub fn structured(value: impl Into<StructuredContent>) -> Self {
        let value = value.into();
        Self::text(value.json()).with_structured(value)
    }

    /// This result with `value` as its structured content.
    pub fn with_structured(mut self, value: impl Into<StructuredContent>) -> Self {
        self.structured_content = Some(value.into());
        self
    }

    /// Whether `isError` is true.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The concatenated text of the text blocks.
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}
