//! Request builders (`Ask<T>`, `Elicit<T>`, `UrlElicit`, `Sample`, `Roots`), answer types
//! (`Elicitation<T>`, `UrlOutcome`, `SampleAnswer`) and the decoding of each answer kind.
//! Also here: the futures `cx.ask(..)` and its kin return ([`Pending`], [`RoundPending`],
//! [`Checkpoint`]) and the elicitation schema helpers.
//!
//! A builder is a standalone value: `Ask::<Contact>::new("Who?").into_request()` gives the
//! wire request, `Ask::<Contact>::decode(key, answer)` its answer.
//! [`ToolContext`](crate::ToolContext) wraps builders in
//! [`Pending`] values that can be `.await`ed in direct mode.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::context::{Checkpoint, Pending, RoundPending, RoundSet};
use crate::error::{RegistrationError, ToolError};
use crate::protocol::{
    Capability, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitFormParams,
    ElicitParams, ElicitUrlParams, IncludeContext, InputRequest, InputResponse, JsonObject,
    ListRootsParams, ModelHint, ModelPreferences, Root, SamplingMessage,
};
pub use crate::schema::{SchemaError, check_elicitation_schema, elicitation_schema};

/// A request builder: one kind of input request, its answer type and its optional key.
pub trait InputBuilder: Send {
    /// What the answer becomes for the tool.
    type Output: Send;
    /// The client capability needed.
    fn kind() -> Capability;
    /// Prefix of keys generated in direct mode (`ask`, `elicit`, `url`, `sample`, `roots`).
    fn key_prefix() -> &'static str;
    /// The explicit key set with `.key(..)`.
    fn explicit_key(&self) -> Option<&str>;
    /// Sets the explicit key.
    fn set_key(&mut self, key: String);
    /// The wire request.
    fn into_request(self) -> Result<InputRequest, ToolError>;
    /// Decodes the client's answer to the request made under `key` (an answer of another
    /// kind, or content that does not fit, is [`ToolError::InvalidInput`]).
    fn decode(key: &str, response: InputResponse) -> Result<Self::Output, ToolError>;
}

/// The answer to a form elicitation: accepted data, or the user said no.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Elicitation<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl<T> Elicitation<T> {
    /// `Accept(t)` -> `Ok(t)`; decline/cancel -> [`ToolError::Declined`]/[`ToolError::Cancelled`].
    pub fn into_result(self, key: &str) -> Result<T, ToolError> {
        match self {
            Elicitation::Accept(t) => Ok(t),
            Elicitation::Decline => Err(ToolError::Declined {
                key: key.to_owned(),
            }),
            Elicitation::Cancel => Err(ToolError::Cancelled {
                key: key.to_owned(),
            }),
        }
    }

    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(t) => Some(t),
            _ => None,
        }
    }
}

/// The outcome of a URL-mode elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UrlOutcome {
    /// The user consented and (presumably) completed the interaction.
    Accept,
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

/// Longest sampled text accepted by [`SampleAnswer::text`] / [`SampleAnswer::json`] (1 MiB).
pub const MAX_SAMPLE_TEXT: usize = 1 << 20;

/// The answer to a sampling request. Model output is untrusted: validate it.
/// Serializable, so it can be kept across a suspension point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleAnswer {
    key: String,
    result: CreateMessageResult,
}

impl SampleAnswer {
    /// Wraps an answer received for `key`.
    pub fn new(key: impl Into<String>, result: CreateMessageResult) -> Self {
        SampleAnswer {
            key: key.into(),
            result,
        }
    }

    /// The key of the request answered.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The raw result.
    pub fn result(&self) -> &CreateMessageResult {
        &self.result
    }

    /// The raw result, by value.
    pub fn into_result(self) -> CreateMessageResult {
        self.result
    }

    /// The model that answered.
    pub fn model(&self) -> &str {
        &self.result.model
    }

    /// The text of the answer (text blocks joined). No text, or more than
    /// [`MAX_SAMPLE_TEXT`] bytes -> [`ToolError::InvalidInput`].
    pub fn text(&self) -> Result<String, ToolError> {
        let parts: Vec<&str> = self
            .result
            .content
            .as_slice()
            .iter()
            .filter_map(|c| c.as_text())
            .collect();
        if parts.is_empty() {
            return Err(ToolError::invalid_input(
                &self.key,
                "the model's answer contains no text",
            ));
        }
        let text = parts.join("\n");
        if text.len() > MAX_SAMPLE_TEXT {
            return Err(ToolError::invalid_input(
                &self.key,
                format!("the model's answer is longer than {MAX_SAMPLE_TEXT} bytes"),
            ));
        }
        Ok(text)
    }

    /// Parses the text of the answer as JSON into `T` (a ```` ```json ```` fence is tolerated).
    /// Invalid output -> [`ToolError::InvalidInput`] (JSON-RPC -32602 unless handled).
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        let text = self.text()?;
        let body = strip_fence(&text);
        serde_json::from_str(body).map_err(|e| {
            ToolError::invalid_input(
                &self.key,
                format!("the model's answer is not valid JSON for the expected type: {e}"),
            )
        })
    }
}

/// Removes one surrounding Markdown code fence (```` ``` ```` or ```` ```json ````).
fn strip_fence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let Some(rest) = rest.strip_suffix("```") else {
        return t;
    };
    // Drop the info string (e.g. `json`) up to the first newline.
    match rest.find('\n') {
        Some(i) => {
            let info = rest.get(..i).unwrap_or("");
            if info.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
                rest.get(i + 1..).unwrap_or("").trim()
            } else {
                rest.trim()
            }
        }
        None => rest.trim(),
    }
}

/// The inherent `key(..)` setter and `kind()` of a builder with a `key: Option<String>`
/// field: `[generics] Type, Capability`.
macro_rules! key_and_kind {
    ([$($g:tt)*] $ty:ty, $kind:ident) => {
        impl<$($g)*> $ty {
            /// Sets the `inputRequests` key.
            pub fn key(mut self, key: impl Into<String>) -> Self {
                self.key = Some(key.into());
                self
            }

            /// The client capability needed.
            pub fn kind() -> Capability {
                Capability::$kind
            }
        }
    };
}

/// Implements [`InputBuilder`] for a builder with a `key: Option<String>` field and inherent
/// `kind()` and `into_request`: `[generics] Type => Output, "key prefix", |cx, key| take`.
macro_rules! impl_input_builder {
    ([$($g:tt)*] $ty:ty => $out:ty, $prefix:literal,
     |$cx:ident, $key:ident| $take:expr) => {
        impl<$($g)*> InputBuilder for $ty {
            type Output = $out;
            fn kind() -> Capability {
                <$ty>::kind()
            }
            fn key_prefix() -> &'static str {
                $prefix
            }
            fn explicit_key(&self) -> Option<&str> {
                self.key.as_deref()
            }
            fn set_key(&mut self, key: String) {
                self.key = Some(key);
            }
            fn into_request(self) -> Result<InputRequest, ToolError> {
                <$ty>::into_request(self)
            }
            fn decode($key: &str, $cx: InputResponse) -> Result<$out, ToolError> {
                $take
            }
        }
    };
}

/// A form elicitation builder for a `T` (`Ask` and `Elicit` differ only in their answer).
macro_rules! form_builder {
    ($(#[$doc:meta])* $name:ident => $out:ty, $prefix:literal,
     |$cx:ident, $key:ident| $take:expr) => {
        $(#[$doc])*
        pub struct $name<T> {
            message: String,
            key: Option<String>,
            _t: PhantomData<fn() -> T>,
        }

        impl<T> std::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("message", &self.message)
                    .field("key", &self.key)
                    .finish()
            }
        }

        impl<T: JsonSchema + DeserializeOwned> $name<T> {
            /// Asks the user for a `T` with `message`.
            pub fn new(message: impl Into<String>) -> Self {
                $name {
                    message: message.into(),
                    key: None,
                    _t: PhantomData,
                }
            }

            /// The wire request (the schema of `T` must be in the elicitation subset).
            pub fn into_request(self) -> Result<InputRequest, ToolError> {
                form_request::<T>(self.message)
            }
        }

        key_and_kind!([T: JsonSchema + DeserializeOwned] $name<T>, Elicitation);
        impl_input_builder!(
            [T: JsonSchema + DeserializeOwned + Send] $name<T> => $out, $prefix,
            |$cx, $key| $take
        );
    };
}

form_builder!(
    /// Form elicitation whose answer becomes a `T` (decline/cancel are errors).
    Ask => T, "ask", |r, key| decode_elicitation::<T>(key, r)?.into_result(key)
);

form_builder!(
    /// Form elicitation whose answer is an [`Elicitation<T>`] (decline/cancel can be matched).
    Elicit => Elicitation<T>, "elicit", |r, key| decode_elicitation::<T>(key, r)
);

fn form_request<T: JsonSchema>(message: String) -> Result<InputRequest, ToolError> {
    let schema = crate::schema::shared_elicitation_schema::<T>().map_err(|e| {
        ToolError::internal(format!(
            "elicitation schema of `{}`: {e}",
            std::any::type_name::<T>()
        ))
    })?;
    Ok(InputRequest::Elicit(ElicitParams::Form(ElicitFormParams {
        message,
        requested_schema: schema,
        extra: JsonObject::new(),
    })))
}

/// URL-mode elicitation: the user is sent to `url` out of band.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlElicit {
    message: String,
    url: String,
    key: Option<String>,
}

impl UrlElicit {
    /// Directs the user to `url`, explaining why with `message`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        UrlElicit {
            message: message.into(),
            url: url.into(),
            key: None,
        }
    }

    /// The wire request.
    pub fn into_request(self) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::Elicit(ElicitParams::Url(ElicitUrlParams {
            message: self.message,
            url: self.url,
            extra: JsonObject::new(),
        })))
    }
}

key_and_kind!([] UrlElicit, Elicitation);

impl_input_builder!(
    [] UrlElicit => UrlOutcome, "url",
    |r, key| decode_url_elicitation(key, r)
);

/// A sampling request (`sampling/createMessage`).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    params: CreateMessageParams,
    key: Option<String>,
}

impl Sample {
    /// Default `maxTokens`.
    pub const DEFAULT_MAX_TOKENS: u32 = 1024;

    /// A conversation starting with one user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::from_messages(vec![SamplingMessage::user(text)])
    }

    /// A request with the given messages.
    pub fn from_messages(messages: Vec<SamplingMessage>) -> Self {
        Sample {
            params: CreateMessageParams {
                messages,
                model_preferences: None,
                system_prompt: None,
                include_context: None,
                temperature: None,
                max_tokens: Self::DEFAULT_MAX_TOKENS,
                stop_sequences: None,
                metadata: None,
                extra: JsonObject::new(),
            },
            key: None,
        }
    }

    /// Appends a user message.
    pub fn then_user(mut self, text: impl Into<String>) -> Self {
        self.params.messages.push(SamplingMessage::user(text));
        self
    }

    /// Appends an assistant message.
    pub fn then_assistant(mut self, text: impl Into<String>) -> Self {
        self.params.messages.push(SamplingMessage::assistant(text));
        self
    }

    /// Appends a message.
    pub fn message(mut self, m: SamplingMessage) -> Self {
        self.params.messages.push(m);
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, s: impl Into<String>) -> Self {
        self.params.system_prompt = Some(s.into());
        self
    }

    /// Sets `maxTokens`.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.params.max_tokens = n;
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, t: f64) -> Self {
        self.params.temperature = Some(t);
        self
    }

    /// Adds a stop sequence.
    pub fn stop_sequence(mut self, s: impl Into<String>) -> Self {
        self.params
            .stop_sequences
            .get_or_insert_with(Vec::new)
            .push(s.into());
        self
    }

    /// Sets `includeContext`.
    pub fn include_context(mut self, c: IncludeContext) -> Self {
        self.params.include_context = Some(c);
        self
    }

    /// Sets provider metadata.
    pub fn metadata(mut self, m: JsonObject) -> Self {
        self.params.metadata = Some(m);
        self
    }

    fn prefs(&mut self) -> &mut ModelPreferences {
        self.params
            .model_preferences
            .get_or_insert_with(ModelPreferences::default)
    }

    /// Adds a model hint.
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        self.prefs()
            .hints
            .get_or_insert_with(Vec::new)
            .push(ModelHint {
                name: Some(name.into()),
                extra: JsonObject::new(),
            });
        self
    }

    /// Sets the cost priority (0..=1).
    pub fn cost_priority(mut self, p: f64) -> Self {
        self.prefs().cost_priority = Some(p);
        self
    }

    /// Sets the speed priority (0..=1).
    pub fn speed_priority(mut self, p: f64) -> Self {
        self.prefs().speed_priority = Some(p);
        self
    }

    /// Sets the intelligence priority (0..=1).
    pub fn intelligence_priority(mut self, p: f64) -> Self {
        self.prefs().intelligence_priority = Some(p);
        self
    }

    /// The parameters built so far.
    pub fn params(&self) -> &CreateMessageParams {
        &self.params
    }

    /// The wire request.
    pub fn into_request(self) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::Sample(self.params))
    }
}

impl Default for Sample {
    /// An empty conversation with the default `maxTokens`.
    fn default() -> Self {
        Self::from_messages(Vec::new())
    }
}

key_and_kind!([] Sample, Sampling);

impl_input_builder!(
    [] Sample => SampleAnswer, "sample",
    |r, key| decode_sampling(key, r)
);

/// A `roots/list` request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Roots {
    key: Option<String>,
}

impl Roots {
    /// A roots request.
    pub fn new() -> Self {
        Roots { key: None }
    }

    /// The wire request.
    pub fn into_request(self) -> Result<InputRequest, ToolError> {
        Ok(InputRequest::Roots(ListRootsParams::default()))
    }
}

key_and_kind!([] Roots, Roots);

impl_input_builder!(
    [] Roots => Vec<Root>, "roots",
    |r, key| decode_roots(key, r)
);

// ---------------------------------------------------------------------------------------
// Decoding answers
// ---------------------------------------------------------------------------------------

/// Decodes the answer to a form elicitation: accepted content deserialized into `T`.
pub fn decode_elicitation<T: DeserializeOwned>(
    key: &str,
    response: InputResponse,
) -> Result<Elicitation<T>, ToolError> {
    match response {
        InputResponse::Elicit(r) => match r.action {
            ElicitAction::Accept => {
                let content = Value::Object(r.content.unwrap_or_default());
                // Content that fits is read directly; only refused content is read again,
                // tracking the path, for the message naming the field.
                if let Ok(accepted) = T::deserialize(&content) {
                    return Ok(Elicitation::Accept(accepted));
                }
                serde_path_to_error::deserialize(&content)
                    .map(Elicitation::Accept)
                    .map_err(|e| {
                        ToolError::invalid_input(
                            key,
                            format!("elicitation content does not match the requested schema at `{}`: {}", e.path(), e.inner()),
                        )
                    })
            }
            ElicitAction::Decline => Ok(Elicitation::Decline),
            ElicitAction::Cancel => Ok(Elicitation::Cancel),
        },
        other => Err(wrong_kind(key, "ElicitResult", &other)),
    }
}

/// Decodes the answer to a URL-mode elicitation.
pub fn decode_url_elicitation(key: &str, response: InputResponse) -> Result<UrlOutcome, ToolError> {
    match response {
        InputResponse::Elicit(r) => Ok(match r.action {
            ElicitAction::Accept => UrlOutcome::Accept,
            ElicitAction::Decline => UrlOutcome::Decline,
            ElicitAction::Cancel => UrlOutcome::Cancel,
        }),
        other => Err(wrong_kind(key, "ElicitResult", &other)),
    }
}

/// Decodes the answer to a sampling request.
pub fn decode_sampling(key: &str, response: InputResponse) -> Result<SampleAnswer, ToolError> {
    match response {
        InputResponse::Sample(r) => Ok(SampleAnswer::new(key, r)),
        other => Err(wrong_kind(key, "CreateMessageResult", &other)),
    }
}

/// Decodes the answer to a roots request.
pub fn decode_roots(key: &str, response: InputResponse) -> Result<Vec<Root>, ToolError> {
    match response {
        InputResponse::Roots(r) => Ok(r.roots),
        other => Err(wrong_kind(key, "ListRootsResult", &other)),
    }
}

fn wrong_kind(key: &str, expected: &str, got: &InputResponse) -> ToolError {
    let got = match got {
        InputResponse::Elicit(_) => "ElicitResult",
        InputResponse::Sample(_) => "CreateMessageResult",
        InputResponse::Roots(_) => "ListRootsResult",
    };
    ToolError::invalid_input(key, format!("expected {expected}, got {got}"))
}

/// Registration-time checks of elicitation types.
/// Registration-time check of a form elicitation type asked under `key` (for
/// [`Tool::validate`](crate::Tool::validate)). The tool name is filled in by the server builder.
pub fn check_elicitation<T: JsonSchema>(key: &str) -> Result<(), RegistrationError> {
    elicitation_schema::<T>()
        .map(|_| ())
        .map_err(|error| RegistrationError::Schema {
            tool: String::new(),
            key: key.to_owned(),
            error,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fence("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(strip_fence("```\n[1]\n```"), "[1]");
        assert_eq!(strip_fence("  {\"a\":1} "), "{\"a\":1}");
        assert_eq!(strip_fence("```"), "```");
    }

    /// Accepted content that fits the type is decoded; content that does not is refused
    /// with a message naming the field; declining and cancelling carry no content.
    #[test]
    fn elicitation_content_is_decoded_or_refused_by_field() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Login {
            name: String,
            age: Option<u32>,
        }
        let answer = |action: &str, content: Value| {
            serde_json::from_value::<InputResponse>(
                serde_json::json!({"action": action, "content": content}),
            )
            .expect("an elicitation answer")
        };
        let ok = decode_elicitation::<Login>(
            "k",
            answer("accept", serde_json::json!({"name": "octocat"})),
        );
        assert!(
            matches!(ok, Ok(Elicitation::Accept(Login { ref name, age: None })) if name == "octocat")
        );
        let bad = answer(
            "accept",
            serde_json::json!({"name": "octocat", "age": "old"}),
        );
        match decode_elicitation::<Login>("k", bad) {
            Err(ToolError::InvalidInput { key, reason }) => {
                assert_eq!(key, "k");
                assert!(reason.contains("at `age`"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let missing = answer("accept", serde_json::json!({}));
        assert!(matches!(
            decode_elicitation::<Login>("k", missing),
            Err(ToolError::InvalidInput { reason, .. }) if reason.contains("name")
        ));
        for (action, want) in [("decline", "Decline"), ("cancel", "Cancel")] {
            let r = decode_elicitation::<Login>("k", answer(action, serde_json::json!(null)));
            assert_eq!(format!("{:?}", r.expect("no content to check")), want);
        }
    }
}
