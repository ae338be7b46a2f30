//! JSON-RPC error constructors (one per code the server sends), [`redact`], which makes
//! a client-influenced reason fit for the log, [`for_log`] (through [`for_log_cut`]), which
//! escapes and cuts every client-supplied value that is logged, and [`printable`], which
//! bounds a client-supplied string for keeping.

use std::borrow::Cow;

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
/// a state or of an answer, in one or the other), and what is left goes through
/// [`for_log_cut`] with a cut of a few hundred bytes. What is left says what went wrong and
/// where (`invalid type: string …, expected u32 at line 1 column 9`), never with what data.
pub fn redact(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len());
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
            c => out.push(c),
        }
    }
    for_log_cut(&out, MAX_LOGGED_REASON).into_owned()
}

/// The cut of [`for_log`]: the most bytes of a client-supplied value's escaped text that
/// reach the log (the MCP limit of a tool name, so that a legitimate name is never cut).
/// A cut value is followed by `…(N bytes)`, its original length.
pub const MAX_LOGGED_CLIENT_STRING: usize = 128;

/// The cut of a text that the server or a tool wrote around client values (an internal
/// error's detail, a panic's message, a tool's error text), escaped like a value by
/// [`for_log_cut`]: such a text is not the client's, but it may quote the client.
pub const MAX_LOGGED_DETAIL: usize = 1024;

/// A client-supplied value made fit for one log line, cut at [`MAX_LOGGED_CLIENT_STRING`]
/// bytes: [`for_log_cut`]. Every value that came from the wire and is logged, at any level,
/// goes through it (or, inside a text the server composes, was put there through it).
pub fn for_log(s: &str) -> Cow<'_, str> {
    for_log_cut(s, MAX_LOGGED_CLIENT_STRING)
}

/// `s` made fit for one log line: every control character (CR, LF, `ESC` of ANSI sequences,
/// NEL, …), Unicode line and paragraph separator and bidirectional override is written
/// escaped (`\r`, `\n`, `\u{1b}`, `\u{2028}`), and the escaped text is cut at `max` bytes on
/// a character boundary (never inside an escape), followed by `…(N bytes)` with the length
/// of `s`. A forged log line or a terminal escape cannot get through, and the text adds at
/// most `max` + 20 bytes to a line. Borrowed when nothing needs escaping or cutting.
pub fn for_log_cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max && !s.chars().any(needs_log_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(max) + 24);
    let mut complete = true;
    for c in s.chars() {
        let before = out.len();
        if needs_log_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        if out.len() > max {
            out.truncate(before);
            complete = false;
            break;
        }
    }
    if !complete {
        out.push_str(&format!("…({} bytes)", s.len()));
    }
    Cow::Owned(out)
}

/// Whether `c` is written escaped in the log: a control character, a line or paragraph
/// separator, or a bidirectional control.
fn needs_log_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_control(c)
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

/// -32603 with the fixed [`INTERNAL_ERROR_MESSAGE`]; `detail` goes to the log only (escaped and
/// cut at [`MAX_LOGGED_DETAIL`] bytes by [`for_log_cut`]: it may quote a client value).
pub fn internal(detail: impl Into<String>) -> ErrorObject {
    let detail = detail.into();
    tracing::error!(
        detail = %for_log_cut(&detail, MAX_LOGGED_DETAIL),
        "internal error (the client gets the generic message)"
    );
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
