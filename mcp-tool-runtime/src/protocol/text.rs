//! Messages read from their text, without a tree: an object's wanted members kept as the
//! JSON text they were sent as (`&RawValue`, borrowed from the body), the others skipped
//! unparsed, and each member parsed into its own type where it is used. The typed request
//! path of a 2026-07-28 request (see [`MessageIn`], [`ParamsIn`], [`MetaIn`]).

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

/// The members `names` of one JSON object, as the text each was sent as (`None`: absent).
/// A member sent twice counts once, the last, as in a `serde_json::Value` tree.
pub(crate) struct Members<'a, const N: usize>(pub [Option<&'a RawValue>; N]);

impl<'a, const N: usize> Members<'a, N> {
    /// The members `names` of the object `text`; `Err` when `text` is not one JSON object.
    pub(crate) fn of(text: &'a str, names: &[&str; N]) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let members = Seed { names }.deserialize(&mut de)?;
        de.end()?;
        Ok(members)
    }
}

struct Seed<'n, const N: usize> {
    names: &'n [&'n str; N],
}

impl<'de, const N: usize> DeserializeSeed<'de> for Seed<'_, N> {
    type Value = Members<'de, N>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for Seed<'_, N> {
    type Value = Members<'de, N>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = [None; N];
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match self.names.iter().position(|n| *n == key) {
                Some(i) => out[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Members(out))
    }
}

/// An object key, borrowed from the text unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// The first byte of a JSON text (`{` an object, `"` a string, `n` null, …).
fn first(raw: &RawValue) -> u8 {
    raw.get().trim_start().bytes().next().unwrap_or(b' ')
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
    if first(raw) != b'"' {
        return None;
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
            while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                out.insert(key, map.next_value::<&'de RawValue>()?);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_map(V).ok()
}

/// One JSON-RPC message read from its text: the envelope's members.
pub(crate) struct MessageIn<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<&'a RawValue>,
    /// `id`.
    pub id: Option<&'a RawValue>,
    /// `method`.
    pub method: Option<&'a RawValue>,
    /// `params` (`None`: absent or `null`).
    pub params: Option<&'a RawValue>,
    /// `params` read member by member (`None`: absent, `null`, or not an object).
    pub fields: Option<ParamsIn<'a>>,
    /// `result` (a response).
    pub result: Option<&'a RawValue>,
    /// `error` (a response).
    pub error: Option<&'a RawValue>,
}

impl<'a> MessageIn<'a> {
    /// The message `text`; `Err` when it is not JSON, or not one object.
    pub(crate) fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        let Members([jsonrpc, id, method, params, result, error]) = Members::of(
            text,
            &["jsonrpc", "id", "method", "params", "result", "error"],
        )?;
        let params = params.filter(|p| !is_null(p));
        Ok(MessageIn {
            jsonrpc,
            id,
            method,
            params,
            fields: params.and_then(ParamsIn::parse),
            result,
            error,
        })
    }

    /// Whether it has a `result` or an `error` (a response).
    pub(crate) fn answers(&self) -> bool {
        self.result.is_some() || self.error.is_some()
    }

    /// The method, when it is a string.
    pub(crate) fn method(&self) -> Option<Cow<'a, str>> {
        self.method.and_then(string)
    }

    /// Whether `params` is there but not an object.
    pub(crate) fn params_not_object(&self) -> bool {
        self.params.is_some() && self.fields.is_none()
    }

    /// Whether its `_meta` declares a protocol version: a 2026-07-28 request.
    pub(crate) fn is_modern(&self) -> bool {
        self.fields
            .as_ref()
            .is_some_and(|p| p.meta.object && p.meta.version.is_some())
    }
}

/// A request id read from its text (`None` for anything but a string or a number).
pub(crate) fn request_id(raw: &RawValue) -> Option<RequestId> {
    match first(raw) {
        b'"' | b'-' | b'0'..=b'9' => RequestId::from_value(&tree(raw).ok()?),
        _ => None,
    }
}

/// A request's `params` read from its text: the members a round reads, and the whole text
/// for a method that reads more (as a tree, [`ParamsIn::object`]).
#[derive(Default)]
pub(crate) struct ParamsIn<'a> {
    /// The whole params (an object; `None`: no params).
    pub raw: Option<&'a RawValue>,
    /// `_meta` as sent.
    pub meta_raw: Option<&'a RawValue>,
    /// The members of `_meta` the server reads.
    pub meta: MetaIn<'a>,
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
}

impl<'a> ParamsIn<'a> {
    /// The params `raw`; `None` when it is not an object.
    pub(crate) fn parse(raw: &'a RawValue) -> Option<Self> {
        if !is_object(raw) {
            return None;
        }
        let Members([meta, name, uri, task_id, arguments, responses, state]) = Members::of(
            raw.get(),
            &[
                "_meta",
                "name",
                "uri",
                "taskId",
                "arguments",
                "inputResponses",
                "requestState",
            ],
        )
        .ok()?;
        Some(ParamsIn {
            raw: Some(raw),
            meta_raw: meta,
            meta: meta.map(MetaIn::parse).unwrap_or_default(),
            name,
            uri,
            task_id,
            arguments,
            round: RoundIn { responses, state },
        })
    }

    /// The params as a tree, for a method that reads more than the members kept here
    /// (`Err`: nested deeper than a tree is built).
    pub(crate) fn object(&self) -> Result<JsonObject, serde_json::Error> {
        match self.raw {
            Some(r) => serde_json::from_str(r.get()),
            None => Ok(JsonObject::new()),
        }
    }

    /// The member that names the target of `method`'s request
    /// ([`name_field`](super::headers::name_field): `name`, `uri` or `taskId`).
    pub(crate) fn named(&self, field: &str) -> Option<&'a RawValue> {
        match field {
            "name" => self.name,
            "uri" => self.uri,
            "taskId" => self.task_id,
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
    /// Whether `_meta` is an object.
    pub object: bool,
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

impl<'a> MetaIn<'a> {
    /// The members of the `_meta` text `raw`.
    pub(crate) fn parse(raw: &'a RawValue) -> Self {
        if !is_object(raw) {
            return MetaIn::default();
        }
        let Ok(Members(
            [
                version,
                capabilities,
                log_level,
                progress_token,
                traceparent,
                tracestate,
            ],
        )) = Members::of(
            raw.get(),
            &[
                META_PROTOCOL_VERSION,
                META_CLIENT_CAPABILITIES,
                META_LOG_LEVEL,
                META_PROGRESS_TOKEN,
                "traceparent",
                "tracestate",
            ],
        )
        else {
            return MetaIn::default();
        };
        MetaIn {
            object: true,
            version,
            capabilities,
            log_level,
            progress_token,
            traceparent,
            tracestate,
        }
    }

    /// The progress token: a string or an integer, as the schema's `ProgressToken` allows;
    /// anything else counts as absent.
    pub(crate) fn progress_token(&self) -> Option<Value> {
        let token = tree(self.progress_token?).ok()?;
        match &token {
            Value::String(_) => Some(token),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(token),
            _ => None,
        }
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

    /// Members read from text are what a tree holds: the last of a repeated member, keys
    /// with escapes, nested members skipped, whitespace anywhere; not an object is `Err`.
    #[test]
    fn members_are_what_a_tree_holds() {
        let text = r#" { "a" : 1, "\u0062" : {"a": [2, {"c": 3}]}, "a": "last", "z": null } "#;
        let Members([a, b, c, z]) = Members::of(text, &["a", "b", "c", "z"]).expect("an object");
        let tree: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(
            serde_json::from_str::<Value>(a.unwrap().get()).unwrap(),
            tree["a"]
        );
        assert_eq!(
            serde_json::from_str::<Value>(b.unwrap().get()).unwrap(),
            tree["b"]
        );
        assert!(c.is_none());
        assert!(is_null(z.unwrap()));
        for not_object in ["[1]", "\"s\"", "1", "{", "{}x", ""] {
            assert!(Members::of(not_object, &["a"]).is_err(), "{not_object}");
        }
    }

    #[test]
    fn strings_ids_and_kinds() {
        assert_eq!(string(&raw(r#""plain""#)).as_deref(), Some("plain"));
        assert!(matches!(string(&raw(r#""plain""#)), Some(Cow::Borrowed(_))));
        assert_eq!(string(&raw(r#""\u00e9\n""#)).as_deref(), Some("é\n"));
        assert_eq!(string(&raw("1")), None);
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
        let meta = &p.meta;
        assert!(meta.object);
        assert_eq!(meta.version.and_then(string).as_deref(), Some("v"));
        assert_eq!(meta.progress_token(), Some(json!(5)));
        assert_eq!(meta.log_level(), Some(super::super::LogLevel::Info));
        assert_eq!(meta.traceparent.and_then(string).as_deref(), Some("tp"));
        assert_eq!(p.object().unwrap()["other"], json!([1]));
        assert!(ParamsIn::parse(&raw("[1]")).is_none());
        assert!(!ParamsIn::parse(&raw("{}")).unwrap().meta.object);
    }
}
