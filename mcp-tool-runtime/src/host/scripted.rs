//! [`ScriptedHost`]: a [`Host`] that answers from a script, for tests and demos.

use std::collections::{HashMap, VecDeque};

use crate::error::BoxFuture;
use crate::host::{Host, HostError};
use crate::protocol::{ClientCapabilities, InputRequest, InputResponse};

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
    ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
        self.asked.push((key.to_owned(), req.clone()));
        let answer = self.lookup(key, req);
        Box::pin(std::future::ready(answer))
    }
}
