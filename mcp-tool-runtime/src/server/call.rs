//! `tools/call`: one round of a (possibly multi round-trip) tool call, or in a legacy
//! session the whole call.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Era;
use super::{Registered, Server, to_value};
use crate::code::{Concluded, Suspension, Target};
use crate::error::{Mapped, map_tool_error};
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::protocol::errors::{self, invalid_params};
use crate::protocol::text::{self, ParamsIn, RoundIn};
use crate::protocol::{
    Answer, CallToolResult, ClientCapabilities, ContentBlock, ErrorObject, JsonObject, Outcome,
    ResultType, SharedObject, StructuredContent,
};
use crate::tasks::{TaskStart, TaskSupport};

impl Server {
    pub(crate) async fn call(
        &self,
        params: &ParamsIn<'_>,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Answer, ErrorObject> {
        let (name, reg, args) = self.resolve_tool(params)?;
        let name = name.as_ref();
        // A modern round's result is written straight to JSON; a legacy session rewrites
        // its result as a tree (`to_legacy`).
        let write = matches!(era, Era::Modern { .. });
        // The Tasks extension (SEP-2663), for 2026-07-28 requests only: the server decides;
        // a client that declares the extension on this request gets a task for a tool that
        // supports one, a client that does not gets the plain call, or -32021 when the tool
        // requires a task.
        let mut detach_caps = None;
        if let Era::Modern { caps, .. } = &era
            && reg.info.task != TaskSupport::Forbidden
            && self.tasks_enabled()
        {
            let declared = crate::tasks::declares_tasks(caps);
            if !declared && reg.info.task == TaskSupport::Required {
                return Err(crate::tasks::missing_tasks_extension());
            }
            if declared {
                match reg.info.task_start {
                    TaskStart::Call => {
                        if let Some(missing) = reg.rounds.capabilities.missing_from(caps) {
                            return Err(errors::missing_capability(missing));
                        }
                        return Box::pin(self.create_task(name, args, caps, principal, None))
                            .await
                            .map(Answer::Tree);
                    }
                    TaskStart::Detach => detach_caps = Some(Arc::clone(caps)),
                }
            }
        }
        let target = Target {
            method: "tools/call",
            name,
            noun: "tool",
            rounds: &reg.rounds,
        };
        let tool: &dyn crate::tool::Tool = &*reg.tool;
        // Single use: claim, run, store (legacy sessions have no states to replay).
        // The futures of the rarer paths (tasks, single use) are boxed: held inline, the
        // largest would size this future, which every call allocates and copies whole.
        if reg.info.once
            && let Some((round, caps)) = Self::once_era(&era)
        {
            return Box::pin(
                self.call_once(&target, tool, args, round, caps, principal, notifiers),
            )
            .await
            .map(Answer::Tree);
        }
        // the code takes the arguments; a detaching call (rare) reads them again
        match self
            .execute(&target, &tool, args, era, principal, notifiers)
            .await?
        {
            Concluded::Complete { value, .. } => Ok(self.complete_answer(value, write)),
            Concluded::InputRequired(s) => Ok(self.suspended_answer(&s, write)),
            Concluded::Detached(s) => match detach_caps {
                Some(caps) => {
                    let (_, _, args) = self.resolve_tool(params)?;
                    Box::pin(self.create_task(name, args, &caps, principal, Some(s.token)))
                        .await
                        .map(Answer::Tree)
                }
                // Without the extension, a detaching checkpoint is an ordinary one.
                None => Ok(self.suspended_answer(&s, write)),
            },
            Concluded::Failed(e) => match map_tool_error(name, e) {
                Mapped::Result(r) => Ok(self.complete_answer(r, write)),
                Mapped::Error(e) => Err(e),
            },
        }
    }

    /// The tool named in `tools/call` params and its arguments (an object's text as sent;
    /// absent or `null` is `{}`).
    fn resolve_tool<'p>(
        &self,
        params: &ParamsIn<'p>,
    ) -> Result<(Cow<'p, str>, Arc<Registered>, &'p RawValue), ErrorObject> {
        let Some(name) = params.name() else {
            return Err(invalid_params("tools/call: `name` must be a string"));
        };
        let Some(reg) = self.catalog().tools.get(name.as_ref()).cloned() else {
            return Err(invalid_params(format!("Unknown tool: {name}")));
        };
        let args = match params.arguments {
            None => crate::tool::no_args(),
            Some(a) if text::is_null(a) => crate::tool::no_args(),
            Some(a) if text::is_object(a) => a,
            Some(_) => return Err(invalid_params("tools/call: `arguments` must be an object")),
        };
        Ok((name, reg, args))
    }

    pub(crate) fn complete(&self, result: CallToolResult) -> Value {
        to_value(&self.completed(result))
    }

    /// `result` as the server answers it: `resultType: complete`, the server's `_meta` added.
    fn completed(&self, mut result: CallToolResult) -> CallToolResult {
        result.result_type = ResultType::Complete;
        let meta = result.meta.get_or_insert_with(JsonObject::new);
        meta.extend(self.server_meta());
        result
    }

    /// A completed call's result: written as JSON when `write`, else a tree.
    fn complete_answer(&self, result: CallToolResult, write: bool) -> Answer {
        if !write {
            return Answer::Tree(self.complete(result));
        }
        let outcome = if result.is_error == Some(true) {
            Outcome::IsError
        } else {
            Outcome::Ok
        };
        let out = CompletedOut::new(&result, &self.inner.engine.meta);
        Answer::write_with(outcome, |buf| serde_json::to_writer(buf, &out))
            .unwrap_or_else(|| Answer::Tree(self.complete(result)))
    }

    /// A suspended round's `input_required` result: written as JSON when `write`, else a
    /// tree.
    fn suspended_answer(&self, s: &Suspension, write: bool) -> Answer {
        if write {
            s.answer(&self.inner.engine.meta)
        } else {
            Answer::Tree(self.suspended(s))
        }
    }

    /// A suspended run's `input_required` result as a tree, with the server's `_meta`
    /// (prompts, resources, single-use rounds and legacy sessions answer trees).
    pub(crate) fn suspended(&self, s: &Suspension) -> Value {
        s.to_value(&self.inner.engine.meta)
    }

    /// Whether `era` runs a single-use tool's round through the ledger (modern requests).
    fn once_era<'e>(era: &Era<'e>) -> Option<(RoundIn<'e>, &'e Arc<ClientCapabilities>)> {
        match era {
            Era::Modern { round, caps } => Some((*round, caps)),
            Era::Legacy { .. } => None,
        }
    }
}

/// [`Server::completed`]'s result by reference: the same JSON, written without copying the
/// content or the server's `_meta` into the result first.
#[derive(Serialize)]
struct CompletedOut<'a> {
    #[serde(rename = "resultType")]
    result_type: ResultType,
    content: &'a [ContentBlock],
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a StructuredContent>,
    #[serde(rename = "isError", skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(rename = "_meta")]
    meta: MetaOut<'a>,
}

impl<'a> CompletedOut<'a> {
    /// `result` completed, its `_meta` extended with `server`'s.
    fn new(result: &'a CallToolResult, server: &'a SharedObject) -> Self {
        CompletedOut {
            result_type: ResultType::Complete,
            content: &result.content,
            structured_content: result.structured_content.as_ref(),
            is_error: result.is_error,
            meta: MetaOut {
                own: result.meta.as_ref(),
                server,
            },
        }
    }
}

/// A result's own `_meta` extended with the server's, as `JsonObject::extend` would make
/// it (a member of both is the server's), written without building the merged object (the
/// server's alone, the usual case, as the text it made once).
struct MetaOut<'a> {
    own: Option<&'a JsonObject>,
    server: &'a SharedObject,
}

impl Serialize for MetaOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if self.own.is_none_or(JsonObject::is_empty) {
            return self.server.serialize(serializer);
        }
        let own = self
            .own
            .into_iter()
            .flatten()
            .filter(|(k, _)| !self.server.contains_key(*k));
        let mut map = serializer.serialize_map(None)?;
        for (k, v) in own.chain(&**self.server) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> JsonObject {
        match v {
            Value::Object(o) => o,
            _ => unreachable!("an object"),
        }
    }

    /// The written `_meta` is the tool's own extended with the server's (a member of both
    /// is the server's), what `JsonObject::extend` made before; the rest of the result is
    /// `CallToolResult`'s own JSON.
    #[test]
    fn a_completed_result_is_written_as_the_merged_result() {
        let server: SharedObject =
            object(json!({"io.modelcontextprotocol/serverInfo": {"name": "s"}, "z": 1})).into();
        for own in [
            None,
            Some(object(json!({}))),
            Some(object(json!({"a": [1], "z": "the tool's", "é\"": null}))),
        ] {
            let mut result = CallToolResult::text("done");
            result.structured_content = Some(json!({"t": 1}).into());
            result.is_error = Some(false);
            result.meta = own.clone();
            let out = CompletedOut::new(&result, &server);
            let mut merged = result.clone();
            merged.result_type = ResultType::Complete;
            merged
                .meta
                .get_or_insert_with(JsonObject::new)
                .extend(JsonObject::clone(&server));
            let written: Value =
                serde_json::from_str(&serde_json::to_string(&out).expect("writes")).expect("JSON");
            assert_eq!(
                written,
                serde_json::to_value(&merged).expect("a tree"),
                "{own:?}"
            );
        }
    }
}
