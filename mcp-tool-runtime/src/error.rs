//! The errors every layer above shares: [`ToolError`] (what a round of author code fails
//! with) and what it becomes on the wire ([`map_tool_error`]), [`RegistrationError`] (what
//! `build()` refuses), and [`BoxFuture`].

use crate::protocol::errors::{INTERNAL_ERROR_MESSAGE, invalid_params, invalid_state, redact};
use crate::protocol::{CallToolResult, ErrorObject, INTERNAL_ERROR};
use crate::schema::SchemaError;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistrationError {
    /// A form elicitation type is outside the elicitation subset.
    #[error("tool `{tool}`: elicitation schema for `{key}`: {error}")]
    Schema {
        /// The tool.
        tool: String,
        /// The request (key or type) whose schema failed.
        key: String,
        /// What is wrong.
        error: SchemaError,
    },
    /// Two tools share a name.
    #[error("duplicate tool name `{0}`")]
    DuplicateTool(String),
    /// A tool takes application state of a type the server was not given.
    #[error(
        "tool `{tool}` takes `State<{type_name}>`, but the server has no value of that type: \
         add `.state(..)` with one to the server builder"
    )]
    MissingState {
        /// The tool.
        tool: String,
        /// The state type.
        type_name: String,
    },
    /// A skill (a [`Skill`](crate::resource::skills::Skill), a
    /// [`DynamicSkill`](crate::resource::skills::DynamicSkill), or a skills directory the
    /// crate `mcp-tool-skills` reads) is refused.
    #[error("skill `{path}`: {message}")]
    Skill {
        /// The skill's path (or the file's, below the skills directory or as a URI).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The tool description is invalid (e.g. input schema root is not an object).
    #[error("tool `{tool}`: {message}")]
    InvalidInfo {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
}

/// Errors of a tool round, mapped to the wire as described in `docs/ARCHITECTURE.md`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// Arguments do not match the input type: `isError: true` naming the field.
    #[error("invalid arguments: `{field}`: {message}")]
    InvalidArguments {
        /// The field path (`"city"`, `"dates.0"`; empty for the root).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// An ordinary failure: `isError: true`.
    #[error("{0}")]
    Failed(String),
    /// The user declined an elicitation: a polite `isError: true` result.
    #[error("the user declined the request `{key}`")]
    Declined {
        /// The input request key.
        key: String,
    },
    /// The user cancelled an elicitation: a polite `isError: true` result.
    #[error("the user cancelled the request `{key}`")]
    Cancelled {
        /// The input request key.
        key: String,
    },
    /// An answer of the wrong shape or unusable model output: JSON-RPC -32602.
    #[error("invalid input response `{key}`: {reason}")]
    InvalidInput {
        /// The input request key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The tool's state does not deserialize: -32602 "invalid requestState".
    #[error("invalid requestState")]
    InvalidState,
    /// A bug or an impossible situation: JSON-RPC -32603.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// A [`ToolError::Failed`].
    pub fn failed(msg: impl std::fmt::Display) -> Self {
        ToolError::Failed(msg.to_string())
    }

    /// A [`ToolError::InvalidInput`].
    pub fn invalid_input(key: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        ToolError::InvalidInput {
            key: key.into(),
            reason: reason.to_string(),
        }
    }

    /// A [`ToolError::Internal`].
    pub fn internal(msg: impl std::fmt::Display) -> Self {
        ToolError::Internal(msg.to_string())
    }
}

/// `From<E> for ToolError` as [`ToolError::Failed`] with `E`'s message, for ordinary errors
/// that `?` should turn into a tool execution error.
macro_rules! failed_from {
    ($($e:ty),* $(,)?) => {$(
        impl From<$e> for ToolError {
            fn from(e: $e) -> Self {
                ToolError::Failed(e.to_string())
            }
        }
    )*};
}

failed_from!(
    std::io::Error,
    std::fmt::Error,
    std::num::ParseIntError,
    std::num::ParseFloatError,
    serde_json::Error,
    Box<dyn std::error::Error + Send + Sync>,
);

/// The arguments' deserialization error as [`ToolError::InvalidArguments`], naming the field
/// (arguments from a JSON tree, `tool::parse_args`, or string values, `strings`).
pub(crate) fn invalid_arguments<E: std::fmt::Display>(
    e: serde_path_to_error::Error<E>,
) -> ToolError {
    let path = e.path().to_string();
    let message = e.inner().to_string();
    let field = if path == "." || path.is_empty() {
        // `missing field `x`` and `unknown field `x`` name the field in the message.
        message
            .split('`')
            .nth(1)
            .filter(|_| {
                message.starts_with("missing field") || message.starts_with("unknown field")
            })
            .unwrap_or("")
            .to_owned()
    } else {
        path
    };
    ToolError::InvalidArguments { field, message }
}

impl From<String> for ToolError {
    fn from(e: String) -> Self {
        ToolError::Failed(e)
    }
}

impl From<&str> for ToolError {
    fn from(e: &str) -> Self {
        ToolError::Failed(e.to_owned())
    }
}

/// What a [`ToolError`] becomes: a tool result (`isError: true`) or a JSON-RPC error.
pub enum Mapped {
    /// A tool execution error result.
    Result(CallToolResult),
    /// A protocol error.
    Error(ErrorObject),
}

/// Maps a tool error per `docs/ARCHITECTURE.md`.
pub fn map_tool_error(tool: &str, e: ToolError) -> Mapped {
    match e {
        ToolError::InvalidArguments { field, message } => {
            let text = if field.is_empty() {
                format!("Invalid arguments: {message}")
            } else {
                format!("Invalid arguments: field `{field}`: {message}")
            };
            Mapped::Result(CallToolResult::error(text))
        }
        ToolError::Failed(msg) => Mapped::Result(CallToolResult::error(msg)),
        ToolError::Declined { key } => Mapped::Result(CallToolResult::error(format!(
            "The user declined to provide the requested input (`{key}`), so the tool did not continue."
        ))),
        ToolError::Cancelled { key } => Mapped::Result(CallToolResult::error(format!(
            "The user cancelled the request for input (`{key}`), so the tool did not continue."
        ))),
        ToolError::InvalidInput { key, reason } => {
            // The reason may quote the answer (kept in the state when journaled): redacted.
            tracing::warn!(
                tool,
                key = %crate::protocol::errors::for_log(&key),
                reason = %redact(&reason),
                "invalid input response"
            );
            Mapped::Error(invalid_params(format!(
                "Invalid input response `{key}`: {reason}"
            )))
        }
        ToolError::InvalidState => Mapped::Error(invalid_state(&format_args!(
            "tool `{tool}` could not deserialize its state"
        ))),
        ToolError::Internal(msg) => {
            tracing::error!(
                tool,
                error = %crate::protocol::errors::for_log_cut(
                    &msg,
                    crate::protocol::errors::MAX_LOGGED_DETAIL
                ),
                "tool internal error"
            );
            Mapped::Error(ErrorObject::new(INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE))
        }
    }
}
