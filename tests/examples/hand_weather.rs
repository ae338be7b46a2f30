//! The hand-written comparator of `scripts/throughput.sh` and `scripts/callgrind_weather.sh`:
//! `get_weather`'s two rounds served statelessly on bare axum by code written for this one
//! tool, without the framework. It does the job a round must do, and nothing a framework adds:
//!
//! - the `Content-Type`, `Accept`, `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//!   headers checked against the body;
//! - the body read once into borrowed typed structs (`jsonrpc`, `id`, `method`, the tool's
//!   name, its arguments, the protocol version and the elicitation capability in `_meta`,
//!   `inputResponses`, `requestState`), the location validated (1 to 100 characters);
//! - round 1: the stage sealed with HMAC-SHA-256 under a key set up once, bound to the
//!   principal (anonymous), the method, the tool, the arguments' digest (SHA-256) and an
//!   expiry, URL-safe base64, and the form elicitation written around it;
//! - round 2: the state decoded, its tag checked in constant time, its expiry, round and
//!   binding checked, the answer read (accept with a `name`, decline or cancel) and the
//!   forecast written as `serve` writes it (the same text and structured content).
//!
//! Left out, as a one-tool server written by hand would leave them out: admission control and
//! body and time limits beyond axum's, authentication, a panic guard, tracing spans and
//! metrics, the journal, single use, key rotation, tasks, legacy sessions, other methods.
//!
//! ```text
//! cargo run --release -p mcp-tool-tests --example hand_weather -- 127.0.0.1:0
//! ```
//!
//! Prints `listening on http://ADDR/mcp` to stderr once bound; serves until killed. Same
//! runtime as `serve` and `bare_axum` (tokio, multi-threaded, all cores).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use mcp_tool_examples::tools::bounded;
use mcp_tool_examples::tools::get_weather::{Forecast, forecast};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

const VERSION: &str = "2026-07-28";
const TOOL: &str = "get_weather";
const METHOD: &str = "tools/call";
/// The token's prefix (format and key id).
const PREFIX: &str = "hw1.k1.";
/// Bytes of the tag kept in a token (as `serve`'s seal).
const TAG_LEN: usize = 16;
/// How long a state is valid, in seconds.
const TTL: u64 = 3600;
/// The `_meta` of every result.
const META: &str =
    r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"hand-weather","version":"0.1.0"}}"#;

/// One JSON-RPC request, borrowed from the body.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: Params<'a>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    arguments: Args,
    #[serde(rename = "_meta", borrow)]
    meta: Meta<'a>,
    #[serde(rename = "inputResponses", borrow, default)]
    responses: Option<Responses<'a>>,
    #[serde(rename = "requestState", borrow, default)]
    state: Option<Cow<'a, str>>,
}

/// `get_weather`'s arguments; serialized (one member) they are their canonical text.
#[derive(Deserialize, Serialize)]
struct Args {
    location: String,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    version: Cow<'a, str>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow)]
    capabilities: Capabilities<'a>,
}

#[derive(Deserialize)]
struct Capabilities<'a> {
    #[serde(borrow, default)]
    elicitation: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Responses<'a> {
    #[serde(borrow, default)]
    github_login: Option<Answer<'a>>,
}

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    action: Cow<'a, str>,
    #[serde(default)]
    content: Option<Login>,
}

#[derive(Deserialize)]
struct Login {
    name: String,
}

/// Why a request is refused: an HTTP status, or a JSON-RPC error (code, message).
enum Refusal {
    Http(StatusCode),
    Rpc(i32, &'static str),
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = mcp_tool_tests::loopback_arg()?;
    // the key, random per process; its HMAC set up once
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key)?;
    let mac: Arc<HmacSha256> = Arc::new(KeyInit::new_from_slice(&key)?);
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let mac = mac.clone();
            async move { serve(&mac, &headers, &body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

fn serve(mac: &HmacSha256, headers: &HeaderMap, body: &[u8]) -> Response {
    let out = check_headers(headers).and_then(|()| round(mac, headers, body));
    match out {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(Refusal::Http(status)) => status.into_response(),
        Err(Refusal::Rpc(code, message)) => {
            // the id is not known here (or not trusted): null, as JSON-RPC allows
            let json = format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":"{message}"}}}}"#
            );
            ([(header::CONTENT_TYPE, "application/json")], json).into_response()
        }
    }
}

fn header_is(headers: &HeaderMap, name: &str, want: &str) -> bool {
    headers.get(name).and_then(|v| v.to_str().ok()) == Some(want)
}

fn check_headers(headers: &HeaderMap) -> Result<(), Refusal> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if !content_type.is_some_and(|t| t.trim_ascii().starts_with("application/json")) {
        return Err(Refusal::Http(StatusCode::UNSUPPORTED_MEDIA_TYPE));
    }
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return Err(Refusal::Http(StatusCode::NOT_ACCEPTABLE));
    }
    if !header_is(headers, "mcp-protocol-version", VERSION) {
        return Err(Refusal::Http(StatusCode::BAD_REQUEST));
    }
    Ok(())
}

/// One round: the request checked, then round 1 or round 2 by the presence of a state.
fn round(mac: &HmacSha256, headers: &HeaderMap, body: &[u8]) -> Result<Vec<u8>, Refusal> {
    let req: Request<'_> =
        serde_json::from_slice(body).map_err(|_| Refusal::Rpc(-32602, "invalid request"))?;
    if req.jsonrpc != "2.0" || req.method != METHOD || req.params.name != TOOL {
        return Err(Refusal::Rpc(-32602, "not a get_weather call"));
    }
    if !header_is(headers, "mcp-method", &req.method)
        || !header_is(headers, "mcp-name", &req.params.name)
    {
        return Err(Refusal::Http(StatusCode::BAD_REQUEST));
    }
    let p = &req.params;
    if p.meta.version != VERSION || p.meta.capabilities.elicitation.is_none() {
        return Err(Refusal::Rpc(
            -32602,
            "needs 2026-07-28 and the elicitation capability",
        ));
    }
    let location = p.arguments.location.as_str();
    if location.trim().is_empty() || location.chars().count() > 100 {
        return Err(Refusal::Rpc(-32602, "location: 1 to 100 characters"));
    }
    let digest = Sha256::digest(
        serde_json::to_vec(&p.arguments).map_err(|_| Refusal::Rpc(-32603, "digest"))?,
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let id = req.id.get();
    match &p.state {
        None => Ok(ask(mac, &digest, now, id)),
        Some(token) => {
            open(mac, &digest, now, token)?;
            let answer = p
                .responses
                .as_ref()
                .and_then(|r| r.github_login.as_ref())
                .ok_or(Refusal::Rpc(-32602, "inputResponses: github_login missing"))?;
            complete(location, answer, id)
        }
    }
}

/// The MAC of a state so far: the binding, then the body (each length-prefixed).
fn keyed(mac: &HmacSha256, digest: &[u8], body: &[u8]) -> HmacSha256 {
    let mut m = mac.clone();
    for field in [
        b"io.modelcontextprotocol/requestState hand-weather".as_slice(),
        b"anonymous",
        METHOD.as_bytes(),
        TOOL.as_bytes(),
        digest,
        body,
    ] {
        m.update(&(field.len() as u64).to_be_bytes());
        m.update(field);
    }
    m
}

/// Round 1: the stage (1) and expiry sealed, the form elicitation written around them.
fn ask(mac: &HmacSha256, digest: &[u8], now: u64, id: &str) -> Vec<u8> {
    // body: round (1 byte), expiry (8 bytes), the stage as JSON
    let mut sealed = Vec::with_capacity(64);
    sealed.push(1u8);
    sealed.extend_from_slice(&now.saturating_add(TTL).to_be_bytes());
    sealed.extend_from_slice(br#"{"s":1,"p":{"github_login":"e"}}"#);
    let tag = keyed(mac, digest, &sealed).finalize().into_bytes();
    sealed.extend_from_slice(&tag[..TAG_LEN]);
    const HEAD: &str = r#","result":{"resultType":"input_required","inputRequests":{"github_login":{"method":"elicitation/create","params":{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"properties":{"name":{"description":"Your GitHub username.","type":"string"}},"required":["name"],"type":"object"}}}},"requestState":""#;
    let mut out = Vec::with_capacity(640);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(HEAD.as_bytes());
    out.extend_from_slice(PREFIX.as_bytes());
    let start = out.len();
    out.resize(
        start + base64::encoded_len(sealed.len(), false).unwrap_or(0),
        0,
    );
    let written = URL_SAFE_NO_PAD
        .encode_slice(&sealed, &mut out[start..])
        .unwrap_or(0);
    out.truncate(start + written);
    out.extend_from_slice(b"\",");
    out.extend_from_slice(META.as_bytes());
    out.extend_from_slice(b"}}");
    out
}

/// Round 2's state checked: prefix, base64, tag (constant time), round, expiry.
fn open(mac: &HmacSha256, digest: &[u8], now: u64, token: &str) -> Result<(), Refusal> {
    const BAD: Refusal = Refusal::Rpc(-32602, "invalid requestState");
    let b64 = token.strip_prefix(PREFIX).ok_or(BAD)?;
    let raw = URL_SAFE_NO_PAD.decode(b64).map_err(|_| BAD)?;
    if raw.len() < 9 + TAG_LEN {
        return Err(BAD);
    }
    let (body, got) = raw.split_at(raw.len() - TAG_LEN);
    // the tag checked in constant time
    keyed(mac, digest, body)
        .verify_truncated_left(got)
        .map_err(|_| BAD)?;
    let expiry = u64::from_be_bytes(body[1..9].try_into().map_err(|_| BAD)?);
    if body[0] != 1 || expiry < now || &body[9..] != br#"{"s":1,"p":{"github_login":"e"}}"# {
        return Err(BAD);
    }
    Ok(())
}

/// Round 2: the forecast, or the decline and cancel texts.
fn complete(location: &str, answer: &Answer<'_>, id: &str) -> Result<Vec<u8>, Refusal> {
    let mut out = Vec::with_capacity(400);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(
        br#","result":{"resultType":"complete","content":[{"type":"text","text":"#,
    );
    match (&*answer.action, &answer.content) {
        ("accept", Some(login)) => {
            let (sky, high_c) = forecast(location);
            let user = bounded(&login.name, 64);
            let text = format!("Weather in {location} for {user}: {sky}, high {high_c} °C.");
            json(&mut out, &text);
            out.extend_from_slice(br#"}],"structuredContent":"#);
            let structured = Forecast {
                location,
                sky,
                high_c,
                requested_by: &user,
            };
            json(&mut out, &structured);
        }
        ("accept", None) => return Err(Refusal::Rpc(-32602, "accept without content")),
        ("decline", _) => {
            let text = format!(
                "No problem: without a GitHub username I can't look up the weather for {location}. \
                 Ask again whenever you like."
            );
            json(&mut out, &text);
            out.extend_from_slice(b"}]");
        }
        ("cancel", _) => {
            json(
                &mut out,
                &"Cancelled: the weather lookup was stopped, nothing was done.",
            );
            out.extend_from_slice(b"}]");
        }
        _ => return Err(Refusal::Rpc(-32602, "unknown action")),
    }
    out.push(b',');
    out.extend_from_slice(META.as_bytes());
    out.extend_from_slice(b"}}");
    Ok(out)
}

/// `v` written as JSON at the end of `out` (strings and numbers always serialize).
fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    let _ = serde_json::to_writer(&mut *out, v);
}
