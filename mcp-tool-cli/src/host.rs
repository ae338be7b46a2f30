//! The pieces of the interactive client ([`app`](crate::app)) that plug into the client's
//! [`Driver`](mcp_tool_client::Driver):
//!
//! * [`ConsoleHost`]: a [`Host`] answering every input request at a [`Console`];
//! * [`Showing`]: a transport wrapper that prints every round as it happens;
//! * [`split_command`]: splits `--stdio "cmd args"` into a program and its arguments.

use std::io::{BufRead, Write};

use mcp_tool_client::{BoxFuture, ClientTransport, Host, HostError, TransportError};
use mcp_tool_runtime::protocol::{
    ClientCapabilities, InputRequest, InputResponse, META_CLIENT_CAPABILITIES,
};
use serde_json::Value;

use crate::interactive::{Console, one_line};

/// A [`Host`] that asks the person at the console.
pub struct ConsoleHost<R, W> {
    /// The console (also used by the client for its own prompts).
    pub console: Console<R, W>,
}

impl<R, W> ConsoleHost<R, W> {
    /// Wraps a console.
    pub fn new(console: Console<R, W>) -> Self {
        ConsoleHost { console }
    }
}

impl<R: BufRead + Send, W: Write + Send> Host for ConsoleHost<R, W> {
    fn capabilities(&self) -> ClientCapabilities {
        serde_json::from_value(self.console.config().capabilities()).unwrap_or_default()
    }

    fn respond<'a>(
        &'a mut self,
        key: &'a str,
        req: &'a InputRequest,
    ) -> BoxFuture<'a, Result<InputResponse, HostError>> {
        let answer = (|| {
            let raw = serde_json::to_value(req).map_err(|e| HostError::Failed(e.to_string()))?;
            let answer = self
                .console
                .answer(key, &raw)
                .map_err(|_| HostError::Unsupported {
                    key: key.to_owned(),
                    method: req.method().to_owned(),
                })?;
            req.parse_response(answer)
                .map_err(|e| HostError::Failed(e.to_string()))
        })();
        Box::pin(std::future::ready(answer))
    }
}

/// Splits a command line into words as a POSIX shell would (`shlex`): whitespace separates
/// words, `'…'` and `"…"` quote, a backslash escapes the next character (outside single
/// quotes).
///
/// # Errors
/// On an unterminated quote, a trailing backslash or an empty command.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let words =
        shlex::split(line).ok_or_else(|| "unbalanced quotes or a trailing backslash".to_owned())?;
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

/// Prints every message going through the inner transport as it happens: a one-line
/// summary of each round, or the full pretty JSON with `verbose`.
pub struct Showing<T> {
    inner: T,
    verbose: bool,
}

impl<T> Showing<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, verbose: bool) -> Self {
        Showing { inner, verbose }
    }
}

/// A one-line description of an outgoing JSON-RPC message.
pub fn describe_request(msg: &Value) -> String {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("?");
    let id = msg
        .get("id")
        .map(|i| format!("id {i}"))
        .unwrap_or_else(|| "notification".into());
    let params = msg.get("params");
    let mut s = format!("→ {method} ({id})");
    if let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) {
        s.push_str(&format!(" {name}"));
        if let Some(args) = params.and_then(|p| p.get("arguments")) {
            s.push_str(&format!(" {}", one_line(&args.to_string(), 100)));
        }
    }
    if let Some(Value::Object(r)) = params.and_then(|p| p.get("inputResponses")) {
        let keys: Vec<&str> = r.keys().map(String::as_str).collect();
        s.push_str(&format!(" + inputResponses [{}]", keys.join(", ")));
    }
    if params.and_then(|p| p.get("requestState")).is_some() {
        s.push_str(" + requestState");
    }
    if let Some(caps) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(Value::as_object)
    {
        let names: Vec<&str> = caps.keys().map(String::as_str).collect();
        s.push_str(&format!(" [capabilities: {}]", names.join(", ")));
    }
    s
}

/// A one-line description of an incoming JSON-RPC response.
pub fn describe_response(msg: &Value) -> String {
    if let Some(err) = msg.get("error") {
        let code = err.get("code").cloned().unwrap_or(Value::Null);
        let message = err.get("message").and_then(Value::as_str).unwrap_or("");
        let data = err
            .get("data")
            .map(|d| format!(" {}", one_line(&d.to_string(), 120)))
            .unwrap_or_default();
        return format!("← error {code}: {message}{data}");
    }
    let result = msg.get("result").cloned().unwrap_or(Value::Null);
    match result.get("resultType").and_then(Value::as_str) {
        Some("input_required") => {
            let mut parts = Vec::new();
            if let Some(Value::Object(reqs)) = result.get("inputRequests") {
                for (k, r) in reqs {
                    let m = r.get("method").and_then(Value::as_str).unwrap_or("?");
                    parts.push(format!("{k} ({m})"));
                }
            }
            let state = if result.get("requestState").is_some() {
                " + requestState"
            } else {
                ""
            };
            if parts.is_empty() {
                format!("← input_required: no questions, retry{state}")
            } else {
                format!("← input_required: {}{state}", parts.join(", "))
            }
        }
        other => {
            let error = result.get("isError").and_then(Value::as_bool) == Some(true);
            format!(
                "← {}{}",
                other.unwrap_or("complete"),
                if error { " (isError)" } else { "" }
            )
        }
    }
}

impl<T: ClientTransport> ClientTransport for Showing<T> {
    fn send<'a>(&'a self, message: Value) -> BoxFuture<'a, Result<Option<Value>, TransportError>> {
        Box::pin(async move {
            if self.verbose {
                println!(
                    "{}\n{}",
                    describe_request(&message),
                    serde_json::to_string_pretty(&message).unwrap_or_default()
                );
            } else {
                println!("{}", describe_request(&message));
            }
            let resp = self.inner.send(message).await;
            match &resp {
                Ok(Some(v)) if self.verbose => println!(
                    "{}\n{}",
                    describe_response(v),
                    serde_json::to_string_pretty(v).unwrap_or_default()
                ),
                Ok(Some(v)) => println!("{}", describe_response(v)),
                Ok(None) => println!("← (no response)"),
                Err(e) => println!("← transport error: {e}"),
            }
            resp
        })
    }

    /// Says on standard error that it listens (standard output is the stream's).
    fn listen<'a>(
        &'a self,
        message: Value,
    ) -> BoxFuture<'a, Result<mcp_tool_client::Listening, TransportError>> {
        eprintln!("{}", describe_request(&message));
        self.inner.listen(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_commands() {
        assert_eq!(
            split_command("serve --repo '/tmp/a b' \"x\\\"y\" c\\ d").unwrap(),
            vec!["serve", "--repo", "/tmp/a b", "x\"y", "c d"]
        );
        assert!(split_command("  ").is_err());
        assert!(split_command("a 'b").is_err());
        assert!(split_command("a \"b").is_err());
        assert!(split_command("a\\").is_err());
        assert_eq!(split_command("''").unwrap(), vec![""]);
    }

    #[test]
    fn describes_rounds() {
        let req = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "get_weather", "arguments": {"location": "Paris"},
            "inputResponses": {"github_login": {}}, "requestState": "x",
            "_meta": {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        }});
        assert_eq!(
            describe_request(&req),
            "→ tools/call (id 2) get_weather {\"location\":\"Paris\"} + inputResponses [github_login] + requestState [capabilities: elicitation]"
        );
        let resp = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required",
            "inputRequests": {"github_login": {"method": "elicitation/create", "params": {}}}, "requestState": "s"}});
        assert_eq!(
            describe_response(&resp),
            "← input_required: github_login (elicitation/create) + requestState"
        );
        let shed =
            json!({"id": 1, "result": {"resultType": "input_required", "requestState": "s"}});
        assert_eq!(
            describe_response(&shed),
            "← input_required: no questions, retry + requestState"
        );
        let err = json!({"id": 1, "error": {"code": -32021, "message": "m", "data": {"requiredCapabilities": {"sampling": {}}}}});
        assert_eq!(
            describe_response(&err),
            "← error -32021: m {\"requiredCapabilities\":{\"sampling\":{}}}"
        );
        assert_eq!(
            describe_response(
                &json!({"id": 1, "result": {"resultType": "complete", "isError": true}})
            ),
            "← complete (isError)"
        );
    }
}
