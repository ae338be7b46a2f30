//! Request builders (`Ask<T>`, `Elicit<T>`, `UrlElicit`, `Sample`, `Roots`), answer types
//! (`Elicitation<T>`, `UrlOutcome`, `SampleAnswer`) and the schema helpers: input/output
//! schemas from schemars and the elicitation-subset check.
//!
//! A builder is a standalone value: `Ask::<Contact>::new("Who?").into_request()` gives the
//! wire request. [`ToolContext`] wraps builders in
//! [`Pending`](crate::context::Pending) values that can be `.await`ed in direct mode.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ToolContext;
use crate::protocol::{
    Capability, CreateMessageParams, CreateMessageResult, ElicitFormParams, ElicitParams,
    ElicitUrlParams, IncludeContext, InputRequest, JsonObject, ListRootsParams, ModelHint,
    ModelPreferences, Root, SamplingMessage,
};
use crate::tool::ToolError;

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
    /// Takes this builder's answer for `key` out of `cx`.
    fn take(cx: &mut ToolContext, key: &str) -> Result<Self::Output, ToolError>;
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
            fn take($cx: &mut ToolContext, $key: &str) -> Result<$out, ToolError> {
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
    Ask => T, "ask", |cx, key| cx.take_elicitation::<T>(key)?.into_result(key)
);

form_builder!(
    /// Form elicitation whose answer is an [`Elicitation<T>`] (decline/cancel can be matched).
    Elicit => Elicitation<T>, "elicit", |cx, key| cx.take_elicitation::<T>(key)
);

fn form_request<T: JsonSchema>(message: String) -> Result<InputRequest, ToolError> {
    let schema = elicitation_schema::<T>().map_err(|e| {
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
    |cx, key| cx.take_url_elicitation(key)
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
    |cx, key| cx.take_sampling(key)
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
    |cx, key| cx.take_roots(key)
);

// ---------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------

/// Why a type's schema is not in the elicitation subset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if path.is_empty() { String::new() } else { format!("property `{path}`: ") })]
pub struct SchemaError {
    /// The property at fault (empty for the root).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl SchemaError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        SchemaError {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

/// The JSON Schema (2020-12, subschemas inlined where possible) of `T` as an object.
pub fn schema_for<T: JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(m) => m,
        // `true` (anything) or `false`: express as an empty object schema.
        _ => JsonObject::new(),
    }
}

/// The `inputSchema` of an argument type: root `"type": "object"` guaranteed.
pub fn input_schema<T: JsonSchema>() -> JsonObject {
    let mut s = schema_for::<T>();
    s.remove("$schema");
    if s.get("type").and_then(Value::as_str) != Some("object") {
        // Unit types, `()` and odd roots: an object without properties.
        let mut o = JsonObject::new();
        o.insert("type".into(), Value::String("object".into()));
        if let Some(t) = s.remove("title") {
            o.insert("title".into(), t);
        }
        return o;
    }
    s
}

/// The `outputSchema` of an output type: only when its root is an object.
pub fn output_schema<T: JsonSchema>() -> Option<JsonObject> {
    let mut s = schema_for::<T>();
    s.remove("$schema");
    (s.get("type").and_then(Value::as_str) == Some("object")).then_some(s)
}

/// The `requestedSchema` of a form elicitation for `T`, normalised into the elicitation
/// subset (flat object of primitive properties), or why `T` does not fit.
///
/// Made once per type and process (a type's schema does not change while it runs), then
/// copied: generating and normalising it was several percent of a round's instructions.
pub fn elicitation_schema<T: JsonSchema>() -> Result<JsonObject, SchemaError> {
    use std::collections::HashMap;
    use std::sync::{OnceLock, RwLock};
    type Cache = RwLock<HashMap<std::any::TypeId, Result<JsonObject, SchemaError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    // the type's id with its lifetimes erased (a schema does not depend on them), so `T`
    // need not be `'static`
    let key = typeid::of::<T>();
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(hit) = cache.read().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let made = check_elicitation_schema(&schema_for::<T>());
    if let Ok(mut c) = cache.write() {
        c.insert(key, made.clone());
    }
    made
}

/// Registration-time check of a form elicitation type asked under `key` (for
/// [`Tool::validate`](crate::Tool::validate)). The tool name is filled in by the server builder.
pub fn check_elicitation<T: JsonSchema>(key: &str) -> Result<(), crate::RegistrationError> {
    elicitation_schema::<T>()
        .map(|_| ())
        .map_err(|error| crate::RegistrationError::Schema {
            tool: String::new(),
            key: key.to_owned(),
            error,
        })
}

/// Normalises a JSON Schema into the elicitation subset, or says why it does not fit.
///
/// Accepted properties: `string` (with `format` email/uri/date/date-time, `enum`, titled
/// `oneOf`, `minLength`, `maxLength`), `number`, `integer` (`minimum`, `maximum`),
/// `boolean`, and arrays of string enums. Nullable properties (`Option<T>`) become
/// non-required. `$schema`, `$defs` and unknown keywords are dropped.
pub fn check_elicitation_schema(schema: &JsonObject) -> Result<JsonObject, SchemaError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::new(
            "",
            "the root must be an object with named fields (a struct)",
        ));
    }
    let empty = JsonObject::new();
    let props = match schema.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return Err(SchemaError::new("", "`properties` must be an object")),
    };
    if let Some(ap) = schema.get("additionalProperties")
        && ap.is_object()
    {
        return Err(SchemaError::new(
            "",
            "maps / flattened extra fields are not allowed",
        ));
    }
    for k in ["allOf", "anyOf", "oneOf", "if", "patternProperties"] {
        if schema.contains_key(k) {
            return Err(SchemaError::new(
                "",
                format!("`{k}` is not allowed at the root"),
            ));
        }
    }
    let mut required: Vec<String> = match schema.get("required") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => return Err(SchemaError::new("", "`required` must be an array")),
    };
    let mut out_props = JsonObject::new();
    for (name, prop) in props {
        let (norm, nullable) = normalise_property(name, prop)?;
        if nullable {
            required.retain(|r| r != name);
        }
        out_props.insert(name.clone(), Value::Object(norm));
    }
    required.retain(|r| out_props.contains_key(r));
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(out_props));
    if !required.is_empty() {
        out.insert(
            "required".into(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Ok(out)
}

const STRING_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// Removes a `null` alternative; returns the remaining schema and whether it was nullable.
fn strip_null(path: &str, prop: &Value) -> Result<(JsonObject, bool), SchemaError> {
    let Value::Object(p) = prop else {
        return Err(SchemaError::new(path, "must be a primitive schema object"));
    };
    let mut p = p.clone();
    let mut nullable = false;
    if let Some(Value::Array(types)) = p.get("type") {
        let non_null: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        nullable = non_null.len() != types.len();
        match non_null.as_slice() {
            [one] => {
                let one = (*one).clone();
                p.insert("type".into(), one);
            }
            _ => return Err(SchemaError::new(path, "union types are not allowed")),
        }
    }
    for comb in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = p.get(comb) else {
            continue;
        };
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        if !alts.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = alts.iter().filter(|v| !is_null(v)).cloned().collect();
        nullable = true;
        p.remove(comb);
        match rest.as_slice() {
            [Value::Object(inner)] => {
                for (k, v) in inner {
                    // The outer title/description win.
                    if !p.contains_key(k) {
                        p.insert(k.clone(), v.clone());
                    }
                }
            }
            _ => {
                p.insert(comb.into(), Value::Array(rest));
            }
        }
    }
    if let Some(Value::Array(vals)) = p.get_mut("enum")
        && vals.iter().any(Value::is_null)
    {
        vals.retain(|v| !v.is_null());
        nullable = true;
    }
    Ok((p, nullable))
}

/// `[{const, title}]` from `oneOf`/`anyOf` alternatives of string constants.
fn titled_options(path: &str, alts: &[Value]) -> Result<Vec<Value>, SchemaError> {
    alts.iter()
        .map(|alt| {
            let c = alt
                .get("const")
                .and_then(Value::as_str)
                .or_else(|| {
                    alt.get("enum")
                        .and_then(Value::as_array)
                        .and_then(|a| match a.as_slice() {
                            [Value::String(s)] => Some(s.as_str()),
                            _ => None,
                        })
                })
                .ok_or_else(|| {
                    SchemaError::new(
                        path,
                        "enum options must be string constants (unit variants)",
                    )
                })?;
            let title = alt
                .get("title")
                .and_then(Value::as_str)
                .or_else(|| alt.get("description").and_then(Value::as_str))
                .unwrap_or(c);
            let mut o = JsonObject::new();
            o.insert("const".into(), Value::String(c.to_owned()));
            o.insert("title".into(), Value::String(title.to_owned()));
            Ok(Value::Object(o))
        })
        .collect()
}

fn string_enum(path: &str, v: &Value) -> Result<Vec<Value>, SchemaError> {
    let Value::Array(vals) = v else {
        return Err(SchemaError::new(path, "`enum` must be an array"));
    };
    if vals.iter().all(Value::is_string) && !vals.is_empty() {
        Ok(vals.clone())
    } else {
        Err(SchemaError::new(path, "enum values must be strings"))
    }
}

fn copy_keys(from: &JsonObject, to: &mut JsonObject, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            to.insert((*k).to_owned(), v.clone());
        }
    }
}

fn normalise_property(path: &str, prop: &Value) -> Result<(JsonObject, bool), SchemaError> {
    let (p, nullable) = strip_null(path, prop)?;
    if p.contains_key("$ref") {
        return Err(SchemaError::new(
            path,
            "references (recursive or nested types) are not allowed",
        ));
    }
    let ty = match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(SchemaError::new(path, "`type` must be a string")),
        // A documented unit enum comes out as `oneOf` of constants without `type`.
        None if p.contains_key("oneOf") || p.contains_key("enum") => "string".to_owned(),
        None => {
            return Err(SchemaError::new(
                path,
                "must be a string, number, integer, boolean or enum",
            ));
        }
    };
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::String(ty.clone()));
    copy_keys(&p, &mut out, &["title", "description"]);
    match ty.as_str() {
        "string" => {
            copy_keys(&p, &mut out, &["minLength", "maxLength"]);
            if let Some(Value::String(f)) = p.get("format")
                && STRING_FORMATS.contains(&f.as_str())
            {
                out.insert("format".into(), Value::String(f.clone()));
            }
            if let Some(e) = p.get("enum") {
                out.insert("enum".into(), Value::Array(string_enum(path, e)?));
                copy_keys(&p, &mut out, &["enumNames"]);
            } else if let Some(Value::Array(alts)) = p.get("oneOf").or_else(|| p.get("anyOf")) {
                out.insert("oneOf".into(), Value::Array(titled_options(path, alts)?));
            } else if let Some(c) = p.get("const") {
                out.insert(
                    "enum".into(),
                    Value::Array(string_enum(path, &Value::Array(vec![c.clone()]))?),
                );
            }
            if let Some(d) = p.get("default")
                && d.is_string()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "number" | "integer" => {
            copy_keys(&p, &mut out, &["minimum", "maximum"]);
            if let Some(d) = p.get("default")
                && d.is_number()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "boolean" => {
            if let Some(d) = p.get("default")
                && d.is_boolean()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "array" => {
            let items = match p.get("items") {
                Some(Value::Object(i)) => i,
                _ => {
                    return Err(SchemaError::new(
                        path,
                        "arrays must list string enum items (multi-select)",
                    ));
                }
            };
            let mut out_items = JsonObject::new();
            if let Some(e) = items.get("enum") {
                out_items.insert("type".into(), Value::String("string".into()));
                out_items.insert("enum".into(), Value::Array(string_enum(path, e)?));
            } else if let Some(Value::Array(alts)) =
                items.get("anyOf").or_else(|| items.get("oneOf"))
            {
                out_items.insert("anyOf".into(), Value::Array(titled_options(path, alts)?));
            } else {
                return Err(SchemaError::new(
                    path,
                    "arrays are only allowed as multi-select string enums",
                ));
            }
            out.insert("items".into(), Value::Object(out_items));
            copy_keys(&p, &mut out, &["minItems", "maxItems"]);
            if let Some(d) = p.get("default")
                && d.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            {
                out.insert("default".into(), d.clone());
            }
        }
        "object" => {
            return Err(SchemaError::new(
                path,
                "nested objects are not allowed (flat primitive fields only)",
            ));
        }
        other => {
            return Err(SchemaError::new(
                path,
                format!("type `{other}` is not allowed"),
            ));
        }
    }
    Ok((out, nullable))
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
}
