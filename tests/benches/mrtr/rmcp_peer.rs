//! (c) The peer: the same tool on rmcp 3.11's server side. rmcp supports server-side MRTR
//! (a tool returns `CallToolResponse::InputRequired`, reads `RequestState` and
//! `InputResponses` extractors) and offers `RequestStateCodec` (HMAC-SHA256, feature
//! `request-state`) to seal the state; the phase enum, the binding, the request keys and
//! the parsing of answers are the author's.
#![allow(deprecated)] // rmcp 3.11 marks sampling deprecated (SEP-2577); it is in 2026-07-28

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateMessageRequest, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
    RequestStateCodec, SamplingMessage, SealOptions, ServerCapabilities, ServerConfig,
};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

use super::domain::{CityArgs, Forecast, Login, fetch};

/// The server holding the tool (constructed by the bench with a fixed key).
#[derive(Clone)]
pub struct ForecastServer {
    codec: Arc<RequestStateCodec>,
    tool_router: ToolRouter<Self>,
}

impl ForecastServer {
    pub fn new(key: &[u8]) -> Self {
        let codec = RequestStateCodec::try_new(key.to_vec()).expect("key of 32 bytes or more");
        Self {
            codec: Arc::new(codec),
            tool_router: Self::tool_router(),
        }
    }
}

// --- author code begin ---
/// Where the conversation is, plus what earlier rounds learned.
#[derive(Serialize, Deserialize)]
#[serde(tag = "phase")]
enum Phase {
    AskedLogin,
    AskedVerdict { user: String },
}

fn invalid(message: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(message.to_string(), None)
}

fn answer<T: serde::de::DeserializeOwned>(
    answers: &Option<rmcp::model::InputResponses>,
    key: &str,
) -> Result<T, ErrorData> {
    let value = answers
        .as_ref()
        .and_then(|a| a.get(key))
        .ok_or_else(|| invalid(key))?;
    serde_json::from_value(value.clone()).map_err(invalid)
}

#[tool_router]
impl ForecastServer {
    /// Rates the weather in a city for a GitHub user: asks who, then asks the model.
    #[tool(
        description = "Rates the weather in a city for a GitHub user: asks who, then asks the model."
    )]
    async fn forecast(
        &self,
        Parameters(args): Parameters<CityArgs>,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        // bind the state to the tool and its arguments, with an expiry
        let bound = format!("tools/call\0forecast\0{}", args.city);
        let seal = SealOptions::new()
            .associated_data(bound.as_bytes())
            .ttl(Duration::from_secs(600));
        let phase: Option<Phase> = match state {
            None => None,
            Some(s) => Some(
                self.codec
                    .open_json_with(&s, bound.as_bytes())
                    .map_err(|_| invalid("invalid requestState"))?,
            ),
        };
        let (key, request, next) = match phase {
            None => {
                let schema = ElicitationSchema::from_type::<Login>().map_err(invalid)?;
                let form = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "Your GitHub username?".into(),
                    requested_schema: schema,
                };
                (
                    "login",
                    InputRequest::Elicitation(ElicitRequest::new(form)),
                    Phase::AskedLogin,
                )
            }
            Some(Phase::AskedLogin) => {
                let reply: ElicitResult = answer(&answers, "login")?;
                let login: Login = match (reply.action, reply.content) {
                    (ElicitationAction::Accept, Some(content)) => {
                        serde_json::from_value(content).map_err(invalid)?
                    }
                    _ => {
                        let declined = CallToolResult::structured_error(
                            serde_json::json!({"error": "the user declined `login`"}),
                        );
                        return Ok(declined.into());
                    }
                };
                let raw = fetch(&args.city);
                let prompt = SamplingMessage::user_text(format!("Rate for {}: {raw}", login.name));
                let params = CreateMessageRequestParams::new(vec![prompt], 100);
                let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                ("verdict", request, Phase::AskedVerdict { user: login.name })
            }
            Some(Phase::AskedVerdict { user }) => {
                let reply: CreateMessageResult = answer(&answers, "verdict")?;
                let verdict = reply
                    .message
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map(|t| t.text.clone())
                    .ok_or_else(|| invalid("verdict: expected text"))?;
                let out = Forecast {
                    user,
                    city: args.city,
                    verdict,
                };
                let out = serde_json::to_value(out).map_err(invalid)?;
                return Ok(CallToolResult::structured(out).into());
            }
        };
        let sealed = self.codec.seal_json_with(&next, &seal).map_err(invalid)?;
        let requests = InputRequests::from([(key.to_owned(), request)]);
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
    }
}

// --- author code end ---

// Server plumbing (once per server, like our `Server::builder`; not counted).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for ForecastServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info
    }
}
