//! `tools/call`: one round of a (possibly multi round-trip) tool call, or in a legacy
//! session the whole call.

use serde_json::Value;

use super::errors::{self, Mapped, invalid_params};
use super::rounds::{Concluded, Era, Target};
use super::{Registered, Server, to_value};
use crate::notify::Notifiers;
use crate::principal::Principal;
use crate::protocol::{CallToolResult, ErrorObject, JsonObject, ResultType};

impl Server {
    pub(crate) async fn call(
        &self,
        params: &JsonObject,
        era: Era<'_>,
        principal: &Principal,
        notifiers: Notifiers,
    ) -> Result<Value, ErrorObject> {
        let (name, reg, args) = self.resolve_tool(params)?;
        let target = Target {
            method: "tools/call",
            name,
            noun: "tool",
            rounds: &reg.rounds,
        };
        let tool: &dyn crate::tool::Tool = &*reg.tool;
        match self
            .execute(&target, &tool, args, era, principal, notifiers)
            .await?
        {
            Concluded::Complete { value, .. } => Ok(self.complete(value)),
            Concluded::InputRequired(result) => Ok(result),
            Concluded::Failed(e) => match errors::map_tool_error(name, e) {
                Mapped::Result(r) => Ok(self.complete(r)),
                Mapped::Error(e) => Err(e),
            },
        }
    }

    /// The tool named in `tools/call` params and its arguments (an object; absent is `{}`).
    fn resolve_tool<'p>(
        &self,
        params: &'p JsonObject,
    ) -> Result<(&'p str, &Registered, Value), ErrorObject> {
        let name = match params.get("name") {
            Some(Value::String(n)) => n.as_str(),
            _ => return Err(invalid_params("tools/call: `name` must be a string")),
        };
        let Some(reg) = self.inner.tools.get(name) else {
            return Err(invalid_params(format!("Unknown tool: {name}")));
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(a @ Value::Object(_)) => a.clone(),
            Some(_) => return Err(invalid_params("tools/call: `arguments` must be an object")),
        };
        Ok((name, reg, args))
    }

    fn complete(&self, mut result: CallToolResult) -> Value {
        result.result_type = ResultType::Complete;
        let meta = result.meta.get_or_insert_with(JsonObject::new);
        meta.extend(self.server_meta());
        to_value(&result)
    }
}
