//! An object key read borrowed from the JSON text: shared by the readers of the typed request
//! path (`text`) and the hand-written `Deserialize` impls of the protocol types (`meta`,
//! `input`), below both.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer;
use serde::de::Visitor;

/// An object key, borrowed from the text unless it holds escapes (a `Cow<str>` would be read
/// as an owned `String` every time).
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

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
