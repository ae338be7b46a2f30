//! The digest of a call's arguments that a sealed state is bound to.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
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

/// [`args_digest`] of the arguments' JSON text, without building their tree: when every
/// object in it has its keys in byte order already (one member, or a client that sorts),
/// the canonical form is written into the hash as the text is read; otherwise (keys out of
/// order, or a key twice) each object's members are sorted in place, as the offsets of
/// their keys in the text (4 bytes a member, less than the member's own text), and each
/// member's value is read again from the text. The same digest either way; no tree is
/// built, and what is held besides the text is less than the text.
///
/// # Errors
/// When `args` is nested deeper than a tree is built (128 levels, as serde_json's), or is
/// longer than 4 GiB.
pub fn raw_args_digest(args: &RawValue) -> Result<[u8; 32], serde_json::Error> {
    digest_text(args).map(|(digest, _)| digest)
}

/// How deep the arguments may nest (serde_json's recursion limit, which bounds a tree).
const MAX_DEPTH: usize = 127;

/// [`raw_args_digest`], and when an object of the arguments has a key twice, their canonical
/// text (each such key once, the last): what the code then takes, so that a key sent twice
/// counts once, the last, as everywhere a message is read (a typed parse of the text as
/// sent would refuse it as a duplicate field). That text is at most as long as the
/// arguments' own (refused otherwise: numbers written in another form can lengthen it).
pub(crate) fn digest_text(
    args: &RawValue,
) -> Result<([u8; 32], Option<Box<RawValue>>), serde_json::Error> {
    let mut h = Sha256::new();
    let mut de = serde_json::Deserializer::from_str(args.get());
    if Canonical(&mut h).deserialize(&mut de).is_ok() && de.end().is_ok() {
        return Ok((h.finalize().into(), None));
    }
    let text = args.get();
    let mut h = Sha256::new();
    let mut twice = false;
    sorted(&mut h, text, 0, &mut twice)?;
    let digest = h.finalize().into();
    if !twice {
        return Ok((digest, None));
    }
    let mut out = Capped {
        buf: Vec::with_capacity(text.len().min(64 * 1024)),
        cap: text.len().max(64),
        over: false,
    };
    sorted(&mut out, text, 0, &mut twice)?;
    if out.over {
        return Err(serde_json::Error::custom(
            "the arguments repeat a key and are longer written canonically",
        ));
    }
    let canonical = String::from_utf8(out.buf).map_err(serde_json::Error::custom)?;
    Ok((digest, Some(RawValue::from_string(canonical)?)))
}

/// Writes the canonical form of the one JSON value at the start of `text` into `out`, its
/// objects' members sorted in place ([`Sorted`]); `depth` containers enclose it. Sets
/// `twice` when an object has a key twice.
fn sorted(
    out: &mut impl Sink,
    text: &str,
    depth: usize,
    twice: &mut bool,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    Sorted {
        out,
        base: text,
        depth,
        twice,
    }
    .deserialize(&mut de)
}

/// Writes canonical JSON like [`Canonical`], sorting each object's members by their keys'
/// offsets in `base` (the text this reader reads) and reading each member's value again
/// from there.
struct Sorted<'s, 't, S> {
    out: &'s mut S,
    base: &'t str,
    depth: usize,
    twice: &'s mut bool,
}

impl<'de, S: Sink> DeserializeSeed<'de> for Sorted<'_, '_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// The key at `offset` of `base` (where a key's opening quote is).
fn key_at(base: &str, offset: u32) -> Result<Cow<'_, str>, serde_json::Error> {
    let rest = base.get(offset as usize..).unwrap_or_default();
    Key.deserialize(&mut serde_json::Deserializer::from_str(rest))
}

/// Where the value of the member whose key is at `offset` of `base` starts.
fn value_at(base: &str, offset: u32) -> Result<usize, serde_json::Error> {
    let rest = base.get(offset as usize..).unwrap_or_default();
    let key: &RawValue = Deserialize::deserialize(&mut serde_json::Deserializer::from_str(rest))?;
    let after = rest
        .get(key.get().len()..)
        .unwrap_or_default()
        .trim_ascii_start()
        .strip_prefix(':')
        .ok_or_else(|| serde_json::Error::custom("a member without a value"))?
        .trim_ascii_start();
    Ok(base.len() - after.len())
}

impl<'de, S: Sink> Visitor<'de> for Sorted<'_, '_, S> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Canonical(self.out).visit_unit()
    }
    fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<(), E> {
        Canonical(self.out).visit_bool(b)
    }
    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<(), E> {
        Canonical(self.out).visit_u64(n)
    }
    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<(), E> {
        Canonical(self.out).visit_i64(n)
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<(), E> {
        Canonical(self.out).visit_f64(n)
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        Canonical(self.out).visit_str(s)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(A::Error::custom("recursion limit exceeded"));
        }
        self.out.put(b"[");
        let mut lead: &'static [u8] = b"";
        while seq
            .next_element_seed(SortedElement(
                Sorted {
                    out: &mut *self.out,
                    base: self.base,
                    depth: self.depth + 1,
                    twice: &mut *self.twice,
                },
                lead,
            ))?
            .is_some()
        {
            lead = b",";
        }
        self.out.put(b"]");
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.depth >= MAX_DEPTH {
            return Err(A::Error::custom("recursion limit exceeded"));
        }
        let base = self.base;
        let mut keys: Vec<u32> = Vec::new();
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let at = (key.get().as_ptr() as usize).wrapping_sub(base.as_ptr() as usize);
            if at >= base.len() {
                return Err(A::Error::custom("a key outside its text"));
            }
            keys.push(u32::try_from(at).map_err(A::Error::custom)?);
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        // stable: of a key sent twice, the last stays last
        let mut failed = None;
        keys.sort_by(|a, b| match (key_at(base, *a), key_at(base, *b)) {
            (Ok(a), Ok(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Err(e), _) | (_, Err(e)) => {
                failed.get_or_insert(e);
                std::cmp::Ordering::Equal
            }
        });
        if let Some(e) = failed {
            return Err(A::Error::custom(e));
        }
        self.out.put(b"{");
        let mut first = true;
        for (i, at) in keys.iter().enumerate() {
            let key = key_at(base, *at).map_err(A::Error::custom)?;
            let next = keys.get(i + 1).map(|next| key_at(base, *next)).transpose();
            if next
                .map_err(A::Error::custom)?
                .is_some_and(|next| next == key)
            {
                *self.twice = true;
                continue;
            }
            if !first {
                self.out.put(b",");
            }
            first = false;
            write_string(self.out, &key);
            self.out.put(b":");
            let value = value_at(base, *at).map_err(A::Error::custom)?;
            sorted(
                &mut *self.out,
                base.get(value..).unwrap_or_default(),
                self.depth + 1,
                &mut *self.twice,
            )
            .map_err(A::Error::custom)?;
        }
        self.out.put(b"}");
        Ok(())
    }
}

/// An array's element for [`Sorted`]: `lead`, then the element.
struct SortedElement<'s, 't, S>(Sorted<'s, 't, S>, &'static [u8]);

impl<'de, S: Sink> DeserializeSeed<'de> for SortedElement<'_, '_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.out.put(self.1);
        d.deserialize_any(self.0)
    }
}

/// A [`Sink`] of text that stops at `cap` bytes (then `over`).
struct Capped {
    buf: Vec<u8>,
    cap: usize,
    over: bool,
}

impl Sink for Capped {
    fn put(&mut self, bytes: &[u8]) {
        if self.buf.len() + bytes.len() > self.cap {
            self.over = true;
        } else if !self.over {
            self.buf.extend_from_slice(bytes);
        }
    }
}

/// Writes the canonical form of the JSON it reads into its sink; fails on an object whose
/// keys are not in strictly increasing byte order (the caller then sorts them in place,
/// [`Sorted`]).
struct Canonical<'s, S>(&'s mut S);

/// Why [`Canonical`] stopped: an object's keys out of order.
const UNSORTED: &str = "object keys out of order";

impl<'de, S: Sink> DeserializeSeed<'de> for Canonical<'_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: Sink> Visitor<'de> for Canonical<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.put(b"null");
        Ok(())
    }
    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.put(if b { b"true" } else { b"false" });
        Ok(())
    }
    // numbers as a tree's `Number` of the same kind writes them
    fn visit_u64<E>(self, n: u64) -> Result<(), E> {
        let _ = serde_json::to_writer(Writer(self.0), &n);
        Ok(())
    }
    fn visit_i64<E>(self, n: i64) -> Result<(), E> {
        let _ = serde_json::to_writer(Writer(self.0), &n);
        Ok(())
    }
    fn visit_f64<E>(self, n: f64) -> Result<(), E> {
        let _ = serde_json::to_writer(Writer(self.0), &n);
        Ok(())
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        write_string(self.0, s);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.put(b"[");
        let mut lead: &'static [u8] = b"";
        // the comma is written by the element's seed: only once the element exists
        while seq
            .next_element_seed(Element(&mut *self.0, lead))?
            .is_some()
        {
            lead = b",";
        }
        self.0.put(b"]");
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.put(b"{");
        let mut last: Option<Cow<'de, str>> = None;
        while let Some(key) = map.next_key_seed(Key)? {
            if let Some(prev) = &last {
                if prev.as_bytes() >= key.as_bytes() {
                    return Err(A::Error::custom(UNSORTED));
                }
                self.0.put(b",");
            }
            write_string(self.0, &key);
            self.0.put(b":");
            map.next_value_seed(Canonical(&mut *self.0))?;
            last = Some(key);
        }
        self.0.put(b"}");
        Ok(())
    }
}

/// An array's element: `lead` (a comma after the first), then the element's canonical form.
struct Element<'s, S>(&'s mut S, &'static [u8]);

impl<'de, S: Sink> DeserializeSeed<'de> for Element<'_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.put(self.1);
        d.deserialize_any(Canonical(self.0))
    }
}

/// An object's key, borrowed from the text when it has no escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
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
    if !crate::protocol::needs_escape(s) {
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

    /// The digest taken from the text is the tree's: keys in order or not (at any depth),
    /// a key twice (the last counts, as in a tree), whitespace, escapes, every kind of
    /// number; and text nested deeper than a tree is built is refused, not digested.
    #[test]
    fn the_digest_of_the_text_is_the_digest_of_its_tree() {
        let texts = [
            r#"{}"#,
            r#"{"location":"Paris"}"#,
            r#" { "a" : 1 , "b" : [ 1 , 2 ] } "#,
            r#"{"b":1,"a":2}"#,
            r#"{"a":{"d":1,"c":{"f":[{"z":1,"y":2}],"e":null}},"b":true}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"k":"quote \" back \\ nl \n tab \t \u0007 \u00e9 \ud83e\udd80 \/"}"#,
            r#"{"\u0062":1,"a":2}"#,
            r#"{"n":[0,-0,1,-1,18446744073709551615,-9223372036854775808,0.1,-1.5e300,1e2,1E-2,2.0]}"#,
            r#"{"é":1,"e":2,"":3,"B":4}"#,
            r#"[1,[2,[3,{"b":1,"a":[]}]],{}]"#,
            r#""text""#,
            r#"null"#,
            r#" { "b" : { "d" : 1 , "c" : [ 2 , { "f" : 1 , "e" : 0 } ] } , "a" : [ { "z" : 1 , "y" : 2 } ] } "#,
            r#"{"b":{"x":1,"x":{"k":2,"j":[3]}},"a":1,"b":{"y":0,"x":5,"x":6}}"#,
            r#"{"\u0061":1,"a":2,"b":0,"\u0062":[{"q":1,"p":2}]}"#,
            r#"[{"b":1,"a":1},{"b":2,"a":2}]"#,
        ];
        for text in texts {
            let raw: &RawValue = serde_json::from_str(text).expect("valid JSON");
            let tree: Value = serde_json::from_str(text).expect("valid JSON");
            assert_eq!(
                raw_args_digest(raw).expect("digested"),
                args_digest(&tree),
                "{text}"
            );
        }
        // a key sent twice: the code takes the canonical text, the key once, the last
        let twice: &RawValue = serde_json::from_str(r#"{"b":[1],"a":1,"a":2}"#).expect("JSON");
        let (_, text) = digest_text(twice).expect("digested");
        assert_eq!(text.expect("a tree's text").get(), r#"{"a":2,"b":[1]}"#);
        let nested: &RawValue =
            serde_json::from_str(r#"{"c":[{"y":1,"x":0,"y":2}],"a":{"k":1}}"#).expect("JSON");
        let (_, text) = digest_text(nested).expect("digested");
        assert_eq!(
            text.expect("a text").get(),
            r#"{"a":{"k":1},"c":[{"x":0,"y":2}]}"#
        );
        // keys out of order alone: the code takes the text as sent
        let unsorted: &RawValue = serde_json::from_str(r#"{"b":1,"a":2}"#).expect("JSON");
        assert!(digest_text(unsorted).expect("digested").1.is_none());
        let sorted: &RawValue = serde_json::from_str(r#"{"a":1,"b":2}"#).expect("JSON");
        assert!(digest_text(sorted).expect("digested").1.is_none());
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let raw: &RawValue = serde_json::from_str(&deep).expect("a raw value is not built");
        assert!(raw_args_digest(raw).is_err());
        // out of order and deep, through objects (each read by a reader of its own)
        for depth in [100, 126, 127, 128, 200] {
            let deep = format!("{}1{}", r#"{"b":0,"a":"#.repeat(depth), "}".repeat(depth));
            let raw: &RawValue = serde_json::from_str(&deep).expect("a raw value is not built");
            let tree = serde_json::from_str::<Value>(&deep);
            match (raw_args_digest(raw), tree) {
                (Ok(d), Ok(t)) => assert_eq!(d, args_digest(&t), "{depth}"),
                (Err(_), Err(_)) => {}
                (d, t) => panic!("{depth}: text {d:?}, tree {t:?}"),
            }
        }
    }
}
