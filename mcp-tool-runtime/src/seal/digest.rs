//! The digest of a call's arguments that a sealed state is bound to.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of the canonical JSON form of `args`.
///
/// Canonical form: no whitespace; object keys sorted by their UTF-8 bytes, at every
/// depth (so the order in which a client sends keys does not matter); arrays keep
/// their order; strings escaped and numbers printed exactly as `serde_json` prints
/// them (so `1` and `1.0` differ, as they do on the wire).
pub fn args_digest(args: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    write_canonical(&mut h, args);
    h.finalize().into()
}

/// The canonical JSON text that [`args_digest`] hashes (for debugging and tests).
pub fn canonical_json(args: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(&mut out, args);
    // Everything written is valid UTF-8 (JSON text produced by serde_json).
    String::from_utf8(out).unwrap_or_default()
}

/// Where canonical JSON goes: a hasher or a buffer.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

fn write_string(out: &mut impl Sink, s: &str) {
    // Serialising a &str to JSON cannot fail.
    let quoted = serde_json::to_string(s).unwrap_or_default();
    out.put(quoted.as_bytes());
}

fn write_canonical(out: &mut impl Sink, v: &Value) {
    match v {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => out.put(n.to_string().as_bytes()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_canonical(out, item);
            }
            out.put(b"]");
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.put(b"{");
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_string(out, k);
                out.put(b":");
                write_canonical(out, item);
            }
            out.put(b"}");
        }
    }
}
