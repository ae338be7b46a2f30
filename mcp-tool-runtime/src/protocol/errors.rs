//! JSON-RPC error constructors (one per code the server sends), [`redact`], which makes
//! a client-influenced reason fit for the log, and [`for_log`] and [`printable`], which
//! bound a client-supplied string for the log and for keeping.

use serde_json::{Value, json};

use super::{
    ClientCapabilities, ElicitParams, ErrorObject, INSUFFICIENT_SCOPE, INTERNAL_ERROR,
    INVALID_PARAMS, INVALID_REQUEST, InputRequest, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, SUPPORTED_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
};

/// The one message of every `requestState` failure.
pub const INVALID_REQUEST_STATE: &str = "invalid requestState";

/// The one message of every -32603 error a client sees; the detail goes to the server's
/// log only (it may name tools, keys, sizes or a tool author's text meant for operators).
pub const INTERNAL_ERROR_MESSAGE: &str = "Internal error";

/// Longest text of a client-influenced reason that is written to the log.
const MAX_LOGGED_REASON: usize = 300;

/// A reason made fit for the log: every `"quoted"` and `` `backticked` `` span is replaced
/// by `…` (serde's error messages quote the offending value, which may be the contents of
/// a state or of an answer, in one or the other), control characters are dropped and the
/// text is cut to a few hundred characters. What is left says what went wrong and where
/// (`invalid type: string …, expected u32 at line 1 column 9`), never with what data.
pub fn redact(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len().min(MAX_LOGGED_REASON));
    let mut chars = reason.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                // A Debug-quoted string: skip to the closing quote, honouring escapes.
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                out.push_str("\"…\"");
            }
            '`' => {
                for c in chars.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
                out.push_str("`…`");
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
        if out.len() >= MAX_LOGGED_REASON {
            out.push('…');
            break;
        }
    }
    out
}

/// Longest client-supplied string written to the log by [`for_log`], in bytes after
/// escaping (plus the one character that reaches it and a note of the original length).
pub const MAX_LOGGED_CLIENT_STRING: usize = 64;

/// A client-supplied string made fit for one log line: every control character (newlines,
/// `ESC` of ANSI sequences, …) and bidirectional override is written escaped (`\n`,
/// `\u{1b}`), and the text is cut at [`MAX_LOGGED_CLIENT_STRING`] bytes, with `…(N bytes)`
/// saying how long it was. A forged log line or a terminal escape cannot get through, and
/// no client string adds more than about a hundred bytes to a log line.
pub fn for_log(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if out.len() >= MAX_LOGGED_CLIENT_STRING {
            out.push_str(&format!("…({} bytes)", s.len()));
            break;
        }
        if c.is_control() || is_bidi_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The invisible characters that reorder text (a log line could show what it does not say).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A client-supplied string made fit to keep (a client's name): control characters are
/// dropped and the text is cut to at most `max` characters.
pub fn printable(s: &str, max: usize) -> String {
    s.chars()
        .filter(|c| !c.is_control() && !is_bidi_control(*c))
        .take(max)
        .collect()
}

/// -32700.
pub fn parse_error() -> ErrorObject {
    ErrorObject::new(PARSE_ERROR, "Parse error")
}

/// -32600.
pub fn invalid_request(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_REQUEST, msg)
}

/// -32601.
pub fn method_not_found(method: &str) -> ErrorObject {
    let msg = match method {
        "initialize" | "notifications/initialized" | "ping" => format!(
            "Method not found: {method} (removed in protocol 2026-07-28; requests are stateless, use server/discover)"
        ),
        _ => format!("Method not found: {method}"),
    };
    ErrorObject::new(METHOD_NOT_FOUND, msg)
}

/// -32602.
pub fn invalid_params(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, msg)
}

/// -32602 "Resource not found" with `data.uri` (SEP-2164).
pub fn resource_not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(INVALID_PARAMS, "Resource not found").with_data(json!({ "uri": uri }))
}

/// -32602 with the fixed `requestState` message; `reason` goes to the log only, after
/// [`redact`] (a reason may quote a state's contents).
pub fn invalid_state(reason: &dyn std::fmt::Display) -> ErrorObject {
    tracing::warn!(reason = %redact(&reason.to_string()), "rejected requestState");
    ErrorObject::new(INVALID_PARAMS, INVALID_REQUEST_STATE)
}

/// The JSON-RPC code of "busy, come back later" (the server's limit exceeded).
pub const BUSY: i64 = -32000;

/// -32000 with `data: {"retryAfter": seconds}`: the server is busy with this very request
/// (a single-use round still running) and asks the client to retry later. The HTTP
/// transport answers it `503` with `Retry-After: seconds`.
pub fn busy(message: impl Into<String>, retry_after_secs: u64) -> ErrorObject {
    let mut e = ErrorObject::new(BUSY, message);
    e.data = Some(serde_json::json!({ "retryAfter": retry_after_secs }));
    e
}

/// -32603 with the fixed [`INTERNAL_ERROR_MESSAGE`]; `detail` goes to the log only.
pub fn internal(detail: impl Into<String>) -> ErrorObject {
    let detail = detail.into();
    tracing::error!(detail = %detail, "internal error (the client gets the generic message)");
    ErrorObject::new(INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)
}

/// -32022 with `{supported, requested}`.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": requested }))
}

/// [`INSUFFICIENT_SCOPE`] (-31403) with `{requiredScopes, missingScopes}`: every scope the
/// operation declares (what a client should ask for when it steps up, RFC 6750 §3.1) and
/// those the caller's credentials lack.
pub fn insufficient_scope(required: &[String], missing: &[&str]) -> ErrorObject {
    ErrorObject::new(
        INSUFFICIENT_SCOPE,
        format!("Insufficient scope: this needs {}", required.join(" ")),
    )
    .with_data(json!({ "requiredScopes": required, "missingScopes": missing }))
}

/// -32021 with `{requiredCapabilities}`.
pub fn missing_capability(required: serde_json::Map<String, Value>) -> ErrorObject {
    let names: Vec<&str> = required.keys().map(String::as_str).collect();
    ErrorObject::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", names.join(", ")),
    )
    .with_data(json!({ "requiredCapabilities": required }))
}

/// The `requiredCapabilities` object for those of `requests` that `caps` does not allow
/// (elicitation names the mode: `{"elicitation": {"url": {}}}`), or `None` when all are allowed.
pub fn capabilities_for<'a>(
    requests: impl IntoIterator<Item = &'a InputRequest>,
    caps: &ClientCapabilities,
) -> Option<serde_json::Map<String, Value>> {
    let mut missing = serde_json::Map::new();
    for req in requests {
        if req.allowed_by(caps) {
            continue;
        }
        let entry = missing
            .entry(req.capability().as_str())
            .or_insert_with(|| json!({}));
        if let (InputRequest::Elicit(params), Value::Object(modes)) = (req, entry) {
            let mode = match params {
                ElicitParams::Form(_) => "form",
                ElicitParams::Url(_) => "url",
            };
            modes.insert(mode.to_owned(), json!({}));
        }
    }
    (!missing.is_empty()).then_some(missing)
}
