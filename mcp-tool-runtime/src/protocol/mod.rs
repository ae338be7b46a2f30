//! Serde model of MCP protocol revision 2026-07-28: the JSON-RPC envelope, request `_meta`,
//! results, input requests and their answers, tools, prompts, resources, completion,
//! `server/discover`, content blocks and the Skills extension.
//!
//! Types tolerate unknown fields wherever the schema allows extension: most structs keep
//! unrecognised members in an `extra` map so that they round-trip.

/// `From<T> for $enum` for each `$variant(T)` listed: the value wrapped in that variant.
macro_rules! variant_from {
    ($enum:ident: $($variant:ident($t:ty)),+ $(,)?) => {$(
        impl From<$t> for $enum {
            fn from(v: $t) -> Self {
                $enum::$variant(v)
            }
        }
    )+};
}

mod answer;
#[macro_use]
mod cacheable;
mod content;
mod discover;
pub mod errors;
pub mod headers;
pub(crate) mod incoming;
mod input;
mod jsonrpc;
mod logging;
mod meta;
mod prompts;
mod resources;
mod skills;
mod structured;
pub(crate) mod text;
mod tools;

pub use answer::{Answer, Outcome, Reply, Written};
pub(crate) use cacheable::Listed;
pub use content::*;
pub use discover::*;
pub use input::*;
pub use jsonrpc::*;
pub use logging::*;
pub use meta::*;
pub use prompts::*;
pub use resources::*;
pub use skills::*;
pub use structured::StructuredContent;
pub use tools::*;

/// A JSON object (`{ [key: string]: unknown }`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// `v` as a JSON value (`null` in the impossible case that it does not serialize: every
/// protocol type does).
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Whether JSON escapes anything in `text` (a control character, a quote, a backslash); if
/// not, `text` between quotes is its JSON string. The check runs over every byte without
/// stopping early, which the compiler vectorizes.
pub(crate) fn needs_escape(text: &str) -> bool {
    text.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}
