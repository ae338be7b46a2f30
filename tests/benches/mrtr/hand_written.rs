//! (b) The same tool hand-written against the `Tool` trait: a hand-rolled phase enum and
//! state struct, request keys and answers by hand (what SDKs without a transform ask for).

use mcp_tool_runtime::manual::Reentrant;
use mcp_tool_runtime::protocol::{CallToolResult, Capability, JsonObject};
use mcp_tool_runtime::requests::elicitation_schema;
use mcp_tool_runtime::{
    RegistrationError, Sample, Tool, ToolContext, ToolError, ToolInfo,
    manual::{BoxFuture, Step, parse_state},
    requests::Ask,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::domain::{CityArgs, Forecast, Login, fetch};

// --- author code begin ---
/// Where the conversation is, plus what earlier rounds learned.
#[derive(Serialize, Deserialize)]
#[serde(tag = "phase")]
enum Phase {
    AskedLogin,
    AskedVerdict { user: String },
}

/// Rates the weather in a city for a GitHub user: asks who, then asks the model.
pub struct Forecaster;

fn schema_of<T: schemars::JsonSchema>() -> JsonObject {
    match serde_json::to_value(schemars::schema_for!(T)) {
        Ok(Value::Object(mut m)) => {
            m.remove("$schema");
            m
        }
        _ => JsonObject::new(),
    }
}

impl Forecaster {
    async fn run(
        &self,
        cx: &mut ToolContext,
        args: &RawValue,
        state: Option<&RawValue>,
    ) -> Result<Step, ToolError> {
        let args: CityArgs =
            serde_json::from_str(args.get()).map_err(|e| ToolError::InvalidArguments {
                field: "city".into(),
                message: e.to_string(),
            })?;
        let phase: Option<Phase> = state.map(parse_state).transpose()?;
        match phase {
            None => {
                cx.request_builder("login", Ask::<Login>::new("Your GitHub username?"))?;
                Step::suspend(&Phase::AskedLogin)
            }
            Some(Phase::AskedLogin) => {
                let login: Login = cx.take_ask("login")?;
                let raw = fetch(&args.city);
                let prompt = format!("Rate for {}: {raw}", login.name);
                cx.request_builder("verdict", Sample::user(prompt).max_tokens(100))?;
                let next = Phase::AskedVerdict { user: login.name };
                Step::suspend(&next)
            }
            Some(Phase::AskedVerdict { user }) => {
                let verdict = cx.take_sampling("verdict")?.text()?;
                let out = Forecast {
                    user,
                    city: args.city,
                    verdict,
                };
                Ok(Step::Complete(CallToolResult::structured(
                    serde_json::to_value(out)?,
                )))
            }
        }
    }
}

impl Tool for Forecaster {
    fn info(&self) -> ToolInfo {
        ToolInfo::new("forecast")
            .description(
                "Rates the weather in a city for a GitHub user: asks who, then asks the model.",
            )
            .input_schema_of::<CityArgs>()
            .output_schema(schema_of::<Forecast>())
            .needs(Capability::Elicitation)
            .needs(Capability::Sampling)
            .max_rounds(2)
            .layout("forecast/v1")
    }

    fn validate(&self) -> Result<(), RegistrationError> {
        elicitation_schema::<Login>()
            .map(drop)
            .map_err(|error| RegistrationError::Schema {
                tool: "forecast".into(),
                key: "login".into(),
                error,
            })
    }

    fn step<'a>(
        &'a self,
        cx: &'a mut ToolContext,
        args: &'a RawValue,
        state: Option<&'a RawValue>,
    ) -> BoxFuture<'a, Result<Step, ToolError>> {
        Box::pin(self.run(cx, args, state))
    }
}
// --- author code end ---
