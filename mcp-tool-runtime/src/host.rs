//! The [`Host`] trait: the client-side party that answers input requests (elicitation,
//! sampling, roots) and declares the client's capabilities.
//!
//! Both sides use it: direct mode of [`ToolContext`](crate::ToolContext) and legacy
//! sessions ask a host in the server's process; the `Driver` of the `mcp-tool-client` crate
//! asks one for every `input_required` round. [`ScriptedHost`] answers from a script.

use crate::error::{BoxFuture, ToolError};
use crate::protocol::{ClientCapabilities, InputRequest, InputResponse};

mod scripted;

pub use scripted::ScriptedHost;

/// Why a host could not answer an input request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The host has no answer for this key (e.g. a scripted host ran out of answers).
    #[error("no answer for input request `{key}`")]
    NoAnswer {
        /// The `inputRequests` key that could not be answered.
        key: String,
    },
    /// The host does not support this kind of request (capability not offered).
    #[error("unsupported input request `{key}`: {method}")]
    Unsupported {
        /// The `inputRequests` key.
        key: String,
        /// The request's method (`elicitation/create`, ...).
        method: String,
    },
    /// The answer does not have the shape the request asks for (e.g. a sampling result
    /// without `content`).
    #[error("invalid answer to `{key}`: {reason}")]
    InvalidAnswer {
        /// The `inputRequests` key.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Anything else (I/O with the user, a model provider error, ...).
    #[error("host failed: {0}")]
    Failed(String),
}

/// The client side of a multi round-trip request: answers one input request at a time.
pub trait Host: Send {
    /// Capabilities declared in `_meta` of every request (`io.modelcontextprotocol/clientCapabilities`).
    fn capabilities(&self) -> ClientCapabilities;

    /// Answers the input request stored under `key` in `inputRequests`.
    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> BoxFuture<'a, Result<InputResponse, HostError>>;
}

/// `Host` for pointers to a host (`H` is the pointee): every method forwards to it.
macro_rules! forward_host {
    ($($ptr:ty),*) => {$(
        impl<H: Host + ?Sized> Host for $ptr {
            fn capabilities(&self) -> ClientCapabilities {
                (**self).capabilities()
            }

            fn respond<'a>(
                &'a mut self,
                key: &'a str,
                req: &'a InputRequest,
            ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
                (**self).respond(key, req)
            }
        }
    )*};
}

forward_host!(Box<H>, &mut H);

/// What a host's failure to answer `key` makes of the code that asked.
pub(crate) fn host_error(key: &str, e: HostError) -> ToolError {
    match e {
        // the client said no, failed or did not answer in time: the code fails (for a tool,
        // a result with `isError`, which the model sees)
        HostError::Unsupported { .. } | HostError::Failed(_) => ToolError::Failed(format!(
            "The client could not answer the request for input `{key}`: {e}"
        )),
        HostError::InvalidAnswer { reason, .. } => ToolError::invalid_input(key, reason),
        // a host without an answer for this key (a scripted host): a bug of the caller
        HostError::NoAnswer { .. } => {
            ToolError::Internal(format!("host could not answer `{key}`: {e}"))
        }
    }
}
