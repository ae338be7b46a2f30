//! The schemars transform that leaves only standard `format` values in the schemas we
//! publish: schemars' integer widths (`uint8` … `uint128`, `int8` … `int128`, `uint`, `int`)
//! become `minimum`/`maximum`, and its other non-standard formats (`float`, `double`, `ip`, …)
//! are dropped, so strict validators (ajv in strict mode) warn about nothing.

use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::{Number, Value};

/// The formats of JSON Schema 2020-12's format vocabulary, kept as they are.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every `format` value in `schema` (at any depth) that is not one of
/// [`STANDARD_FORMATS`], with the path to it (`/properties/age`): what a strict JSON Schema
/// 2020-12 validator would warn about. Empty for every schema this crate publishes.
///
/// ```
/// use mcp_tool_runtime::manual::non_standard_formats;
/// let schema = serde_json::json!({"properties": {"n": {"type": "integer", "format": "uint8"}}});
/// assert_eq!(non_standard_formats(&schema), [("/properties/n".to_owned(), "uint8".to_owned())]);
/// ```
pub fn non_standard_formats(schema: &Value) -> Vec<(String, String)> {
    fn walk(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x {
                        Value::String(f) if k == "format" => {
                            if !STANDARD_FORMATS.contains(&f.as_str()) {
                                out.push((path.to_owned(), f.clone()));
                            }
                        }
                        _ => walk(x, &format!("{path}/{k}"), out),
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

/// Applied once, by the generator of [`schema_for`](super::schema_for), to every subschema.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardFormats;

impl Transform for StandardFormats {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(obj) = schema.as_object_mut()
            && let Some(Value::String(f)) = obj.get("format")
            && !STANDARD_FORMATS.contains(&f.as_str())
        {
            let range = integer_range(f);
            obj.remove("format");
            if let Some((lo, hi)) = range {
                if let Some(lo) = lo {
                    tighten(obj, "minimum", lo, |new, old| new > old);
                }
                if let Some(hi) = hi {
                    tighten(obj, "maximum", hi, |new, old| new < old);
                }
            }
        }
        transform_subschemas(self, schema);
    }
}

/// The bounds of one of schemars' integer formats (`None` when not one); a bound that JSON
/// numbers cannot hold exactly (128 bits) is left out.
fn integer_range(format: &str) -> Option<(Option<Number>, Option<Number>)> {
    let (lo, hi): (i128, i128) = match format {
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        "uint" => (0, usize::MAX as i128),
        "uint128" => (0, i128::MAX),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "int" => (isize::MIN as i128, isize::MAX as i128),
        "int128" => (i128::MIN, i128::MAX),
        _ => return None,
    };
    Some((number(lo), number(hi)))
}

/// `n` as a JSON number when it fits 64 bits (signed or not).
fn number(n: i128) -> Option<Number> {
    if let Ok(i) = i64::try_from(n) {
        Some(i.into())
    } else if let Ok(u) = u64::try_from(n) {
        Some(u.into())
    } else {
        None
    }
}

/// Sets `key` to `bound` unless the schema already has a bound at least as tight.
fn tighten(
    obj: &mut serde_json::Map<String, Value>,
    key: &str,
    bound: Number,
    tighter: impl Fn(f64, f64) -> bool,
) {
    let keep = match obj.get(key).and_then(Value::as_number) {
        Some(old) => !tighter(as_f64(&bound), as_f64(old)),
        None => false,
    };
    if !keep {
        obj.insert(key.into(), Value::Number(bound));
    }
}

fn as_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}
