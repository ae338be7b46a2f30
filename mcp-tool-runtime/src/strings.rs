//! Typed values from string maps: a prompt's arguments and a URI template's variables arrive
//! as strings (`{"id": "123"}`) and are deserialized into the author's type, each string
//! parsed into the field's type (`id: u32`, `verbose: bool`, an enum of unit variants,
//! `Option<T>` for what may be absent).

use serde::de::value::{Error, MapDeserializer};
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde_json::Value;

use crate::error::ToolError;

/// Deserializes `T` from an object of strings; a mismatch is
/// [`ToolError::InvalidArguments`] naming the field.
pub fn from_strings<T: DeserializeOwned>(value: &Value) -> Result<T, ToolError> {
    let Value::Object(map) = value else {
        return Err(ToolError::InvalidArguments {
            field: String::new(),
            message: "expected an object of strings".into(),
        });
    };
    let mut pairs = Vec::with_capacity(map.len());
    for (k, v) in map {
        match v {
            Value::String(s) => pairs.push((k.as_str(), Str(s.as_str()))),
            _ => {
                return Err(ToolError::InvalidArguments {
                    field: k.clone(),
                    message: "expected a string".into(),
                });
            }
        }
    }
    let de = MapDeserializer::<_, Error>::new(pairs.into_iter());
    serde_path_to_error::deserialize::<_, T>(de).map_err(crate::error::invalid_arguments)
}

/// One string value, parsed into whatever the visitor asks for.
#[derive(Clone, Copy)]
struct Str<'a>(&'a str);

impl<'de, 'a> IntoDeserializer<'de, Error> for Str<'a> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

macro_rules! parse_as {
    ($($method:ident => $visit:ident: $t:ty),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let v: $t = self.0.trim().parse().map_err(|_| {
                de::Error::invalid_value(de::Unexpected::Str(self.0), &stringify!($t))
            })?;
            visitor.$visit(v)
        }
    )*};
}

impl<'de, 'a> Deserializer<'de> for Str<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    parse_as! {
        deserialize_bool => visit_bool: bool,
        deserialize_i8 => visit_i8: i8,
        deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32,
        deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128,
        deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64,
        deserialize_u128 => visit_u128: u128,
        deserialize_f32 => visit_f32: f32,
        deserialize_f64 => visit_f64: f64,
        deserialize_char => visit_char: char,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Vars {
        id: u32,
        name: String,
        verbose: Option<bool>,
        mode: Option<Mode>,
    }

    #[test]
    fn strings_become_typed_fields() {
        let v: Vars = from_strings(&json!({"id": "123", "name": "x", "mode": "slow"})).unwrap();
        assert_eq!(
            v,
            Vars {
                id: 123,
                name: "x".into(),
                verbose: None,
                mode: Some(Mode::Slow)
            }
        );
        let e = from_strings::<Vars>(&json!({"id": "abc", "name": "x"})).unwrap_err();
        assert!(
            matches!(e, ToolError::InvalidArguments { ref field, .. } if field == "id"),
            "{e:?}"
        );
        let e = from_strings::<Vars>(&json!({"id": "1"})).unwrap_err();
        assert!(
            matches!(e, ToolError::InvalidArguments { ref field, .. } if field == "name"),
            "{e:?}"
        );
        let e = from_strings::<Vars>(&json!({"id": 1, "name": "x"})).unwrap_err();
        assert!(
            matches!(e, ToolError::InvalidArguments { ref field, .. } if field == "id"),
            "{e:?}"
        );
        let v: Vars = from_strings(&json!({"id": "7", "name": "y", "verbose": "true"})).unwrap();
        assert_eq!(v.verbose, Some(true));
    }
}
