//! The request/answer plumbing of a [`ToolContext`], for tools written by hand as re-entrant
//! functions (implementing [`Tool`](crate::Tool) with a `step` per round) instead of with
//! `#[mcp_tool]`: register this round's requests, tell whether their answers are here, take
//! them. The code `#[mcp_tool]` generates uses the same calls.
//!
//! A round of such a tool, the way `examples/hand_written.rs` in the runtime's crate writes
//! its tool:
//!
//! ```
//! use mcp_tool_runtime::manual::{Reentrant, Step};
//! use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities};
//! use mcp_tool_runtime::requests::Ask;
//! use mcp_tool_runtime::{ToolContext, ToolError, testing};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct City {
//!     /// The city.
//!     city: String,
//! }
//!
//! fn round(cx: &mut ToolContext) -> Result<Step, ToolError> {
//!     if !cx.has_answer("city") {
//!         cx.request_builder("city", Ask::<City>::new("Which city?"))?;
//!         return Step::suspend(&json!({}));
//!     }
//!     let city: City = cx.take_ask("city")?;
//!     Ok(Step::Complete(CallToolResult::text(format!("Sunny in {}", city.city))))
//! }
//!
//! let mut cx = testing::context(ClientCapabilities::all());
//! assert!(matches!(round(&mut cx)?, Step::Suspend { .. }));
//! assert!(cx.outgoing().contains_key("city"));
//! # Ok::<(), ToolError>(())
//! ```

use serde::de::DeserializeOwned;

use super::{Journal, ToolContext, request_digest};
use crate::error::ToolError;
use crate::protocol::{InputRequest, InputRequests, InputResponse, InputResponses, Root};
use crate::requests::{
    Elicitation, InputBuilder, SampleAnswer, UrlOutcome, decode_elicitation, decode_roots,
    decode_sampling, decode_url_elicitation,
};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ToolContext {}
}

/// The request/answer plumbing of a [`ToolContext`] (see [`manual`](crate::manual)): bring it into
/// scope (`use mcp_tool_runtime::manual::Reentrant;`) in a hand-written tool. Implemented by
/// [`ToolContext`] only.
pub trait Reentrant: sealed::Sealed {
    /// Whether [`ToolContext::detach`] was called in this round.
    fn is_detached(&self) -> bool;

    /// Whether this context runs in direct mode (has a host).
    fn is_direct(&self) -> bool;

    /// Whether the journal is on.
    fn journal_enabled(&self) -> bool;

    /// The journal (answers of earlier rounds by full key, with their requests' digests),
    /// when on.
    fn journal(&self) -> Option<&Journal>;

    /// Whether this round's answers hold one for `key` (journaled answers join them when
    /// [`round_ready`](Self::round_ready) finds them for the identical request).
    fn has_answer(&self, key: &str) -> bool;

    /// This round's answers not taken yet.
    fn answers(&self) -> &InputResponses;

    /// The requests registered this round.
    fn outgoing(&self) -> &InputRequests;

    /// The key prefix of the flows being run (`""` in a tool's own code, `"login/"` inside
    /// a flow called at `login`).
    fn key_prefix(&self) -> &str;

    /// True in a *re-asking run*: the client retried without answering requests this code
    /// registered with [`request_reproducible`](Self::request_reproducible). A hand-written
    /// tool then makes the same requests again, under the same keys, from its state, and
    /// returns [`Step::Suspend`](crate::manual::Step::Suspend) (whose state is ignored: the client
    /// gets back the `requestState` it sent). `#[mcp_tool]` code does this by itself.
    fn is_reasking(&self) -> bool;

    /// Registers an input request of this round under `key` (inside a flow, under the
    /// flow's prefix). A duplicate key in one round is an internal error; so is, with the
    /// journal on, a key already requested earlier in the same call (the journal keeps
    /// answers by key, so a repeat would silently reuse the earlier answer).
    fn request(
        &mut self,
        key: impl Into<String>,
        req: impl Into<InputRequest>,
    ) -> Result<(), ToolError>;

    /// Registers a request the code promises to make again, the same, when it is resumed
    /// at this point without the answer (see [`is_reasking`](Self::is_reasking)). The server
    /// then keeps only the request's kind in the sealed state (and under the journal its
    /// digest, against which the request made again is checked) instead of the request:
    /// states get much smaller. Use [`request`](Self::request) when the code cannot make the
    /// request again (it depends on something the state does not keep).
    ///
    /// ```
    /// use mcp_tool_runtime::manual::{Reentrant, Step};
    /// use mcp_tool_runtime::protocol::{CallToolResult, ClientCapabilities};
    /// use mcp_tool_runtime::{Sample, ToolContext, ToolError, testing};
    /// use serde_json::json;
    ///
    /// /// The round of a hand-written tool that waits for a poem about `topic` (its state
    /// /// keeps the topic, so the request can be made again from it).
    /// fn poem_round(cx: &mut ToolContext, topic: &str) -> Result<Step, ToolError> {
    ///     if cx.is_reasking() || !cx.has_answer("poem") {
    ///         let req = Sample::user(format!("A poem about {topic}")).into_request()?;
    ///         cx.request_reproducible("poem", req)?;
    ///         return Step::suspend(&json!({"topic": topic}));
    ///     }
    ///     let poem = cx.take_sampling("poem")?.text()?;
    ///     Ok(Step::Complete(CallToolResult::text(poem)))
    /// }
    ///
    /// let mut cx = testing::context(ClientCapabilities::all());
    /// assert!(matches!(poem_round(&mut cx, "rain")?, Step::Suspend { .. }));
    /// assert!(cx.outgoing().contains_key("poem"));
    /// # Ok::<(), ToolError>(())
    /// ```
    fn request_reproducible(
        &mut self,
        key: impl Into<String>,
        req: impl Into<InputRequest>,
    ) -> Result<(), ToolError>;

    /// Registers the request of a builder under `key`.
    fn request_builder<B: InputBuilder>(
        &mut self,
        key: impl Into<String>,
        builder: B,
    ) -> Result<(), ToolError>;

    /// True when every outgoing request already has an answer: in this round's answers, or
    /// in the journal for the identical request (same method and params: an answer to an
    /// older question under the same key is not reused). The journaled answers join this
    /// round's answers, the outgoing requests are cleared and the code continues without
    /// suspending. False when nothing is outgoing (a checkpoint always suspends).
    fn round_ready(&mut self) -> bool;

    /// Removes and returns this round's raw answer for `key` (inside a flow, under the
    /// flow's prefix).
    fn take_response(&mut self, key: &str) -> Option<InputResponse>;

    /// Takes the answer to a form elicitation and deserializes accepted content into `T`.
    fn take_elicitation<T: DeserializeOwned>(
        &mut self,
        key: &str,
    ) -> Result<Elicitation<T>, ToolError>;

    /// Takes the answer to a form elicitation; decline/cancel become errors.
    fn take_ask<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, ToolError>;

    /// Takes the answer to a URL-mode elicitation.
    fn take_url_elicitation(&mut self, key: &str) -> Result<UrlOutcome, ToolError>;

    /// Takes the answer to a sampling request.
    fn take_sampling(&mut self, key: &str) -> Result<SampleAnswer, ToolError>;

    /// Takes the answer to a roots request.
    fn take_roots(&mut self, key: &str) -> Result<Vec<Root>, ToolError>;

    /// Takes the answer for `key` as the builder type `B` expects.
    fn take_answer<B: InputBuilder>(&mut self, key: &str) -> Result<B::Output, ToolError>;
}

impl Reentrant for ToolContext {
    fn is_detached(&self) -> bool {
        self.detached
    }

    fn is_direct(&self) -> bool {
        self.host.is_some()
    }

    fn journal_enabled(&self) -> bool {
        self.journal.is_some()
    }

    fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    fn has_answer(&self, key: &str) -> bool {
        self.answers.contains_key(self.scoped(key).as_ref())
    }

    fn answers(&self) -> &InputResponses {
        &self.answers
    }

    fn outgoing(&self) -> &InputRequests {
        &self.outgoing
    }

    fn key_prefix(&self) -> &str {
        &self.prefix
    }

    fn is_reasking(&self) -> bool {
        self.reasking
    }

    fn request(
        &mut self,
        key: impl Into<String>,
        req: impl Into<InputRequest>,
    ) -> Result<(), ToolError> {
        let key = self.scoped_owned(key.into());
        self.register(key, req.into())
    }

    fn request_reproducible(
        &mut self,
        key: impl Into<String>,
        req: impl Into<InputRequest>,
    ) -> Result<(), ToolError> {
        let key = self.scoped_owned(key.into());
        self.register(key.clone(), req.into())?;
        self.regenerable.insert(key);
        Ok(())
    }

    fn request_builder<B: InputBuilder>(
        &mut self,
        key: impl Into<String>,
        builder: B,
    ) -> Result<(), ToolError> {
        let req = builder.into_request()?;
        self.request(key, req)
    }

    fn round_ready(&mut self) -> bool {
        if self.outgoing.is_empty() {
            return false;
        }
        let mut from_journal = Vec::new();
        for (key, req) in &self.outgoing {
            match &self.journal {
                // with the journal (this round's answers are in it too, with the digests of
                // the requests they answered), only an answer to the identical request counts
                Some(journal) => match journal.get(key) {
                    Some(e) if e.digest == request_digest(req) => {
                        from_journal.push((key.clone(), e.response.clone()));
                    }
                    _ => return false,
                },
                None if self.answers.contains_key(key) => {}
                None => return false,
            }
        }
        self.answers.extend(from_journal);
        self.outgoing.clear();
        self.regenerable.clear();
        true
    }

    fn take_response(&mut self, key: &str) -> Option<InputResponse> {
        let key = self.scoped(key);
        self.answers.remove(key.as_ref())
    }

    fn take_elicitation<T: DeserializeOwned>(
        &mut self,
        key: &str,
    ) -> Result<Elicitation<T>, ToolError> {
        decode_elicitation(key, self.take_or_missing(key)?)
    }

    fn take_ask<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, ToolError> {
        self.take_elicitation::<T>(key)?.into_result(key)
    }

    fn take_url_elicitation(&mut self, key: &str) -> Result<UrlOutcome, ToolError> {
        decode_url_elicitation(key, self.take_or_missing(key)?)
    }

    fn take_sampling(&mut self, key: &str) -> Result<SampleAnswer, ToolError> {
        decode_sampling(key, self.take_or_missing(key)?)
    }

    fn take_roots(&mut self, key: &str) -> Result<Vec<Root>, ToolError> {
        decode_roots(key, self.take_or_missing(key)?)
    }

    fn take_answer<B: InputBuilder>(&mut self, key: &str) -> Result<B::Output, ToolError> {
        B::decode(key, self.take_or_missing(key)?)
    }
}
