//! Request and result `_meta`, capabilities, implementation info and `resultType`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::JsonObject;

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// Every protocol version the server accepts.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];
/// `_meta` key of the protocol version (required on every request).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities (required on every request).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client implementation info (optional, display only).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server implementation info on results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of the (deprecated) per-request log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of a request's progress token.
pub const META_PROGRESS_TOKEN: &str = "progressToken";
/// The method of progress notifications (`notifications/progress`), which carry a request's
/// [`META_PROGRESS_TOKEN`].
pub const PROGRESS_METHOD: &str = "notifications/progress";

/// Whether `token` is a progress token: a string or an integer, as the schema's
/// `ProgressToken` allows.
pub(crate) fn is_progress_token(token: &Value) -> bool {
    match token {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// Describes an MCP implementation (`name`, `version`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Website.
    #[serde(rename = "websiteUrl", skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Other members (icons, extensions).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Implementation {
    /// An implementation with a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// Sampling capability of a client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// Context inclusion support (`includeContext`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Tool use support in sampling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Elicitation capability of a client. `{}` means form mode only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Form mode support.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode support.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// Whether form mode is supported (declared explicitly, or implied by `{}`).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// Capabilities a client declares on each request (`{}` = none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Experimental capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Roots listing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// Sampling from an LLM.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation from the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// No optional capability.
    pub fn none() -> Self {
        Self::default()
    }

    /// Elicitation (form and URL), sampling and roots.
    pub fn all() -> Self {
        ClientCapabilities {
            roots: Some(JsonObject::new()),
            sampling: Some(SamplingCapability::default()),
            elicitation: Some(ElicitationCapability {
                form: Some(JsonObject::new()),
                url: Some(JsonObject::new()),
                extra: JsonObject::new(),
            }),
            ..Self::default()
        }
    }

    /// Adds form-mode elicitation (`elicitation: {}`).
    pub fn with_elicitation(mut self) -> Self {
        self.elicitation.get_or_insert_with(Default::default);
        self
    }

    /// Adds URL-mode elicitation (`elicitation.url`).
    pub fn with_url_elicitation(mut self) -> Self {
        let e = self.elicitation.get_or_insert_with(Default::default);
        if e.form.is_none() {
            e.form = Some(JsonObject::new());
        }
        e.url = Some(JsonObject::new());
        self
    }

    /// Adds sampling.
    pub fn with_sampling(mut self) -> Self {
        self.sampling.get_or_insert_with(Default::default);
        self
    }

    /// Adds roots.
    pub fn with_roots(mut self) -> Self {
        self.roots.get_or_insert_with(Default::default);
        self
    }

    /// Only what the server acts on: which of elicitation (form, URL), sampling (with
    /// context, with tools) and roots (with `listChanged`) are declared, each as an empty
    /// object (`listChanged` as its boolean). `experimental`, `extensions` and every other
    /// member are dropped, whatever they held: a legacy session keeps this for its whole
    /// life, and its size does not depend on what the client sent.
    pub fn flags(&self) -> ClientCapabilities {
        let flag = |o: &Option<JsonObject>| o.as_ref().map(|_| JsonObject::new());
        ClientCapabilities {
            roots: self.roots.as_ref().map(|r| {
                let mut kept = JsonObject::new();
                if let Some(b @ Value::Bool(_)) = r.get("listChanged") {
                    kept.insert("listChanged".into(), b.clone());
                }
                kept
            }),
            sampling: self.sampling.as_ref().map(|s| SamplingCapability {
                context: flag(&s.context),
                tools: flag(&s.tools),
                extra: JsonObject::new(),
            }),
            elicitation: self.elicitation.as_ref().map(|e| ElicitationCapability {
                form: flag(&e.form),
                url: flag(&e.url),
                extra: JsonObject::new(),
            }),
            ..Self::default()
        }
    }
}

/// The most text a request's `_meta` may have (64 KiB): a longer one is refused with
/// -32602 before anything of it is read. A legitimate `_meta` (the version, the
/// capabilities, client info, a progress token, trace context) is a few hundred bytes.
pub const MAX_META_BYTES: usize = 64 * 1024;

/// The most text of `extensions` a request's capabilities may carry: its members are kept
/// (as a tree) for the whole request, so their size is bounded (a larger `extensions` is
/// refused, -32602). Extensions are named, with settings of a few members each.
pub const MAX_REQUEST_EXTENSIONS_BYTES: usize = 4096;

impl ClientCapabilities {
    /// The capabilities a request declares, read from their JSON text keeping only what the
    /// server acts on, whatever else the text holds: `roots` (with `listChanged` when it is a
    /// boolean), `sampling` (`context`, `tools`), `elicitation` (`form`, `url`), each a
    /// flag (an empty object), and `extensions` as sent (at most
    /// [`MAX_REQUEST_EXTENSIONS_BYTES`] of text). `experimental` and every unknown member, at
    /// any level, are skipped without being built: what is kept does not grow with the
    /// text. A member sent twice counts once, the last, as in a tree.
    ///
    /// # Errors
    /// When the text is not an object, a known member has the wrong type, or `extensions`
    /// is too long.
    pub(crate) fn read_kept(text: &str) -> Result<ClientCapabilities, serde_json::Error> {
        let kept: Kept = serde_json::from_str(text)?;
        Ok(kept.0)
    }
}

/// [`ClientCapabilities::read_kept`]'s reader.
struct Kept(ClientCapabilities);

/// A declared flag: an object whose members are skipped (kept as an empty object).
struct Flag;

/// `roots`: an object of which only a boolean `listChanged` is kept.
struct KeptRoots(JsonObject);

/// `sampling` or `elicitation`: an object of which two flags are kept.
struct TwoFlags(Option<JsonObject>, Option<JsonObject>);

/// Reads the map of `d` with `visit`, refusing anything else as `expecting`.
macro_rules! map_reader {
    ($ty:ty, $expecting:expr, |$map:ident| $body:block) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut $map: A,
                    ) -> Result<$ty, A::Error> {
                        $body
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

/// An object key, borrowed from the text unless it holds escapes (a plain `std::borrow::Cow<str>` or
/// `String` key is a copy every time): every member name of a request is read as one.
#[derive(serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Key<'a>(#[serde(borrow)] pub(crate) std::borrow::Cow<'a, str>);

/// Skips the value of the member just read.
fn skip<'de, A: serde::de::MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<serde::de::IgnoredAny>().map(|_| ())
}

map_reader!(Flag, "a map", |map| {
    while map.next_key::<serde::de::IgnoredAny>()?.is_some() {
        skip(&mut map)?;
    }
    Ok(Flag)
});

map_reader!(KeptRoots, "a map", |map| {
    let mut kept = JsonObject::new();
    while let Some(Key(key)) = map.next_key()? {
        if key == "listChanged" {
            let raw: &serde_json::value::RawValue = map.next_value()?;
            match raw.get().trim_ascii() {
                "true" => kept.insert("listChanged".into(), Value::Bool(true)),
                "false" => kept.insert("listChanged".into(), Value::Bool(false)),
                _ => kept.remove("listChanged"),
            };
        } else {
            skip(&mut map)?;
        }
    }
    Ok(KeptRoots(kept))
});

/// Reads `sampling` (`context`, `tools`) or `elicitation` (`form`, `url`).
macro_rules! two_flags {
    ($name:ident, $expecting:literal, $first:literal, $second:literal) => {
        struct $name(TwoFlags);
        map_reader!($name, $expecting, |map| {
            let mut out = TwoFlags(None, None);
            while let Some(Key(key)) = map.next_key()? {
                match key.as_ref() {
                    $first => out.0 = map.next_value::<Option<Flag>>()?.map(|_| JsonObject::new()),
                    $second => out.1 = map.next_value::<Option<Flag>>()?.map(|_| JsonObject::new()),
                    _ => skip(&mut map)?,
                }
            }
            Ok($name(out))
        });
    };
}

two_flags!(
    KeptSampling,
    "struct SamplingCapability",
    "context",
    "tools"
);
two_flags!(
    KeptElicitation,
    "struct ElicitationCapability",
    "form",
    "url"
);

map_reader!(Kept, "struct ClientCapabilities", |map| {
    use serde::de::Error as _;
    let mut out = ClientCapabilities::default();
    while let Some(Key(key)) = map.next_key()? {
        match key.as_ref() {
            "roots" => out.roots = map.next_value::<Option<KeptRoots>>()?.map(|r| r.0),
            "sampling" => {
                out.sampling = map.next_value::<Option<KeptSampling>>()?.map(
                    |KeptSampling(TwoFlags(context, tools))| SamplingCapability {
                        context,
                        tools,
                        extra: JsonObject::new(),
                    },
                )
            }
            "elicitation" => {
                out.elicitation = map.next_value::<Option<KeptElicitation>>()?.map(
                    |KeptElicitation(TwoFlags(form, url))| ElicitationCapability {
                        form,
                        url,
                        extra: JsonObject::new(),
                    },
                )
            }
            "extensions" => {
                let raw: Option<&serde_json::value::RawValue> = map.next_value()?;
                out.extensions = match raw {
                    None => None,
                    Some(raw) if raw.get().len() > MAX_REQUEST_EXTENSIONS_BYTES => {
                        return Err(A::Error::custom(format_args!(
                            "`extensions` is longer than {MAX_REQUEST_EXTENSIONS_BYTES} bytes"
                        )));
                    }
                    Some(raw) => Some(
                        serde_json::from_str::<Option<JsonObject>>(raw.get())
                            .map_err(A::Error::custom)?
                            .unwrap_or_default(),
                    ),
                };
            }
            _ => skip(&mut map)?,
        }
    }
    Ok(Kept(out))
});

/// Capabilities a server advertises in `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// Experimental capabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Logging (deprecated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Completions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Resources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<JsonObject>,
    /// Tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A capability with an optional `listChanged` flag.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListChangedCapability {
    /// Whether list-changed notifications are supported.
    #[serde(rename = "listChanged", skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Other members.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta` of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo` (display only, never an identity).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// Other keys (`progressToken`, extensions, ...).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestMeta {
    /// `_meta` for the current protocol version with the given capabilities.
    pub fn new(client_capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            client_capabilities,
            client_info: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets `clientInfo`.
    pub fn with_client_info(mut self, info: Implementation) -> Self {
        self.client_info = Some(info);
        self
    }

    /// As a JSON value (for `params._meta`).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `_meta` of a result carrying the server info.
pub fn server_info_meta(info: &Implementation) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert(
        META_SERVER_INFO.to_owned(),
        serde_json::to_value(info).unwrap_or(Value::Null),
    );
    m
}

/// `resultType` of a result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// The request completed.
    #[default]
    Complete,
    /// The server needs input (multi round-trip requests).
    InputRequired,
    /// Another value (e.g. `"task"` from the Tasks extension).
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            _ => ResultType::Other(s),
        })
    }
}

/// `cacheScope` of a cacheable result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any client or intermediary may cache and share the result.
    #[default]
    Public,
    /// Cache only within the same authorization context.
    Private,
}
