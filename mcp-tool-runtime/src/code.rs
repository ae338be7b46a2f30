//! What the two engines run, and what they say about it: [`Code`] (one round of a tool,
//! prompt or resource read, or its whole function in direct mode), the [`Target`] a request
//! names, and how a run [`Concluded`]. Shared by the stateless round engine
//! ([`crate::rounds`]) and legacy sessions ([`crate::legacy`]), which never import each other.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::context::ToolContext;
use crate::error::{BoxFuture, ToolError};
use crate::prompt::Prompt;
use crate::protocol::{
    Answer, CallToolResult, ElicitParams, GetPromptResult, InputRequest, InputRequests, JsonObject,
    Outcome, ResourceContents, ResultType, SharedObject,
};
use crate::resource::Resource;
use crate::tool::{Rounds, Step, Tool};

/// The code behind a request: one round of its state machine ([`Code::step`]), or its
/// function run once in direct mode ([`Code::direct`], legacy sessions). Implemented for
/// tools, prompts, and a resource at a URI.
pub(crate) trait Code<T>: Sync {
    /// One round (see [`Tool::step`](crate::tool::Tool::step)).
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step<T>, ToolError>>;

    /// The whole function in direct mode, if it has one.
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: &'a RawValue,
    ) -> Option<BoxFuture<'a, Result<T, ToolError>>>;
}

/// [`Code`] of a tool or a prompt: its own `step` and `direct`.
macro_rules! code_of {
    ($($kind:ident => $result:ty),*) => {$(
        impl Code<$result> for &dyn $kind {
            fn step<'a>(
                &'a self,
                cx: &'a mut ToolContext,
                input: &'a RawValue,
                state: Option<&'a RawValue>,
            ) -> BoxFuture<'a, Result<Step<$result>, ToolError>> {
                $kind::step(*self, cx, input, state)
            }
            fn direct<'a>(
                &'a self,
                cx: &'a mut ToolContext,
                input: &'a RawValue,
            ) -> Option<BoxFuture<'a, Result<$result, ToolError>>> {
                $kind::direct(*self, cx, input)
            }
        }
    )*};
}

code_of!(Tool => CallToolResult, Prompt => GetPromptResult);

/// A resource read at one URI (its input is the template's variables).
pub(crate) struct ReadAt<'r> {
    pub resource: &'r dyn Resource,
    pub uri: &'r str,
}

impl Code<Vec<ResourceContents>> for ReadAt<'_> {
    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step<Vec<ResourceContents>>, ToolError>> {
        self.resource.step(cx, self.uri.to_owned(), input, state)
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        input: &'a RawValue,
    ) -> Option<BoxFuture<'a, Result<Vec<ResourceContents>, ToolError>>> {
        self.resource.direct(cx, self.uri.to_owned(), input)
    }
}

/// What a request resumes: the method and name bound into its state, and its settings.
pub(crate) struct Target<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// `tool`, `prompt` or `resource`, for messages.
    pub noun: &'static str,
    /// Its round settings.
    pub rounds: &'a Rounds,
}

/// How a run of [`Code`] ended (the outcome of [`Engine::conclude`](crate::rounds::Engine::conclude)
/// and of a legacy run).
pub(crate) enum Concluded<R> {
    /// The code completed with this value; `resumed` when it took more than one request
    /// (such a result must not be cached).
    Complete { value: R, resumed: bool },
    /// The code suspended: its requests and the sealed state, or the same ones again when
    /// answers are missing.
    InputRequired(Suspension),
    /// The code suspended after `cx.detach()`: its requests and the sealed state, from
    /// which a task starts when the client declared the tasks extension.
    Detached(Suspension),
    /// The code failed.
    Failed(ToolError),
}

/// A suspended round: what the client must answer and the sealed `requestState` to echo.
/// The `input_required` result is [`Suspension::answer`] (written from these fields) or
/// [`Suspension::to_value`].
#[derive(Debug)]
pub(crate) struct Suspension {
    /// The requests the client must answer.
    pub requests: InputRequests,
    /// The sealed state.
    pub token: String,
}

impl Suspension {
    /// The `input_required` result with `meta` (the server's `_meta`) as its `_meta`.
    fn result<'a, M: Serialize + ?Sized>(&'a self, meta: &'a M) -> InputRequiredOut<'a, M> {
        InputRequiredOut {
            result_type: ResultType::InputRequired,
            input_requests: (!self.requests.is_empty()).then_some(&self.requests),
            request_state: &self.token,
            meta,
        }
    }

    /// The `input_required` result, written as JSON: the JSON of [`InputRequiredOut`], byte
    /// for byte, with its member names written as the text they are and the strings that need
    /// no escaping (a sealed state always; most keys and messages) copied between quotes.
    ///
    /// Written by hand for speed, where serde_json escapes every string byte by byte: it
    /// saves `get_weather`'s round 1 3,235 instructions a request, 5.7 % of the round's
    /// instructions but its SHA-256 blocks (56,510), which natively run on the CPU's SHA
    /// extensions at ~230 instructions a block (4.2 % with them counted as valgrind's portable
    /// code, 3,370 a block). Measured by `ROWS=r1 scripts/callgrind_weather.sh` on a build
    /// with and without it (docs/BENCHMARKS.md, "Hand-written pieces").
    pub(crate) fn answer(&self, meta: &SharedObject) -> Answer {
        Answer::write_with(Outcome::InputRequired, |buf| self.write_answer(buf, meta))
            .unwrap_or_else(|| Answer::Tree(self.to_value(meta)))
    }

    fn write_answer(&self, buf: &mut Vec<u8>, meta: &SharedObject) -> serde_json::Result<()> {
        buf.extend_from_slice(br#"{"resultType":"input_required""#);
        let mut sep = &br#","inputRequests":{"#[..];
        for (key, request) in &self.requests {
            buf.extend_from_slice(sep);
            sep = b",";
            write_str(buf, key)?;
            buf.push(b':');
            match request {
                InputRequest::Elicit(ElicitParams::Form(p)) if p.extra.is_empty() => {
                    buf.extend_from_slice(
                        br#"{"method":"elicitation/create","params":{"mode":"form","message":"#,
                    );
                    write_str(buf, &p.message)?;
                    buf.extend_from_slice(br#","requestedSchema":"#);
                    serde_json::to_writer(&mut *buf, &p.requested_schema)?;
                    buf.extend_from_slice(b"}}");
                }
                _ => serde_json::to_writer(&mut *buf, request)?,
            }
        }
        if !self.requests.is_empty() {
            buf.push(b'}');
        }
        buf.extend_from_slice(br#","requestState":"#);
        write_str(buf, &self.token)?;
        buf.extend_from_slice(br#","_meta":"#);
        serde_json::to_writer(&mut *buf, meta)?;
        buf.push(b'}');
        Ok(())
    }

    /// The `input_required` result as a tree.
    pub(crate) fn to_value(&self, meta: &JsonObject) -> Value {
        crate::protocol::to_value(&self.result(meta))
    }
}

/// `text` as a JSON string at the end of `out`: between quotes as it is when nothing in it
/// needs escaping ([`needs_escape`](crate::protocol::needs_escape)), else escaped by
/// serde_json.
fn write_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if crate::protocol::needs_escape(text) {
        return serde_json::to_writer(out, text);
    }
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// [`InputRequiredResult`](crate::protocol::InputRequiredResult) by reference: the same
/// JSON, written without copying the requests or the server's `_meta`.
#[derive(Serialize)]
struct InputRequiredOut<'a, M: ?Sized> {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    #[serde(rename = "inputRequests", skip_serializing_if = "Option::is_none")]
    input_requests: Option<&'a InputRequests>,
    #[serde(rename = "requestState")]
    request_state: &'a str,
    #[serde(rename = "_meta")]
    meta: &'a M,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ListRootsParams;
    use serde_json::json;

    /// The written `input_required` result is the JSON of [`InputRequiredOut`], byte for
    /// byte: with and without requests (forms with a plain and an escaped message, written by
    /// hand; a form with `_meta`, a URL elicitation and roots, written by serde; keys that
    /// need escaping), and with a state that needs escaping (which a sealed one never does) or
    /// does not.
    #[test]
    fn an_input_required_answer_is_written_as_serde_writes_it() {
        let meta: SharedObject = match json!({"io.modelcontextprotocol/serverInfo": {"name": "s"}})
        {
            Value::Object(o) => o.into(),
            _ => unreachable!("an object"),
        };
        let mut asked = InputRequests::new();
        let form: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Name \"é\"?",
                       "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .expect("a form request");
        asked.insert("who".into(), form);
        let plain: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Your name?",
                       "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .expect("a form request with a plain message");
        asked.insert("plain".into(), plain);
        let with_meta: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "ctl\u{7}", "_meta": {"k": [1]},
                       "requestedSchema": {"type": "object", "properties": {}}}
        }))
        .expect("a form request with _meta");
        asked.insert("with_meta".into(), with_meta);
        let url: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Open", "url": "https://example.com/a?b=\"c\""}
        }))
        .expect("a URL request");
        asked.insert("url".into(), url);
        asked.insert(
            "r\"oots".into(),
            InputRequest::Roots(ListRootsParams::default()),
        );
        for requests in [InputRequests::new(), asked] {
            for token in [
                "mts3.k1.AbC-_09",
                "",
                "a\"quote",
                "back\\slash",
                "ctl\u{1}\n",
                "é ü 🦀",
            ] {
                let s = Suspension {
                    requests: requests.clone(),
                    token: token.into(),
                };
                let Answer::Written(written, Outcome::InputRequired) = s.answer(&meta) else {
                    panic!("a written input_required answer");
                };
                let want = serde_json::to_string(&s.result(&meta)).expect("serializes");
                assert_eq!(written.get(), want, "{token:?}");
            }
        }
    }
}
