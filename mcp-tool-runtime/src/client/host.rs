//! The [`Host`] trait: the client-side party that answers input requests
//! (elicitation, sampling, roots) and declares the client's capabilities.
//!
//! Used by the [`Driver`](super::Driver) and by direct mode of
//! [`ToolContext`](crate::context::ToolContext).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;

use crate::protocol::{ClientCapabilities, InputRequest, InputResponse};

/// A boxed, sendable future (same shape as the crate-wide `BoxFuture`).
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
    ) -> HostFuture<'a, Result<InputResponse, HostError>>;
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
            ) -> HostFuture<'a, Result<InputResponse, HostError>> {
                (**self).respond(key, req)
            }
        }
    )*};
}

forward_host!(Box<H>, &mut H);

type Responder = Box<dyn FnMut(&str, &InputRequest) -> Result<InputResponse, HostError> + Send>;

/// A host for tests and demos: answers from a script keyed by the `inputRequests` key,
/// falling back to a closure, and records every request it was asked.
///
/// Answers queued for one key are used in order (first call gets the first answer); the
/// last queued answer for a key is reused when the queue would otherwise run dry, so
/// a key that is asked again (e.g. after a journal restart) still gets an answer.
pub struct ScriptedHost {
    capabilities: ClientCapabilities,
    answers: HashMap<String, VecDeque<InputResponse>>,
    fallback: Option<Responder>,
    asked: Vec<(String, InputRequest)>,
}

impl std::fmt::Debug for ScriptedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedHost")
            .field("capabilities", &self.capabilities)
            .field("answers", &self.answers.keys().collect::<Vec<_>>())
            .field("fallback", &self.fallback.is_some())
            .field("asked", &self.asked.len())
            .finish()
    }
}

impl ScriptedHost {
    /// A host declaring `capabilities` with no answers yet.
    pub fn new(capabilities: ClientCapabilities) -> Self {
        Self {
            capabilities,
            answers: HashMap::new(),
            fallback: None,
            asked: Vec::new(),
        }
    }

    /// Queues `response` as an answer for `key`.
    pub fn answer(mut self, key: impl Into<String>, response: impl Into<InputResponse>) -> Self {
        self.push(key, response);
        self
    }

    /// Queues an answer given as JSON (an `ElicitResult`, `CreateMessageResult` or
    /// `ListRootsResult` object).
    ///
    /// # Errors
    /// When `response` does not deserialize as an [`InputResponse`].
    pub fn answer_json(
        mut self,
        key: impl Into<String>,
        response: serde_json::Value,
    ) -> Result<Self, serde_json::Error> {
        let response: InputResponse = serde_json::from_value(response)?;
        self.push(key, response);
        Ok(self)
    }

    /// Queues `response` as an answer for `key` (by reference).
    pub fn push(&mut self, key: impl Into<String>, response: impl Into<InputResponse>) {
        self.answers
            .entry(key.into())
            .or_default()
            .push_back(response.into());
    }

    /// Answers keys without a scripted answer with `f`.
    pub fn with_fallback(
        mut self,
        f: impl FnMut(&str, &InputRequest) -> Result<InputResponse, HostError> + Send + 'static,
    ) -> Self {
        self.fallback = Some(Box::new(f));
        self
    }

    /// A host that answers everything with `f`.
    pub fn from_fn(
        capabilities: ClientCapabilities,
        f: impl FnMut(&str, &InputRequest) -> Result<InputResponse, HostError> + Send + 'static,
    ) -> Self {
        Self::new(capabilities).with_fallback(f)
    }

    /// Every `(key, request)` this host was asked, in order.
    pub fn asked(&self) -> &[(String, InputRequest)] {
        &self.asked
    }

    /// The keys this host was asked, in order.
    pub fn asked_keys(&self) -> Vec<&str> {
        self.asked.iter().map(|(k, _)| k.as_str()).collect()
    }

    fn lookup(&mut self, key: &str, req: &InputRequest) -> Result<InputResponse, HostError> {
        if let Some(queue) = self.answers.get_mut(key) {
            if queue.len() > 1 {
                if let Some(a) = queue.pop_front() {
                    return Ok(a);
                }
            } else if let Some(a) = queue.front() {
                return Ok(a.clone());
            }
        }
        match self.fallback.as_mut() {
            Some(f) => f(key, req),
            None => Err(HostError::NoAnswer {
                key: key.to_owned(),
            }),
        }
    }
}

impl Host for ScriptedHost {
    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone()
    }

    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> HostFuture<'a, Result<InputResponse, HostError>> {
        self.asked.push((key.to_owned(), req.clone()));
        let answer = self.lookup(key, req);
        Box::pin(std::future::ready(answer))
    }
}
