//! Input requests (`elicitation/create`, `sampling/createMessage`, `roots/list`), their answers
//! and `InputRequiredResult`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{JsonObject, OneOrMany, ResultType, Role, SamplingContent, SamplingMessage};

/// Method name of form/URL elicitation.
pub const METHOD_ELICIT: &str = "elicitation/create";
/// Method name of sampling.
pub const METHOD_SAMPLE: &str = "sampling/createMessage";
/// Method name of roots listing.
pub const METHOD_ROOTS: &str = "roots/list";

/// The client capability an input request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// `elicitation`.
    Elicitation,
    /// `sampling`.
    Sampling,
    /// `roots`.
    Roots,
}

impl Capability {
    /// The capability's key in `clientCapabilities`.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Elicitation => "elicitation",
            Capability::Sampling => "sampling",
            Capability::Roots => "roots",
        }
    }

    /// The kind of answer a request of this capability expects.
    pub fn answer_name(self) -> &'static str {
        match self {
            Capability::Elicitation => "ElicitResult",
            Capability::Sampling => "CreateMessageResult",
            Capability::Roots => "ListRootsResult",
        }
    }
}

/// Form-mode elicitation parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitFormParams {
    /// What is asked.
    pub message: String,
    /// A flat object schema of primitive properties (shared: a server sends the same
    /// schema of a type in every request for it, not copied per request).
    #[serde(rename = "requestedSchema")]
    pub requested_schema: SharedObject,
    /// Other members (`_meta`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A JSON object shared between messages (behind an `Arc`), whose JSON text is made the
/// first time it is serialized and copied after: a form's schema and the server's `_meta`
/// are the same in every request, so they are neither copied nor walked (nor their strings
/// escaped again) per round. The text is serde_json's, kept: without it `get_weather` costs
/// +3.9 % (round 1) and +1.3 % (round 2) instructions (`ROWS="r1 r2"
/// scripts/callgrind_weather.sh`, docs/BENCHMARKS.md, "Hand-written pieces").
///
/// It reads as the object (`Deref<Target = JsonObject>`); it is made from one with `into()`.
///
/// ```
/// use mcp_tool_runtime::protocol::{JsonObject, SharedObject};
///
/// let mut schema = JsonObject::new();
/// schema.insert("type".into(), "object".into());
/// let shared: SharedObject = schema.into();
/// assert_eq!(shared["type"], "object");
/// assert_eq!(serde_json::to_string(&shared).unwrap(), r#"{"type":"object"}"#);
/// assert_eq!(serde_json::to_value(&shared).unwrap()["type"], "object");
/// ```
///
/// Its JSON text is written through `serde_json` (a raw value); with another serializer,
/// serialize the object (`&*shared`) instead.
#[derive(Clone)]
pub struct SharedObject(std::sync::Arc<Shared>);

struct Shared {
    object: JsonObject,
    text: std::sync::OnceLock<Option<Box<serde_json::value::RawValue>>>,
}

impl From<JsonObject> for SharedObject {
    fn from(object: JsonObject) -> Self {
        SharedObject(std::sync::Arc::new(Shared {
            object,
            text: std::sync::OnceLock::new(),
        }))
    }
}

impl std::ops::Deref for SharedObject {
    type Target = JsonObject;
    fn deref(&self) -> &JsonObject {
        &self.0.object
    }
}

impl AsRef<JsonObject> for SharedObject {
    fn as_ref(&self) -> &JsonObject {
        self
    }
}

impl std::fmt::Debug for SharedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.object.fmt(f)
    }
}

impl PartialEq for SharedObject {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0.object == other.0.object
    }
}

impl Serialize for SharedObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self
            .0
            .text
            .get_or_init(|| serde_json::value::to_raw_value(&self.0.object).ok());
        match text {
            Some(raw) => raw.serialize(s),
            None => self.0.object.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SharedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        JsonObject::deserialize(d).map(SharedObject::from)
    }
}

/// URL-mode elicitation parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitUrlParams {
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Other members (`_meta`, ...). Note: `elicitationId` was removed in 2026-07-28.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitParams {
    /// `mode: "form"` (or no mode).
    Form(ElicitFormParams),
    /// `mode: "url"`.
    Url(ElicitUrlParams),
}

impl Serialize for ElicitParams {
    /// Written straight from the fields (no intermediate tree): `mode` first, then the
    /// variant's members, then `extra` without the members the variant already wrote.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitParams::Form(p) => write_elicit(
                s,
                "form",
                &p.message,
                ("requestedSchema", &p.requested_schema),
                &p.extra,
            ),
            ElicitParams::Url(p) => write_elicit(s, "url", &p.message, ("url", &p.url), &p.extra),
        }
    }
}

/// One `elicitation/create` params object: `mode`, `message`, the mode's own member, and the
/// other members (a duplicate of those three in `extra` is left out).
fn write_elicit<S: Serializer, V: Serialize + ?Sized>(
    s: S,
    mode: &str,
    message: &str,
    (key, value): (&str, &V),
    extra: &JsonObject,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("mode", mode)?;
    m.serialize_entry("message", message)?;
    m.serialize_entry(key, value)?;
    for (k, v) in extra {
        if !matches!(k.as_str(), "mode" | "message") && k != key {
            m.serialize_entry(k, v)?;
        }
    }
    m.end()
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut m = JsonObject::deserialize(d)?;
        let mode = m.remove("mode");
        match mode.as_ref().map(|v| v.as_str()) {
            None | Some(Some("form")) => serde_json::from_value(Value::Object(m))
                .map(ElicitParams::Form)
                .map_err(serde::de::Error::custom),
            Some(Some("url")) => serde_json::from_value(Value::Object(m))
                .map(ElicitParams::Url)
                .map_err(serde::de::Error::custom),
            _ => Err(serde::de::Error::custom("unknown elicitation mode")),
        }
    }
}

/// A hint for model selection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (sub)string of a model name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Advisory model preferences.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelPreferences {
    /// Ordered model hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// 0..=1.
    #[serde(
        default,
        rename = "costPriority",
        skip_serializing_if = "Option::is_none"
    )]
    pub cost_priority: Option<f64>,
    /// 0..=1.
    #[serde(
        default,
        rename = "speedPriority",
        skip_serializing_if = "Option::is_none"
    )]
    pub speed_priority: Option<f64>,
    /// 0..=1.
    #[serde(
        default,
        rename = "intelligencePriority",
        skip_serializing_if = "Option::is_none"
    )]
    pub intelligence_priority: Option<f64>,
}

/// `includeContext` of a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IncludeContext {
    /// No context (the default).
    #[serde(rename = "none")]
    None,
    /// Deprecated: this server's context.
    #[serde(rename = "thisServer")]
    ThisServer,
    /// Deprecated: every server's context.
    #[serde(rename = "allServers")]
    AllServers,
}

/// Parameters of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(rename = "modelPreferences", skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt.
    #[serde(rename = "systemPrompt", skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context inclusion.
    #[serde(rename = "includeContext", skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum tokens to sample.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u32,
    /// Stop sequences.
    #[serde(rename = "stopSequences", skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Other members (`tools`, `toolChoice`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsParams {
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One request in `inputRequests`: `{"method": ..., "params": {...}}`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitParams),
    /// `sampling/createMessage`.
    Sample(CreateMessageParams),
    /// `roots/list`.
    Roots(ListRootsParams),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => METHOD_ELICIT,
            InputRequest::Sample(_) => METHOD_SAMPLE,
            InputRequest::Roots(_) => METHOD_ROOTS,
        }
    }

    /// The client capability this request needs.
    pub fn capability(&self) -> Capability {
        match self {
            InputRequest::Elicit(_) => Capability::Elicitation,
            InputRequest::Sample(_) => Capability::Sampling,
            InputRequest::Roots(_) => Capability::Roots,
        }
    }

    /// Whether the declared client capabilities allow this request (including the elicitation mode).
    pub fn allowed_by(&self, caps: &super::ClientCapabilities) -> bool {
        match self {
            InputRequest::Elicit(ElicitParams::Form(_)) => {
                caps.elicitation.as_ref().is_some_and(|e| e.supports_form())
            }
            InputRequest::Elicit(ElicitParams::Url(_)) => {
                caps.elicitation.as_ref().is_some_and(|e| e.supports_url())
            }
            InputRequest::Sample(_) => caps.sampling.is_some(),
            InputRequest::Roots(_) => caps.roots.is_some(),
        }
    }

    /// Parses an answer of the kind this request expects.
    pub fn parse_response(&self, v: Value) -> Result<InputResponse, serde_json::Error> {
        InputResponse::parse_for(self.capability(), v)
    }
}

/// The wire shape of an [`InputRequest`] as read (its params parsed once the method is known).
#[derive(Deserialize)]
struct RawInputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // `{"method": …, "params": …}`, the params written in place (no `Value` detour)
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("InputRequest", 2)?;
        st.serialize_field("method", self.method())?;
        match self {
            InputRequest::Elicit(p) => st.serialize_field("params", p)?,
            InputRequest::Sample(p) => st.serialize_field("params", p)?,
            InputRequest::Roots(p) => st.serialize_field("params", p)?,
        }
        st.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let raw = RawInputRequest::deserialize(d)?;
        let params = raw
            .params
            .unwrap_or_else(|| Value::Object(JsonObject::new()));
        match raw.method.as_str() {
            METHOD_ELICIT => serde_json::from_value(params)
                .map(InputRequest::Elicit)
                .map_err(D::Error::custom),
            METHOD_SAMPLE => serde_json::from_value(params)
                .map(InputRequest::Sample)
                .map_err(D::Error::custom),
            METHOD_ROOTS => serde_json::from_value(params)
                .map(InputRequest::Roots)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "unknown input request method {other:?}"
            ))),
        }
    }
}

variant_from!(
    InputRequest: Elicit(ElicitParams), Sample(CreateMessageParams), Roots(ListRootsParams)
);

/// The user's action on an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted / confirmed.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// The action.
    pub action: ElicitAction,
    /// Form data (accept in form mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Other members (`_meta`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitResult {
    /// `accept` with form content.
    pub fn accept(content: JsonObject) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
            extra: JsonObject::new(),
        }
    }

    /// `accept` without content (URL mode).
    pub fn accept_url() -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: None,
            extra: JsonObject::new(),
        }
    }

    /// `decline`.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            extra: JsonObject::new(),
        }
    }

    /// `cancel`.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            extra: JsonObject::new(),
        }
    }
}

/// Answer to `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageResult {
    /// Role of the message (normally `assistant`).
    pub role: Role,
    /// The content.
    pub content: OneOrMany<SamplingContent>,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, ...).
    #[serde(rename = "stopReason", skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Other members (`_meta`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateMessageResult {
    /// An assistant text answer.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: OneOrMany::One(SamplingContent::text(text)),
            model: model.into(),
            stop_reason: Some("endTurn".to_owned()),
            extra: JsonObject::new(),
        }
    }
}

/// A root the server can operate on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta`.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl Root {
    /// A root with a URI and a name.
    pub fn new(uri: impl Into<String>, name: Option<&str>) -> Self {
        Root {
            uri: uri.into(),
            name: name.map(str::to_owned),
            meta: None,
        }
    }
}

/// Answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Other members (`_meta`, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// One answer in `inputResponses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// An `ElicitResult`.
    Elicit(ElicitResult),
    /// A `CreateMessageResult`.
    Sample(CreateMessageResult),
    /// A `ListRootsResult`.
    Roots(ListRootsResult),
}

impl InputResponse {
    /// Parses `v` as the answer to a request needing `kind`.
    pub fn parse_for(kind: Capability, v: Value) -> Result<InputResponse, serde_json::Error> {
        match kind {
            Capability::Elicitation => serde_json::from_value(v).map(InputResponse::Elicit),
            Capability::Sampling => serde_json::from_value(v).map(InputResponse::Sample),
            Capability::Roots => serde_json::from_value(v).map(InputResponse::Roots),
        }
    }

    /// Like [`parse_for`](Self::parse_for), reading `v` in place (no copy of the answer).
    pub fn parse_for_ref(kind: Capability, v: &Value) -> Result<InputResponse, serde_json::Error> {
        use serde::Deserialize as _;
        match kind {
            Capability::Elicitation => ElicitResult::deserialize(v).map(InputResponse::Elicit),
            Capability::Sampling => CreateMessageResult::deserialize(v).map(InputResponse::Sample),
            Capability::Roots => ListRootsResult::deserialize(v).map(InputResponse::Roots),
        }
    }

    /// Like [`parse_for`](Self::parse_for), from the JSON text it was sent as (the error
    /// is what [`parse_for_ref`](Self::parse_for_ref) of its tree says).
    pub(crate) fn parse_for_text(
        kind: Capability,
        raw: &serde_json::value::RawValue,
    ) -> Result<InputResponse, serde_json::Error> {
        let text = raw.get();
        let parsed = match kind {
            Capability::Elicitation => serde_json::from_str(text).map(InputResponse::Elicit),
            Capability::Sampling => serde_json::from_str(text).map(InputResponse::Sample),
            Capability::Roots => serde_json::from_str(text).map(InputResponse::Roots),
        };
        // A refusal says what a tree's would (no position in the text).
        parsed.or_else(|_| Self::parse_for_ref(kind, &serde_json::from_str(text)?))
    }

    /// The capability whose request this answers.
    pub fn capability(&self) -> Capability {
        match self {
            InputResponse::Elicit(_) => Capability::Elicitation,
            InputResponse::Sample(_) => Capability::Sampling,
            InputResponse::Roots(_) => Capability::Roots,
        }
    }
}

variant_from!(
    InputResponse: Elicit(ElicitResult), Sample(CreateMessageResult), Roots(ListRootsResult)
);

/// `inputRequests`: key -> request.
pub type InputRequests = BTreeMap<String, InputRequest>;
/// `inputResponses`: key -> answer.
pub type InputResponses = BTreeMap<String, InputResponse>;

/// `resultType: "input_required"`: the client must answer `inputRequests` and retry with
/// `inputResponses` and the echoed `requestState`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequiredResult {
    /// Always [`ResultType::InputRequired`].
    #[serde(rename = "resultType")]
    pub result_type: ResultType,
    /// Requests the client must answer.
    #[serde(
        default,
        rename = "inputRequests",
        skip_serializing_if = "Option::is_none"
    )]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo byte for byte.
    #[serde(
        default,
        rename = "requestState",
        skip_serializing_if = "Option::is_none"
    )]
    pub request_state: Option<String>,
    /// `_meta` (server info).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer to a form with a member sent twice reads as its tree does: the last one
    /// counts (the derive refuses the text; the answer is then read from its tree).
    #[test]
    fn an_answer_with_a_member_twice_reads_as_its_tree() {
        let twice = r#"{"action":"decline","content":{"a":1},"action":"accept","x":1,"x":2}"#;
        let raw = serde_json::value::RawValue::from_string(twice.to_owned()).unwrap();
        let tree: Value = serde_json::from_str(twice).unwrap();
        let by_tree = ElicitResult::deserialize(&tree).unwrap();
        assert_eq!(by_tree.action, ElicitAction::Accept);
        assert_eq!(by_tree.extra["x"], 2);
        match InputResponse::parse_for_text(Capability::Elicitation, &raw).unwrap() {
            InputResponse::Elicit(by_text) => assert_eq!(by_text, by_tree),
            other => panic!("{other:?}"),
        }
    }
}
