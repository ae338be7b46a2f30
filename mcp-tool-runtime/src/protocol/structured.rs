//! A tool result's `structuredContent`, held as its JSON text.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A tool result's `structuredContent`: any JSON value, held as its JSON text.
///
/// A server writes it into the answer as it is, so a typed value serialized once with
/// [`StructuredContent::new`] costs no `serde_json::Value` tree (no allocation per member, no
/// walk of a tree to write it, no tree to drop). A [`Value`] converts with `From`, and a
/// client reads it back with [`StructuredContent::to_value`] or [`StructuredContent::parse`].
///
/// Two are equal when their JSON values are (member order and white space aside).
///
/// ```
/// # use mcp_tool_runtime::protocol::{CallToolResult, StructuredContent};
/// #[derive(serde::Serialize)]
/// struct Forecast<'a> { sky: &'a str, #[serde(rename = "highC")] high_c: i64 }
///
/// let mut result = CallToolResult::text("Sunny, high 22 °C.");
/// result.structured_content = Some(StructuredContent::new(&Forecast { sky: "sunny", high_c: 22 })?);
/// assert_eq!(result.structured_content.as_ref().unwrap().json(), r#"{"sky":"sunny","highC":22}"#);
/// assert_eq!(result.structured_content.unwrap().to_value()["highC"], 22);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct StructuredContent(Box<RawValue>);

impl StructuredContent {
    /// `value` serialized, once. Fails only as serializing `value` fails (a map with keys
    /// that are not strings, a `Serialize` impl that returns an error).
    pub fn new<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        serde_json::value::to_raw_value(value).map(StructuredContent)
    }

    /// Its JSON text, as it is written into the answer.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// It as a JSON value tree.
    pub fn to_value(&self) -> Value {
        // the text was written by serde_json (or read as JSON): it parses
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// It deserialized as a `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }
}

impl From<Value> for StructuredContent {
    fn from(value: Value) -> Self {
        Self::from(&value)
    }
}

impl From<&Value> for StructuredContent {
    fn from(value: &Value) -> Self {
        // a `Value` always serializes (its map keys are strings, its numbers finite)
        Self::new(value).unwrap_or_else(|_| StructuredContent(RawValue::NULL.to_owned()))
    }
}

impl PartialEq for StructuredContent {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json() || self.to_value() == other.to_value()
    }
}

impl PartialEq<Value> for StructuredContent {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for StructuredContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StructuredContent")
            .field(&self.json())
            .finish()
    }
}

impl fmt::Display for StructuredContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.json())
    }
}

impl Serialize for StructuredContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for StructuredContent {
    /// Read through a [`Value`], so it deserializes from any deserializer (a `Value` as well as
    /// JSON text), as the other protocol types do.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Made from a value or a typed value, it is written as serde writes the value; read back
    /// from JSON text or from a tree, it is the same value; equal by value, not by text.
    #[test]
    fn structured_content_round_trips_and_compares_by_value() {
        #[derive(Serialize)]
        struct Typed<'a> {
            b: &'a str,
            a: [i64; 2],
        }
        let typed = StructuredContent::new(&Typed {
            b: "é\"",
            a: [1, 2],
        })
        .expect("serializes");
        assert_eq!(typed.json(), r#"{"b":"é\"","a":[1,2]}"#);
        let tree = json!({"a": [1, 2], "b": "é\""});
        assert_eq!(typed, StructuredContent::from(&tree));
        assert_eq!(typed, tree);
        assert_ne!(
            typed,
            StructuredContent::from(json!({"a": [2, 1], "b": "é\""}))
        );
        let written = serde_json::to_string(&typed).expect("writes");
        assert_eq!(written, typed.json());
        let read: StructuredContent = serde_json::from_str(&written).expect("reads from text");
        assert_eq!(read.to_value(), tree);
        let read: StructuredContent =
            serde_json::from_value(tree.clone()).expect("reads from a tree");
        assert_eq!(read.to_value(), tree);
        assert_eq!(read.parse::<Value>().expect("parses"), tree);
        assert_eq!(format!("{typed}"), typed.json());
    }

    /// What cannot be JSON is an error, not a panic.
    #[test]
    fn a_value_that_cannot_be_json_is_an_error() {
        let mut map = std::collections::BTreeMap::new();
        map.insert((1, 2), "a tuple key");
        assert!(StructuredContent::new(&map).is_err());
    }
}
