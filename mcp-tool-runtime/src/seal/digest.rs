//! The digest of a call's arguments that a sealed state is bound to.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::protocol::needs_escape;

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

/// A [`Sink`] as an `io::Write`, for what serde_json writes (escaped strings, numbers)
/// straight into it.
struct Writer<'a, S: Sink>(&'a mut S);

impl<S: Sink> std::io::Write for Writer<'_, S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.put(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `s` as a JSON string, as serde_json writes it: between quotes as it is when nothing in
/// it needs escaping (the usual argument), else escaped by serde_json, written straight
/// into `out` either way (no string made per member).
fn write_string(out: &mut impl Sink, s: &str) {
    if !needs_escape(s) {
        out.put(b"\"");
        out.put(s.as_bytes());
        out.put(b"\"");
    } else {
        // writing a &str as JSON into a sink that cannot fail does not fail
        let _ = serde_json::to_writer(Writer(out), s);
    }
}

fn write_canonical(out: &mut impl Sink, v: &Value) {
    match v {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        // a number always serializes (as its `Display`, which serde_json's writer is)
        Value::Number(n) => {
            let _ = serde_json::to_writer(Writer(out), n);
        }
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
            out.put(b"{");
            // A map that iterates in byte order (serde_json's default `BTreeMap` does, and
            // any map of one member) is written as it iterates; one that keeps insertion
            // order (serde_json's `preserve_order`) is sorted first.
            let sorted = map
                .keys()
                .zip(map.keys().skip(1))
                .all(|(a, b)| a.as_bytes() <= b.as_bytes());
            if sorted {
                write_members(out, map.iter());
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                write_members(out, entries.into_iter());
            }
            out.put(b"}");
        }
    }
}

/// An object's members, in the order given, separated by commas.
fn write_members<'v>(out: &mut impl Sink, members: impl Iterator<Item = (&'v String, &'v Value)>) {
    for (i, (k, item)) in members.enumerate() {
        if i > 0 {
            out.put(b",");
        }
        write_string(out, k);
        out.put(b":");
        write_canonical(out, item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The canonical text is serde_json's compact text of the same value with its keys
    /// sorted by bytes: strings that need escaping or not (quotes, backslashes, control
    /// characters, non-ASCII), numbers of each kind, nested objects and arrays.
    #[test]
    fn canonical_text_is_serde_jsons_with_sorted_keys() {
        let v = serde_json::json!({
            "z": ["plain", "quote \" back \\ nl \n bell \u{7}", "é🦀", ""],
            "a": {"y": -3, "x": 18446744073709551615u64, "w": 0.1, "v": -1.5e300},
            "é": null, "B": [true, false, {}], "": []
        });
        fn sort(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut e: Vec<_> = m.iter().collect();
                    e.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    Value::Object(e.into_iter().map(|(k, v)| (k.clone(), sort(v))).collect())
                }
                Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
                other => other.clone(),
            }
        }
        let sorted = sort(&v);
        assert_eq!(
            canonical_json(&v),
            serde_json::to_string(&sorted).expect("writes")
        );
        assert_eq!(
            args_digest(&v),
            <[u8; 32]>::from(Sha256::digest(canonical_json(&v).as_bytes()))
        );
    }
}
