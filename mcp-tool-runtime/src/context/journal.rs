//! The journal: answers of earlier rounds kept (sealed) by key, each with the digest of the
//! request it answered, so a restarted stage reuses an answer only for the same request.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{
    CreateMessageResult, ElicitResult, InputRequest, InputResponse, JsonObject, ListRootsResult,
};

/// One journaled answer: a digest of the request it answered, and the answer. A journaled
/// answer is reused only for a request with the same digest (same method and params).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The digest of the request answered (its method and params).
    #[serde(rename = "d")]
    pub digest: String,
    /// The answer.
    #[serde(rename = "r")]
    pub response: InputResponse,
}

/// What the journal keeps of `answer`: the members a tool reads, without the unknown ones
/// (`extra`) a client may add to an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`. A journal is sealed into every later state, so a client must not be
/// able to grow it with members nobody reads (issue 18, item 6). A tool that reads the
/// answer again from the journal (a restarted stage) sees it without them.
pub fn journaled(answer: &InputResponse) -> InputResponse {
    match answer {
        InputResponse::Elicit(r) => InputResponse::Elicit(ElicitResult {
            action: r.action,
            content: r.content.clone(),
            extra: JsonObject::new(),
        }),
        InputResponse::Sample(r) => InputResponse::Sample(CreateMessageResult {
            role: r.role,
            content: r.content.clone(),
            model: r.model.clone(),
            stop_reason: r.stop_reason.clone(),
            extra: JsonObject::new(),
        }),
        InputResponse::Roots(r) => InputResponse::Roots(ListRootsResult {
            roots: r.roots.clone(),
            extra: JsonObject::new(),
        }),
    }
}

/// Answers of earlier rounds by (full) key, each with the digest of its request.
pub type Journal = BTreeMap<String, JournalEntry>;

/// A short digest of a request (method and params): the first 16 bytes of the SHA-256 of
/// its canonical JSON, base64url.
pub fn request_digest(req: &InputRequest) -> String {
    use base64::Engine as _;
    let v = serde_json::to_value(req).unwrap_or(Value::Null);
    let d = crate::seal::args_digest(&v);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&d[..16])
}
