//! [`HttpTransport`]: Streamable HTTP with reqwest (feature `http`); sets
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` from the body, accepts JSON or SSE
//! responses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::BoxFuture;
use crate::retry::parse_retry_after;
use crate::transport::{ClientTransport, Exchange, TransportError};
use mcp_tool_runtime::protocol::headers::{
    HeaderParam, encode_header_value, header_params, name_field, param_headers,
};
use mcp_tool_runtime::protocol::{META_PROTOCOL_VERSION, PROTOCOL_VERSION};

/// Streamable HTTP client (MCP 2026-07-28) over reqwest.
///
/// The transport learns the `x-mcp-header` annotations of tools from the `tools/list`
/// results that pass through it, mirrors annotated arguments of later `tools/call`s into
/// `Mcp-Param-{Name}` headers, and drops tools with invalid annotations from those
/// results (with a warning), as the transport requires of clients.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    url: String,
    client: reqwest::Client,
    headers: Vec<(String, String)>,
    params: Arc<Mutex<HashMap<String, Vec<HeaderParam>>>>,
}

/// The response's `Retry-After`, when it has a valid one.
fn retry_after_of(resp: &reqwest::Response) -> Option<std::time::Duration> {
    resp.headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}

impl HttpTransport {
    /// A transport posting to `url` (e.g. `http://127.0.0.1:8080/mcp`).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            client: reqwest::Client::new(),
            headers: Vec::new(),
            params: Arc::default(),
        }
    }

    /// Trusts the certificate authorities of a PEM bundle (e.g. a private or self-signed CA)
    /// for `https://`, beside the built-in roots (Mozilla's). The transport gets a new reqwest
    /// client with those roots; certificates are still verified (host name, chain, expiry).
    ///
    /// # Errors
    /// [`TransportError::Config`] when the PEM holds no certificate or one that cannot be
    /// parsed.
    pub fn trusting_pem(mut self, pem: &[u8]) -> Result<Self, TransportError> {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| TransportError::Config(format!("invalid PEM certificate: {e}")))?;
        if certs.is_empty() {
            return Err(TransportError::Config(
                "no certificate in the PEM file".into(),
            ));
        }
        let mut builder = reqwest::Client::builder();
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
        self.client = builder
            .build()
            .map_err(|e| TransportError::Config(e.to_string()))?;
        Ok(self)
    }

    /// Uses this reqwest client (timeouts, proxies, ...).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// Adds `Authorization: Bearer <token>` to every request.
    pub fn bearer(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("authorization", value)
    }

    /// Adds a header to every request (e.g. `Origin`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The MCP request headers for `message`: `MCP-Protocol-Version` (from `_meta`, or
    /// the current version), `Mcp-Method`, and `Mcp-Name` where the method has one.
    pub fn mcp_headers(message: &Value) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let method = message.get("method").and_then(Value::as_str);
        let params = message.get("params");
        let version = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str)
            .unwrap_or(PROTOCOL_VERSION);
        out.push(("mcp-protocol-version", version.to_owned()));
        if let Some(method) = method {
            out.push(("mcp-method", method.to_owned()));
            if let Some(field) = name_field(method)
                && let Some(name) = params.and_then(|p| p.get(field)).and_then(Value::as_str)
            {
                out.push(("mcp-name", encode_header_value(name)));
            }
        }
        out
    }
}

impl HttpTransport {
    /// `Mcp-Param-*` headers for a `tools/call` of a tool seen in an earlier `tools/list`.
    fn param_headers(&self, message: &Value) -> Vec<(String, String)> {
        if message.get("method").and_then(Value::as_str) != Some("tools/call") {
            return Vec::new();
        }
        let params = message.get("params");
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Vec::new();
        };
        let empty = Value::Object(serde_json::Map::new());
        let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&empty);
        let known = self.params.lock().unwrap_or_else(|e| e.into_inner());
        known
            .get(name)
            .map(|p| param_headers(p, arguments))
            .unwrap_or_default()
    }

    /// Records the annotations of listed tools and removes tools whose annotations are invalid.
    fn learn_tools(&self, response: &mut Value) {
        let Some(tools) = response
            .get_mut("result")
            .and_then(|r| r.get_mut("tools"))
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        let mut known = self.params.lock().unwrap_or_else(|e| e.into_inner());
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            match schema.map(header_params) {
                Some(Ok(p)) => {
                    known.insert(name.to_owned(), p);
                    true
                }
                Some(Err(e)) => {
                    tracing::warn!(
                        tool = %mcp_tool_runtime::protocol::errors::for_log(name),
                        error = %mcp_tool_runtime::protocol::errors::for_log_cut(
                            &e,
                            mcp_tool_runtime::protocol::errors::MAX_LOGGED_DETAIL
                        ),
                        "excluding tool with an invalid x-mcp-header annotation"
                    );
                    known.remove(name);
                    false
                }
                None => true,
            }
        });
    }
}

/// `e` and its causes, `: `-separated (reqwest's own message leaves out why, e.g. the TLS
/// handshake's "invalid peer certificate: UnknownIssuer").
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// Extracts the JSON-RPC response from an SSE body: the last `data:` event that is a
/// response (has `result` or `error`); notifications before it are skipped.
#[cfg(test)]
fn response_from_sse(body: &str) -> Option<Value> {
    messages_from_sse(body).1
}

/// Splits an SSE body into the notifications (messages with a `method` and no `id`),
/// in order, and the last response (`result` or `error`). Other events are skipped.
fn messages_from_sse(body: &str) -> (Vec<Value>, Option<Value>) {
    let events = crate::listen::messages_of(body);
    let mut notes = Vec::new();
    let mut last = None;
    for v in events {
        if v.get("result").is_some() || v.get("error").is_some() {
            last = Some(v);
        } else if v.get("method").is_some() && v.get("id").is_none() {
            notes.push(v);
        }
    }
    (notes, last)
}

impl HttpTransport {
    /// The POST of `message` with the MCP headers, this transport's own, and `Accept` for
    /// JSON and SSE.
    fn post(&self, message: &Value) -> Result<reqwest::RequestBuilder, TransportError> {
        let body = serde_json::to_vec(message).map_err(|e| TransportError::Io(e.to_string()))?;
        let mut req = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in Self::mcp_headers(message) {
            req = req.header(k, v);
        }
        for (k, v) in self.param_headers(message) {
            req = req.header(k, v);
        }
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        Ok(req.body(body))
    }
}

impl ClientTransport for HttpTransport {
    /// POSTs the request and reads its `text/event-stream` as it comes (a JSON answer,
    /// the error that refused the listen, is the one message).
    fn listen<'a>(
        &'a self,
        message: Value,
    ) -> BoxFuture<'a, Result<crate::Listening, TransportError>> {
        Box::pin(async move {
            let resp = self
                .post(&message)?
                .send()
                .await
                .map_err(|e| TransportError::Io(with_causes(&e)))?;
            let is_sse = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"));
            if !is_sse {
                let status = resp.status().as_u16();
                let retry_after = retry_after_of(&resp);
                let text = resp
                    .text()
                    .await
                    .map_err(|e| TransportError::Io(e.to_string()))?;
                return match serde_json::from_str::<Value>(&text) {
                    Ok(v) if v.get("error").is_some() => {
                        Ok(crate::Listening::spawn(|feed| async move {
                            feed.send(Ok(v)).await;
                        }))
                    }
                    _ => Err(TransportError::Status {
                        status,
                        body: text.chars().take(2048).collect(),
                        retry_after,
                    }),
                };
            }
            // the body's chunks as they arrive (a read error ends the stream)
            let chunks = futures_util::stream::unfold(Some(resp), |resp| async move {
                let mut resp = resp?;
                match resp.chunk().await {
                    Ok(Some(chunk)) => Some((Ok(chunk), Some(resp))),
                    Ok(None) => None,
                    Err(e) => Some((Err(with_causes(&e)), None)),
                }
            });
            Ok(crate::Listening::spawn(|feed| {
                crate::listen::pump(chunks, feed)
            }))
        })
    }

    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move { Ok(self.exchange(message).await?.response) })
    }

    /// Keeps the notifications of an SSE response (events before the final response).
    fn exchange<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Exchange, TransportError>> {
        Box::pin(async move {
            let is_list = message.get("method").and_then(Value::as_str) == Some("tools/list");
            let resp = self
                .post(&message)?
                .send()
                .await
                .map_err(|e| TransportError::Io(with_causes(&e)))?;
            let status = resp.status().as_u16();
            let retry_after = retry_after_of(&resp);
            let content_type = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let text = resp
                .text()
                .await
                .map_err(|e| TransportError::Io(e.to_string()))?;
            if status == 202 && text.trim().is_empty() {
                return Ok(Exchange::default());
            }
            let (notifications, parsed) = if content_type.starts_with("text/event-stream") {
                messages_from_sse(&text)
            } else {
                (Vec::new(), serde_json::from_str::<Value>(&text).ok())
            };
            match parsed {
                Some(mut v) if v.get("result").is_some() || v.get("error").is_some() => {
                    if is_list {
                        self.learn_tools(&mut v);
                    }
                    Ok(Exchange {
                        notifications,
                        response: Some(v),
                        retry_after,
                    })
                }
                _ => {
                    let mut body = text;
                    if body.len() > 2048 {
                        let mut cut = 2048;
                        while !body.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        body.truncate(cut);
                    }
                    Err(TransportError::Status {
                        status,
                        body,
                        retry_after,
                    })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sse_takes_the_final_response() {
        let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n\
                    data: {\"jsonrpc\":\"2.0\",\"id\":1,\n\
                    data: \"result\":{\"resultType\":\"complete\"}}\n\n";
        let v = response_from_sse(body).unwrap();
        assert_eq!(v["id"], 1);
        assert_eq!(v["result"]["resultType"], "complete");
    }

    #[test]
    fn sse_keeps_notifications_in_order() {
        let body = ": comment\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n\
                    data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":2}}\r\n\r\n\
                    data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n";
        let (notes, resp) = messages_from_sse(body);
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[0]["params"]["progress"], 1);
        assert_eq!(notes[1]["params"]["progress"], 2);
        assert_eq!(resp.unwrap()["id"], 3);
    }

    #[test]
    fn headers_from_body() {
        let msg = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"name":"héllo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
        let h = HttpTransport::mcp_headers(&msg);
        assert!(h.contains(&("mcp-protocol-version", "2026-07-28".into())));
        assert!(h.contains(&("mcp-method", "tools/call".into())));
        assert!(
            h.iter()
                .any(|(k, v)| *k == "mcp-name" && v.starts_with("=?base64?"))
        );
    }
}

#[cfg(test)]
mod learn_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_list_filters_invalid_annotations_and_learns_valid_ones() {
        let t = HttpTransport::new("http://127.0.0.1:1/mcp");
        let mut resp = json!({"jsonrpc":"2.0","id":1,"result":{"tools":[
            {"name":"ok","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}},
            {"name":"plain","inputSchema":{"type":"object"}}
        ]}});
        t.learn_tools(&mut resp);
        let names: Vec<_> = resp["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["ok", "plain"]);
        let call = json!({"method":"tools/call","params":{"name":"ok","arguments":{"r":"x y "}}});
        assert_eq!(
            t.param_headers(&call),
            vec![("Mcp-Param-R".to_owned(), encode_header_value("x y "))]
        );
    }
}
