//! A result on its way to the wire: a `Value` tree, or JSON the server already wrote from a
//! typed result ([`Answer`]); and the response carrying it ([`Reply`]). The hot results
//! (a round's `input_required`, a completed `tools/call`) are written straight from their
//! structs into bytes, never built as a tree first; callers that want a tree
//! ([`Reply::into_response`]) parse it back, which only in-process users pay.

use std::fmt;

use serde_json::Value;

use super::{ErrorObject, JsonRpcResponse, RequestId};

/// Room a written result starts with: a round's `input_required` result (a form's schema,
/// the sealed state, the server's `_meta`) fits without the buffer growing, and glibc serves
/// it from its small bins (a request of 1 KiB or more is a large one, and sweeps the fast
/// bins first).
const WRITE_CAPACITY: usize = 768;

/// What a successful result says about its request, read without parsing it (metrics and
/// traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A complete result.
    Ok,
    /// A complete `tools/call` result with `isError: true` (a tool error). Not named
    /// `ToolError`: a second item of that name would make rustc spell the error type's full
    /// path in every diagnostic about it.
    IsError,
    /// `resultType: "input_required"`.
    InputRequired,
}

/// A successful result: a tree, or JSON already written.
#[derive(Debug)]
pub enum Answer {
    /// A result built as a `Value`.
    Tree(Value),
    /// A result written as JSON from its typed form, and what it is.
    Written(Written, Outcome),
}

/// JSON text the server wrote from a typed result (only the server makes one, so it is
/// always one valid JSON value). Kept in the buffer it was written into: nothing is copied
/// to shrink it, and [`Reply::to_vec`] copies it once, into the response.
///
/// ```
/// use mcp_tool_runtime::server::NotificationSink;
/// use mcp_tool_runtime::protocol::{Implementation, Reply};
/// use mcp_tool_runtime::server::Server;
/// use mcp_tool_runtime::{Principal, ToolContext, ToolError, mcp_tool};
/// use serde_json::{Value, json};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args {
///     who: String,
/// }
///
/// /// Says hello.
/// #[mcp_tool]
/// async fn hello(_cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
///     Ok(format!("Hello, {}!", args.who))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let server = Server::builder(Implementation::new("demo", "1.0"))
///     .tool(hello::tool())
///     .build()
///     .unwrap();
/// let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
///     "name": "hello",
///     "arguments": {"who": "Ada"},
///     "_meta": {
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientCapabilities": {}
///     }
/// }});
/// let reply = server
///     .handle_text(&call.to_string(), &Principal::anonymous(), NotificationSink::none())
///     .await
///     .unwrap();
/// let Reply::Written { result, .. } = &reply else { panic!("a written result") };
/// let parsed: Value = serde_json::from_str(result.get()).unwrap();
/// assert_eq!(parsed["content"][0]["text"], "Hello, Ada!");
/// // the response: the JSON-RPC envelope written around the same text
/// let sent = String::from_utf8(reply.to_vec().unwrap()).unwrap();
/// assert!(sent.ends_with(&format!(r#""result":{result}}}"#)));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written(String);

impl Written {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Answer {
    /// The JSON that `write` puts into an empty buffer (one JSON value, or an error), kept as
    /// a written result (`outcome` says what it is). `None` in the impossible case that it
    /// fails (every protocol type serializes).
    pub(crate) fn write_with(
        outcome: Outcome,
        write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> Option<Answer> {
        let mut buf = Vec::with_capacity(WRITE_CAPACITY);
        let written = write(&mut buf)
            .map_err(|e| e.to_string())
            // serde_json writes UTF-8 only; checked all the same, never assumed
            .and_then(|()| String::from_utf8(buf).map_err(|e| e.to_string()));
        match written {
            Ok(text) => Some(Answer::Written(Written(text), outcome)),
            Err(e) => {
                tracing::error!(error = %e, "could not serialize a result");
                None
            }
        }
    }

    /// What the result says about its request.
    pub fn outcome(&self) -> Outcome {
        match self {
            Answer::Written(_, outcome) => *outcome,
            Answer::Tree(v) if v.get("isError") == Some(&Value::Bool(true)) => Outcome::IsError,
            Answer::Tree(v)
                if v.get("resultType").and_then(Value::as_str) == Some("input_required") =>
            {
                Outcome::InputRequired
            }
            Answer::Tree(_) => Outcome::Ok,
        }
    }

    /// The result as a tree (written JSON is parsed back).
    pub fn into_value(self) -> Value {
        match self {
            Answer::Tree(v) => v,
            Answer::Written(raw, _) => tree(&raw),
        }
    }
}

/// Written JSON parsed back into a tree (it was written by the server from a value, so it
/// parses; `Null` otherwise).
fn tree(written: &Written) -> Value {
    serde_json::from_str(written.get()).unwrap_or(Value::Null)
}

variant_from!(Answer: Tree(Value));

/// A response as the server made it: a [`JsonRpcResponse`], or a success whose result is
/// JSON already written (copied into the response's bytes as it is).
#[derive(Debug)]
pub enum Reply {
    /// A response built as a tree (every error, and results built as trees).
    Response(JsonRpcResponse),
    /// A success whose result was written from its typed form.
    Written {
        /// The id of the request answered.
        id: RequestId,
        /// The result, as JSON.
        result: Written,
    },
}

impl Reply {
    /// The reply to request `id` with `outcome`.
    pub fn new(id: RequestId, outcome: Result<Answer, ErrorObject>) -> Reply {
        match outcome {
            Ok(Answer::Written(result, _)) => Reply::Written { id, result },
            Ok(Answer::Tree(v)) => Reply::Response(JsonRpcResponse::result(id, v)),
            Err(e) => Reply::Response(JsonRpcResponse::error(Some(id), e)),
        }
    }

    /// The error object, when this is an error response.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match self {
            Reply::Response(r) => r.error_object(),
            Reply::Written { .. } => None,
        }
    }

    /// The error code, when this is an error response.
    pub fn error_code(&self) -> Option<i64> {
        self.error_object().map(|e| e.code)
    }

    /// The response as a tree (a written result is parsed back).
    pub fn into_response(self) -> JsonRpcResponse {
        match self {
            Reply::Response(r) => r,
            Reply::Written { id, result } => JsonRpcResponse::result(id, tree(&result)),
        }
    }

    /// The response as JSON bytes.
    pub fn to_vec(&self) -> serde_json::Result<Vec<u8>> {
        match self {
            Reply::Response(r) => serde_json::to_vec(r),
            // `{"jsonrpc":"2.0","id":…,"result":…}` in one buffer of the right size
            Reply::Written { id, result } => {
                const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
                const RESULT: &[u8] = br#","result":"#;
                let id_room = match id {
                    RequestId::String(s) => s.len() + 2,
                    RequestId::Number(_) => 20,
                };
                let mut out =
                    Vec::with_capacity(HEAD.len() + id_room + RESULT.len() + result.0.len() + 1);
                out.extend_from_slice(HEAD);
                serde_json::to_writer(&mut out, id)?;
                out.extend_from_slice(RESULT);
                out.extend_from_slice(result.0.as_bytes());
                out.push(b'}');
                Ok(out)
            }
        }
    }
}

variant_from!(Reply: Response(JsonRpcResponse));

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_written_reply_has_the_bytes_of_the_same_reply_as_a_tree() {
        let result = json!({"resultType": "input_required", "requestState": "t", "x": [1, 2]});
        let written = Answer::write_with(Outcome::InputRequired, |b| {
            serde_json::to_writer(b, &result)
        })
        .expect("writes");
        assert_eq!(written.outcome(), Outcome::InputRequired);
        let id = RequestId::Number(7.into());
        let a = Reply::new(id.clone(), Ok(written));
        let b = Reply::new(id, Ok(Answer::Tree(result.clone())));
        assert!(matches!(a, Reply::Written { .. }));
        let (ba, bb) = (a.to_vec().expect("a"), b.to_vec().expect("b"));
        assert_eq!(
            serde_json::from_slice::<Value>(&ba).expect("json"),
            serde_json::from_slice::<Value>(&bb).expect("json")
        );
        assert_eq!(a.into_response(), b.into_response());
    }

    #[test]
    fn a_written_reply_is_one_json_object_whatever_its_id() {
        let result =
            json!({"resultType": "complete", "content": [{"type": "text", "text": "é\""}]});
        for id in [
            RequestId::Number(0.into()),
            RequestId::Number(serde_json::Number::from_f64(-1.5e300).expect("finite")),
            RequestId::String("a \"quoted\" id \\ with escapes".into()),
            RequestId::String(String::new()),
        ] {
            let written = Answer::write_with(Outcome::Ok, |b| serde_json::to_writer(b, &result))
                .expect("writes");
            let bytes = Reply::new(id.clone(), Ok(written)).to_vec().expect("bytes");
            let sent: Value = serde_json::from_slice(&bytes).expect("one JSON value");
            assert_eq!(sent, json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
    }

    #[test]
    fn a_tree_says_what_it_is() {
        assert_eq!(
            Answer::Tree(json!({"isError": true})).outcome(),
            Outcome::IsError
        );
        assert_eq!(
            Answer::Tree(json!({"resultType": "input_required"})).outcome(),
            Outcome::InputRequired
        );
        assert_eq!(
            Answer::Tree(json!({"resultType": "complete"})).outcome(),
            Outcome::Ok
        );
    }
}
