//! `tools/call`: one round of a (possibly multi round-trip) tool call.

use serde_json::Value;

use super::errors::{self, Mapped, invalid_params};
use super::rounds::{Concluded, Prepared, Target};
use super::{Server, to_value};
use crate::notify::ProgressReporter;
use crate::principal::Principal;
use crate::protocol::{CallToolResult, ClientCapabilities, ErrorObject, JsonObject, ResultType};

impl Server {
    pub(super) async fn call(
        &self,
        params: &JsonObject,
        caps: ClientCapabilities,
        principal: &Principal,
        progress: Option<ProgressReporter>,
    ) -> Result<Value, ErrorObject> {
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
        let target = Target {
            method: "tools/call",
            name,
            noun: "tool",
            rounds: &reg.rounds,
        };
        let mut run = match self.prepare(&target, &args, params, &caps, principal, progress)? {
            Prepared::Reask(result) => return Ok(result),
            Prepared::Run(run) => run,
        };
        let state = run.state.take();
        let outcome = reg.tool.step(&mut run.cx, args, state).await;
        match self.conclude(&target, principal, &caps, run, outcome)? {
            Concluded::Complete { value, .. } => Ok(self.complete(value)),
            Concluded::InputRequired(result) => Ok(result),
            Concluded::Failed(e) => match errors::map_tool_error(name, e) {
                Mapped::Result(r) => Ok(self.complete(r)),
                Mapped::Error(e) => Err(e),
            },
        }
    }

    fn complete(&self, mut result: CallToolResult) -> Value {
        result.result_type = ResultType::Complete;
        let meta = result.meta.get_or_insert_with(JsonObject::new);
        meta.extend(self.server_meta());
        to_value(&result)
    }
}
