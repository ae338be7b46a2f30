//! Messages read from their text, without a tree: an object's wanted members kept as the
//! JSON text they were sent as (`&RawValue`, borrowed from the body), the others skipped
//! unparsed, and each member parsed into its own type where it is used. The typed request
//! path of a 2026-07-28 request (see [`MessageIn`], [`ParamsIn`], [`MetaIn`]).
//!
//! Hand-written for what it means, not for speed: a member sent twice is the last one, as in
//! a tree (`fuzz_server::text_is_read_as_its_tree`), where a derive refuses the text. Derives
//! over the same borrowed members would cost `get_weather`'s round 1 +1.7 % and round 2
//! +2.4 % of instructions (`ROWS="r1 r2" scripts/callgrind_weather.sh` on a build of each);
//! the tree, the plain reading that keeps the meaning, costs 10–14 % more and builds the
//! arguments of a padded body (docs/BENCHMARKS.md, "Hand-written pieces").

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{
    JsonObject, META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION, RequestId,
};

/// What a JSON value is to a reader that wants an object: `null`, something else, or the
/// object, read in the same pass as the text around it.
#[derive(Default)]
pub(crate) enum Shape<T> {
    /// Absent or `null`.
    #[default]
    Null,
    /// Not an object (and not `null`).
    Other,
    /// An object, its members read.
    Object(T),
}

impl<T> Shape<T> {
    /// The object, if it is one.
    pub(crate) fn object(&self) -> Option<&T> {
        match self {
            Shape::Object(t) => Some(t),
            _ => None,
        }
    }
}

/// An object read member by member: each member it wants is taken in the pass over the text
/// (kept as text, or read further in the same pass), the others skipped unparsed. A member
/// sent twice counts once, the last, as in a `serde_json::Value` tree.
trait Fields<'de>: Default {
    /// Takes the member `key` from `map` when wanted (`false`: not wanted, to be skipped).
    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
}

/// Reads a value as a [`Shape`] of `T`.
struct ShapeSeed<T>(std::marker::PhantomData<T>);

impl<T> ShapeSeed<T> {
    fn new() -> Self {
        ShapeSeed(std::marker::PhantomData)
    }
}

impl<'de, T: Fields<'de>> DeserializeSeed<'de> for ShapeSeed<T> {
    type Value = Shape<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Fields<'de>> serde::Deserialize<'de> for Shape<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ShapeSeed::new().deserialize(d)
    }
}

impl<'de, T: Fields<'de>> Visitor<'de> for ShapeSeed<T> {
    type Value = Shape<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = T::default();
        while let Some(super::meta::Key(key)) = map.next_key::<super::meta::Key<'de>>()? {
            if !out.take(&key, &mut map)? {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Shape::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape::Other)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Shape::Other)
    }
}

/// `text` read as a [`Shape`] of `T`; `Err` when it is not JSON.
fn read<'a, T: Fields<'a>>(text: &'a str) -> Result<Shape<T>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let shape = ShapeSeed::new().deserialize(&mut de)?;
    de.end()?;
    Ok(shape)
}

/// Takes a member kept as text.
fn keep<'de, A: MapAccess<'de>>(
    slot: &mut Option<&'de RawValue>,
    map: &mut A,
) -> Result<bool, A::Error> {
    *slot = Some(map.next_value::<&'de RawValue>()?);
    Ok(true)
}

/// The first byte of a JSON text (`{` an object, `"` a string, `n` null, …). JSON's
/// whitespace is ASCII: no Unicode tables are needed to skip it.
fn first(raw: &RawValue) -> u8 {
    raw.get().trim_ascii_start().bytes().next().unwrap_or(b' ')
}

/// Whether `raw` is `null`.
pub(crate) fn is_null(raw: &RawValue) -> bool {
    first(raw) == b'n'
}

/// Whether `raw` is a JSON object.
pub(crate) fn is_object(raw: &RawValue) -> bool {
    first(raw) == b'{'
}

/// `raw` as a string, borrowed unless it holds escapes (`None`: not a string).
pub(crate) fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    // A value read from a message has no white space around it; one made otherwise may.
    let mut text = raw.get();
    if !(text.starts_with('"') && text.ends_with('"')) {
        text = text.trim_ascii();
        if !text.starts_with('"') {
            return None;
        }
    }
    // A JSON string without a backslash is its text between the quotes: a `RawValue` holds
    // valid JSON, so there are no control characters to refuse and nothing to unescape. The
    // check runs over every byte without stopping early, which the compiler vectorizes.
    let escaped = text.bytes().fold(false, |any, b| any | (b == b'\\'));
    if text.len() >= 2 && text.ends_with('"') && !escaped {
        return Some(Cow::Borrowed(&text[1..text.len() - 1]));
    }
    match serde_json::from_str::<&str>(raw.get()) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw.get())
            .ok()
            .map(Cow::Owned),
    }
}

/// `raw` as a tree (what a member read by tree-taking code needs). `raw` is valid JSON, so
/// only a nesting deeper than the parser takes fails.
pub(crate) fn tree(raw: &RawValue) -> Result<Value, serde_json::Error> {
    serde_json::from_str(raw.get())
}

/// The length of `raw` as compact JSON: its text without the whitespace between tokens.
pub(crate) fn compact_len(raw: &RawValue) -> usize {
    let mut len = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in raw.get().bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        len += 1;
    }
    len
}

/// An object of members kept as text (`inputResponses`), keyed by their names.
pub(crate) type RawObject<'a> = BTreeMap<Cow<'a, str>, &'a RawValue>;

/// `raw` as an object of members kept as text (`None`: not an object).
pub(crate) fn raw_object(raw: &RawValue) -> Option<RawObject<'_>> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = RawObject<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(super::meta::Key(key)) = map.next_key::<super::meta::Key<'de>>()? {
                out.insert(key, map.next_value::<&'de RawValue>()?);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_map(V).ok()
}

/// One JSON-RPC message read from its text: the envelope's members, and those of `params`
/// and its `_meta`, in one pass.
#[derive(Default)]
pub(crate) struct MessageIn<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<&'a RawValue>,
    /// `id`.
    pub id: Option<&'a RawValue>,
    /// `method`.
    pub method: Option<&'a RawValue>,
    /// `params`.
    pub params: Shape<ParamsIn<'a>>,
    /// `result` (a response).
    pub result: Option<&'a RawValue>,
    /// `error` (a response).
    pub error: Option<&'a RawValue>,
    /// The whole text, for a method that reads its params as a tree.
    text: &'a str,
}

impl<'de> Fields<'de> for MessageIn<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "jsonrpc" => keep(&mut self.jsonrpc, map),
            "id" => keep(&mut self.id, map),
            "method" => keep(&mut self.method, map),
            "result" => keep(&mut self.result, map),
            "error" => keep(&mut self.error, map),
            "params" => {
                self.params = map.next_value()?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

impl<'a> MessageIn<'a> {
    /// The message `text`; `Err` when it is not JSON, or not one object.
    pub(crate) fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        match read::<MessageIn<'a>>(text)? {
            Shape::Object(m) => Ok(MessageIn { text, ..m }),
            _ => Err(serde::de::Error::custom("not a JSON object")),
        }
    }

    /// Whether it has a `result` or an `error` (a response).
    pub(crate) fn answers(&self) -> bool {
        self.result.is_some() || self.error.is_some()
    }

    /// The method, when it is a string.
    pub(crate) fn method(&self) -> Option<Cow<'a, str>> {
        self.method.and_then(string)
    }

    /// `params` read member by member (`None`: absent, `null`, or not an object).
    pub(crate) fn fields(&self) -> Option<&ParamsIn<'a>> {
        self.params.object()
    }

    /// Whether `params` is there but not an object.
    pub(crate) fn params_not_object(&self) -> bool {
        matches!(self.params, Shape::Other)
    }

    /// Whether its `_meta` declares a protocol version: a 2026-07-28 request.
    pub(crate) fn is_modern(&self) -> bool {
        self.fields()
            .and_then(|p| p.meta.object())
            .is_some_and(|m| m.version.is_some())
    }

    /// The params as a tree, for a method that reads more than the members kept here
    /// (`Err`: nested deeper than a tree is built).
    pub(crate) fn params_object(&self) -> Result<JsonObject, serde_json::Error> {
        /// The message with its params alone as a tree.
        #[derive(serde::Deserialize)]
        struct Only {
            params: Option<JsonObject>,
        }
        if self.fields().is_none() {
            return Ok(JsonObject::new());
        }
        Ok(serde_json::from_str::<Only>(self.text)?
            .params
            .unwrap_or_default())
    }
}

/// A request id read from its text (`None` for anything but a string or a number).
pub(crate) fn request_id(raw: &RawValue) -> Option<RequestId> {
    match first(raw) {
        b'"' | b'-' | b'0'..=b'9' => RequestId::from_value(&tree(raw).ok()?),
        _ => None,
    }
}

/// A request's `params` read from its text: the members a request reads.
#[derive(Default)]
pub(crate) struct ParamsIn<'a> {
    /// `_meta`: the members the server reads.
    pub meta: Shape<MetaIn<'a>>,
    /// `name` (`tools/call`, `prompts/get`).
    pub name: Option<&'a RawValue>,
    /// `uri` (`resources/read`).
    pub uri: Option<&'a RawValue>,
    /// `taskId` (`tasks/*`).
    pub task_id: Option<&'a RawValue>,
    /// `arguments`.
    pub arguments: Option<&'a RawValue>,
    /// `inputResponses` and `requestState`.
    pub round: RoundIn<'a>,
    /// Whether `_meta` is there (even `null`).
    pub has_meta: bool,
    /// The length of `_meta`'s text (0 when absent).
    pub meta_len: usize,
}

impl<'de> Fields<'de> for ParamsIn<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            "_meta" => {
                // its text first (skipped, not parsed, when it is too long to be read)
                let raw: &'de RawValue = map.next_value()?;
                self.meta_len = raw.get().len();
                self.meta = if self.meta_len > super::MAX_META_BYTES {
                    Shape::Other
                } else {
                    read(raw.get()).map_err(serde::de::Error::custom)?
                };
                self.has_meta = true;
                Ok(true)
            }
            "name" => keep(&mut self.name, map),
            "uri" => keep(&mut self.uri, map),
            "taskId" => keep(&mut self.task_id, map),
            "arguments" => keep(&mut self.arguments, map),
            "inputResponses" => keep(&mut self.round.responses, map),
            "requestState" => keep(&mut self.round.state, map),
            _ => Ok(false),
        }
    }
}

impl ParamsIn<'static> {
    /// Params with no member (a request without `params` reads as this): one shared value,
    /// so that a request's future keeps a reference to it rather than a copy.
    pub(crate) fn empty() -> &'static ParamsIn<'static> {
        static EMPTY: std::sync::OnceLock<ParamsIn<'static>> = std::sync::OnceLock::new();
        EMPTY.get_or_init(ParamsIn::default)
    }
}

impl<'a> ParamsIn<'a> {
    /// The params `raw`; `None` when it is not an object.
    pub(crate) fn parse(raw: &'a RawValue) -> Option<Self> {
        match read::<ParamsIn<'a>>(raw.get()).ok()? {
            Shape::Object(p) => Some(p),
            _ => None,
        }
    }

    /// `name` when it is a string.
    pub(crate) fn name(&self) -> Option<Cow<'a, str>> {
        self.name.and_then(string)
    }

    /// `uri` when it is a string.
    pub(crate) fn uri(&self) -> Option<Cow<'a, str>> {
        self.uri.and_then(string)
    }

    /// The member that names the target of `method`'s request
    /// ([`name_field`](super::headers::name_field): `name`, `uri` or `taskId`).
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(crate) fn named(&self, field: &str) -> Option<&'a RawValue> {
        match field {
            "name" => self.name,
            "uri" => self.uri,
            "taskId" => self.task_id,
            _ => None,
        }
    }

    /// The progress token of its `_meta` (see [`MetaIn::progress_token`]).
    pub(crate) fn progress_token(&self) -> Option<Value> {
        self.meta.object()?.progress_token()
    }

    /// Whether the request may produce notifications (see [`MetaIn::wants_notifications`]).
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(crate) fn wants_notifications(&self) -> bool {
        self.meta.object().is_some_and(MetaIn::wants_notifications)
    }
}

/// What a resumable request carries for its round: `inputResponses` and `requestState`,
/// as sent (the engine checks their types).
#[derive(Clone, Copy, Default)]
pub(crate) struct RoundIn<'a> {
    /// `inputResponses`.
    pub responses: Option<&'a RawValue>,
    /// `requestState`.
    pub state: Option<&'a RawValue>,
}

/// The members of a request's `_meta` the server reads.
#[derive(Default)]
pub(crate) struct MetaIn<'a> {
    /// The protocol version.
    pub version: Option<&'a RawValue>,
    /// The client's capabilities.
    pub capabilities: Option<&'a RawValue>,
    /// The log level asked for.
    pub log_level: Option<&'a RawValue>,
    /// The progress token.
    pub progress_token: Option<&'a RawValue>,
    /// W3C `traceparent`.
    pub traceparent: Option<&'a RawValue>,
    /// W3C `tracestate`.
    pub tracestate: Option<&'a RawValue>,
}

impl<'de> Fields<'de> for MetaIn<'de> {
    fn take<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            META_PROTOCOL_VERSION => keep(&mut self.version, map),
            META_CLIENT_CAPABILITIES => keep(&mut self.capabilities, map),
            META_LOG_LEVEL => keep(&mut self.log_level, map),
            META_PROGRESS_TOKEN => keep(&mut self.progress_token, map),
            "traceparent" => keep(&mut self.traceparent, map),
            "tracestate" => keep(&mut self.tracestate, map),
            _ => Ok(false),
        }
    }
}

impl<'a> MetaIn<'a> {
    /// The progress token: a string or an integer, as the schema's `ProgressToken` allows;
    /// anything else counts as absent.
    pub(crate) fn progress_token(&self) -> Option<Value> {
        tree(self.progress_token?)
            .ok()
            .filter(super::meta::is_progress_token)
    }

    /// Whether the request may produce notifications: it carries a progress token or asks
    /// for log messages.
    pub(crate) fn wants_notifications(&self) -> bool {
        self.progress_token().is_some() || self.log_level().is_some()
    }

    /// The log level asked for, when it is one.
    pub(crate) fn log_level(&self) -> Option<super::LogLevel> {
        super::LogLevel::parse(&string(self.log_level?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    /// A message read from its text is what its tree holds: the last of a repeated member,
    /// keys with escapes, unwanted members skipped, whitespace anywhere; params and `_meta`
    /// of every shape; not one object is `Err`.
    #[test]
    fn a_message_is_what_its_tree_holds() {
        let text = r#" { "id" : 1, "p\u0061rams" : {"name": [2, {"c": 3}], "name": "last",
            "_meta": {"traceparent": "a", "traceparent": "b"}}, "id": "two", "z": null } "#;
        let m = MessageIn::parse(text).expect("an object");
        let whole: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(tree(m.id.unwrap()).unwrap(), whole["id"]);
        let p = m.fields().expect("params");
        assert_eq!(p.name().as_deref(), Some("last"));
        let meta = p.meta.object().expect("_meta");
        assert_eq!(meta.traceparent.and_then(string).as_deref(), Some("b"));
        assert!(m.method.is_none() && !m.params_not_object() && !m.is_modern());
        assert_eq!(
            m.params_object().unwrap(),
            *whole["params"].as_object().unwrap()
        );
        for (params, not_object) in [
            ("null", false),
            ("[1, [2]]", true),
            ("\"s\"", true),
            ("1.5", true),
            ("true", true),
            ("{}", false),
        ] {
            let text = format!(r#"{{"params": {params}, "id": 1}}"#);
            let m = MessageIn::parse(&text).expect("an object");
            assert_eq!(m.params_not_object(), not_object, "{params}");
            assert_eq!(m.fields().is_some(), params == "{}", "{params}");
        }
        for not_object in ["[1]", "\"s\"", "1", "{", "{}x", "", "null"] {
            assert!(MessageIn::parse(not_object).is_err(), "{not_object}");
        }
    }

    #[test]
    fn strings_ids_and_kinds() {
        assert_eq!(string(&raw(r#""plain""#)).as_deref(), Some("plain"));
        assert!(matches!(string(&raw(r#""plain""#)), Some(Cow::Borrowed(_))));
        assert_eq!(string(&raw(r#""\u00e9\n""#)).as_deref(), Some("é\n"));
        assert_eq!(string(&raw("1")), None);
        // white space around it (a value made, not read from a message), escapes at the ends
        let padded = RawValue::from_string(" \n\"pad\" ".to_owned()).expect("JSON");
        assert_eq!(string(&padded).as_deref(), Some("pad"));
        let padded = RawValue::from_string(" 1 ".to_owned()).expect("JSON");
        assert_eq!(string(&padded), None);
        assert_eq!(string(&raw(r#""a\"""#)).as_deref(), Some("a\""));
        assert_eq!(string(&raw(r#""\\""#)).as_deref(), Some("\\"));
        assert_eq!(string(&raw(r#""""#)).as_deref(), Some(""));
        assert_eq!(request_id(&raw("7")), Some(RequestId::from(7)));
        assert_eq!(request_id(&raw(r#""x""#)), Some(RequestId::from("x")));
        for bad in ["null", "true", "[1]", "{}"] {
            assert_eq!(request_id(&raw(bad)), None, "{bad}");
        }
        assert!(is_object(&raw("{}")) && !is_object(&raw("[]")));
    }

    /// The compact length is what `serde_json` writes for the same value (for text that
    /// uses no escapes `serde_json` would write differently).
    #[test]
    fn compact_length_is_the_written_length() {
        for v in [
            json!({"action": "accept", "content": {"name": "a b\" \\ ", "n": [1, 2.5, null]}}),
            json!("  spaced  "),
            json!([]),
        ] {
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            assert_eq!(compact_len(&raw(&pretty)), v.to_string().len(), "{pretty}");
        }
    }

    #[test]
    fn params_and_meta_are_read_in_one_pass() {
        let params = raw(&json!({
            "name": "t", "arguments": {"x": 1}, "requestState": "s", "inputResponses": {"k": {}},
            "_meta": {META_PROTOCOL_VERSION: "v", META_PROGRESS_TOKEN: 5, META_LOG_LEVEL: "info",
                "traceparent": "tp"},
            "other": [1]
        })
        .to_string());
        let p = ParamsIn::parse(&params).expect("an object");
        assert_eq!(p.name().as_deref(), Some("t"));
        assert_eq!(p.arguments.unwrap().get(), r#"{"x":1}"#);
        assert_eq!(p.round.state.unwrap().get(), r#""s""#);
        let responses = raw_object(p.round.responses.unwrap()).expect("an object");
        assert_eq!(responses.keys().collect::<Vec<_>>(), ["k"]);
        let meta = p.meta.object().expect("_meta");
        assert_eq!(meta.version.and_then(string).as_deref(), Some("v"));
        assert_eq!(meta.progress_token(), Some(json!(5)));
        assert_eq!(meta.log_level(), Some(super::super::LogLevel::Info));
        assert_eq!(meta.traceparent.and_then(string).as_deref(), Some("tp"));
        assert!(p.wants_notifications() && p.has_meta);
        assert!(ParamsIn::parse(&raw("[1]")).is_none());
        let empty = raw("{}");
        let empty = ParamsIn::parse(&empty).unwrap();
        assert!(empty.meta.object().is_none() && !empty.has_meta);
        let null = raw(r#"{"_meta": null}"#);
        let null = ParamsIn::parse(&null).unwrap();
        assert!(null.meta.object().is_none() && null.has_meta);
    }
}
