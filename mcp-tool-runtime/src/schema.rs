//! JSON Schemas from `schemars` types: `inputSchema` / `outputSchema` (object roots) and
//! the elicitation subset a form's `requestedSchema` must fit (flat primitive properties).
//! Every schema we publish comes from [`schema_for`], whose generator applies
//! [`StandardFormats`] once: no non-standard `format` (schemars' `uint32`, `double`, …)
//! reaches a strict validator; integer widths are `minimum`/`maximum` instead.

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::protocol::JsonObject;

mod formats;

pub use formats::{STANDARD_FORMATS, StandardFormats, non_standard_formats};

/// Why a type's schema is not in the elicitation subset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if path.is_empty() { String::new() } else { format!("property `{path}`: ") })]
pub struct SchemaError {
    /// The property at fault (empty for the root).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl SchemaError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        SchemaError {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

/// The JSON Schema (2020-12, subschemas inlined where possible) of `T` as an object, with
/// standard `format` values only ([`StandardFormats`]: integer widths become
/// `minimum`/`maximum`).
pub fn schema_for<T: JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .with_transform(StandardFormats)
        .into_generator()
        .into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(m) => m,
        // `true` (anything) or `false`: express as an empty object schema.
        _ => JsonObject::new(),
    }
}

/// The `inputSchema` of an argument type: root `"type": "object"` guaranteed.
pub fn input_schema<T: JsonSchema>() -> JsonObject {
    let mut s = schema_for::<T>();
    s.remove("$schema");
    if s.get("type").and_then(Value::as_str) != Some("object") {
        // Unit types, `()` and odd roots: an object without properties.
        let mut o = JsonObject::new();
        o.insert("type".into(), Value::String("object".into()));
        if let Some(t) = s.remove("title") {
            o.insert("title".into(), t);
        }
        return o;
    }
    s
}

/// The `outputSchema` of an output type: only when its root is an object.
pub fn output_schema<T: JsonSchema>() -> Option<JsonObject> {
    let mut s = schema_for::<T>();
    s.remove("$schema");
    (s.get("type").and_then(Value::as_str) == Some("object")).then_some(s)
}

/// The `requestedSchema` of a form elicitation for `T`, normalised into the elicitation
/// subset (flat object of primitive properties), or why `T` does not fit.
///
/// Made once per type and process (a type's schema does not change while it runs), then
/// copied: generating and normalising it was several percent of a round's instructions.
pub fn elicitation_schema<T: JsonSchema>() -> Result<JsonObject, SchemaError> {
    shared_elicitation_schema::<T>().map(|s| (*s).clone())
}

/// [`elicitation_schema`], shared: made once per type, then every form request of the type
/// holds the same schema (no copy per round).
pub(crate) fn shared_elicitation_schema<T: JsonSchema>()
-> Result<crate::protocol::SharedObject, SchemaError> {
    use std::collections::HashMap;
    use std::sync::{OnceLock, RwLock};
    // A type id is already a hash of the type, and the keys are the program's own types (no
    // one can choose them to collide): FxHash mixes it once instead of SipHash's rounds on
    // every form request.
    type Cache = RwLock<
        HashMap<
            std::any::TypeId,
            Result<crate::protocol::SharedObject, SchemaError>,
            rustc_hash::FxBuildHasher,
        >,
    >;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    // the type's id with its lifetimes erased (a schema does not depend on them), so `T`
    // need not be `'static`
    let key = typeid::of::<T>();
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(hit) = cache.read().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let made = check_elicitation_schema(&schema_for::<T>()).map(Into::into);
    if let Ok(mut c) = cache.write() {
        c.insert(key, made.clone());
    }
    made
}

/// Normalises a JSON Schema into the elicitation subset, or says why it does not fit.
///
/// Accepted properties: `string` (with `format` email/uri/date/date-time, `enum`, titled
/// `oneOf`, `minLength`, `maxLength`), `number`, `integer` (`minimum`, `maximum`),
/// `boolean`, and arrays of string enums. Nullable properties (`Option<T>`) become
/// non-required. `$schema`, `$defs` and unknown keywords are dropped.
pub fn check_elicitation_schema(schema: &JsonObject) -> Result<JsonObject, SchemaError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::new(
            "",
            "the root must be an object with named fields (a struct)",
        ));
    }
    let empty = JsonObject::new();
    let props = match schema.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return Err(SchemaError::new("", "`properties` must be an object")),
    };
    if let Some(ap) = schema.get("additionalProperties")
        && ap.is_object()
    {
        return Err(SchemaError::new(
            "",
            "maps / flattened extra fields are not allowed",
        ));
    }
    for k in ["allOf", "anyOf", "oneOf", "if", "patternProperties"] {
        if schema.contains_key(k) {
            return Err(SchemaError::new(
                "",
                format!("`{k}` is not allowed at the root"),
            ));
        }
    }
    let mut required: Vec<String> = match schema.get("required") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => return Err(SchemaError::new("", "`required` must be an array")),
    };
    let mut out_props = JsonObject::new();
    for (name, prop) in props {
        let (norm, nullable) = normalise_property(name, prop)?;
        if nullable {
            required.retain(|r| r != name);
        }
        out_props.insert(name.clone(), Value::Object(norm));
    }
    required.retain(|r| out_props.contains_key(r));
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::String("object".into()));
    out.insert("properties".into(), Value::Object(out_props));
    if !required.is_empty() {
        out.insert(
            "required".into(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Ok(out)
}

const STRING_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// Removes a `null` alternative; returns the remaining schema and whether it was nullable.
fn strip_null(path: &str, prop: &Value) -> Result<(JsonObject, bool), SchemaError> {
    let Value::Object(p) = prop else {
        return Err(SchemaError::new(path, "must be a primitive schema object"));
    };
    let mut p = p.clone();
    let mut nullable = false;
    if let Some(Value::Array(types)) = p.get("type") {
        let non_null: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        nullable = non_null.len() != types.len();
        match non_null.as_slice() {
            [one] => {
                let one = (*one).clone();
                p.insert("type".into(), one);
            }
            _ => return Err(SchemaError::new(path, "union types are not allowed")),
        }
    }
    for comb in ["anyOf", "oneOf"] {
        let Some(Value::Array(alts)) = p.get(comb) else {
            continue;
        };
        let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
        if !alts.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = alts.iter().filter(|v| !is_null(v)).cloned().collect();
        nullable = true;
        p.remove(comb);
        match rest.as_slice() {
            [Value::Object(inner)] => {
                for (k, v) in inner {
                    // The outer title/description win.
                    if !p.contains_key(k) {
                        p.insert(k.clone(), v.clone());
                    }
                }
            }
            _ => {
                p.insert(comb.into(), Value::Array(rest));
            }
        }
    }
    if let Some(Value::Array(vals)) = p.get_mut("enum")
        && vals.iter().any(Value::is_null)
    {
        vals.retain(|v| !v.is_null());
        nullable = true;
    }
    Ok((p, nullable))
}

/// `[{const, title}]` from `oneOf`/`anyOf` alternatives of string constants.
fn titled_options(path: &str, alts: &[Value]) -> Result<Vec<Value>, SchemaError> {
    alts.iter()
        .map(|alt| {
            let c = alt
                .get("const")
                .and_then(Value::as_str)
                .or_else(|| {
                    alt.get("enum")
                        .and_then(Value::as_array)
                        .and_then(|a| match a.as_slice() {
                            [Value::String(s)] => Some(s.as_str()),
                            _ => None,
                        })
                })
                .ok_or_else(|| {
                    SchemaError::new(
                        path,
                        "enum options must be string constants (unit variants)",
                    )
                })?;
            let title = alt
                .get("title")
                .and_then(Value::as_str)
                .or_else(|| alt.get("description").and_then(Value::as_str))
                .unwrap_or(c);
            Ok(json!({"const": c, "title": title}))
        })
        .collect()
}

fn string_enum(path: &str, v: &Value) -> Result<Vec<Value>, SchemaError> {
    let Value::Array(vals) = v else {
        return Err(SchemaError::new(path, "`enum` must be an array"));
    };
    if vals.iter().all(Value::is_string) && !vals.is_empty() {
        Ok(vals.clone())
    } else {
        Err(SchemaError::new(path, "enum values must be strings"))
    }
}

fn copy_keys(from: &JsonObject, to: &mut JsonObject, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k) {
            to.insert((*k).to_owned(), v.clone());
        }
    }
}

fn normalise_property(path: &str, prop: &Value) -> Result<(JsonObject, bool), SchemaError> {
    let (p, nullable) = strip_null(path, prop)?;
    if p.contains_key("$ref") {
        return Err(SchemaError::new(
            path,
            "references (recursive or nested types) are not allowed",
        ));
    }
    let ty = match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(SchemaError::new(path, "`type` must be a string")),
        // A documented unit enum comes out as `oneOf` of constants without `type`.
        None if p.contains_key("oneOf") || p.contains_key("enum") => "string".to_owned(),
        None => {
            return Err(SchemaError::new(
                path,
                "must be a string, number, integer, boolean or enum",
            ));
        }
    };
    let mut out = JsonObject::new();
    out.insert("type".into(), Value::String(ty.clone()));
    copy_keys(&p, &mut out, &["title", "description"]);
    match ty.as_str() {
        "string" => {
            copy_keys(&p, &mut out, &["minLength", "maxLength"]);
            if let Some(Value::String(f)) = p.get("format")
                && STRING_FORMATS.contains(&f.as_str())
            {
                out.insert("format".into(), Value::String(f.clone()));
            }
            if let Some(e) = p.get("enum") {
                out.insert("enum".into(), Value::Array(string_enum(path, e)?));
                copy_keys(&p, &mut out, &["enumNames"]);
            } else if let Some(Value::Array(alts)) = p.get("oneOf").or_else(|| p.get("anyOf")) {
                out.insert("oneOf".into(), Value::Array(titled_options(path, alts)?));
            } else if let Some(c) = p.get("const") {
                out.insert(
                    "enum".into(),
                    Value::Array(string_enum(path, &Value::Array(vec![c.clone()]))?),
                );
            }
            if let Some(d) = p.get("default")
                && d.is_string()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "number" | "integer" => {
            copy_keys(&p, &mut out, &["minimum", "maximum"]);
            if let Some(d) = p.get("default")
                && d.is_number()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "boolean" => {
            if let Some(d) = p.get("default")
                && d.is_boolean()
            {
                out.insert("default".into(), d.clone());
            }
        }
        "array" => {
            let items = match p.get("items") {
                Some(Value::Object(i)) => i,
                _ => {
                    return Err(SchemaError::new(
                        path,
                        "arrays must list string enum items (multi-select)",
                    ));
                }
            };
            let mut out_items = JsonObject::new();
            if let Some(e) = items.get("enum") {
                out_items.insert("type".into(), Value::String("string".into()));
                out_items.insert("enum".into(), Value::Array(string_enum(path, e)?));
            } else if let Some(Value::Array(alts)) =
                items.get("anyOf").or_else(|| items.get("oneOf"))
            {
                out_items.insert("anyOf".into(), Value::Array(titled_options(path, alts)?));
            } else {
                return Err(SchemaError::new(
                    path,
                    "arrays are only allowed as multi-select string enums",
                ));
            }
            out.insert("items".into(), Value::Object(out_items));
            copy_keys(&p, &mut out, &["minItems", "maxItems"]);
            if let Some(d) = p.get("default")
                && d.as_array().is_some_and(|a| a.iter().all(Value::is_string))
            {
                out.insert("default".into(), d.clone());
            }
        }
        "object" => {
            return Err(SchemaError::new(
                path,
                "nested objects are not allowed (flat primitive fields only)",
            ));
        }
        other => {
            return Err(SchemaError::new(
                path,
                format!("type `{other}` is not allowed"),
            ));
        }
    }
    Ok((out, nullable))
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    /// The cache keyed by type id gives each type its own schema,
    /// made once: the same type shares one object, two types never share one.
    #[test]
    fn each_type_has_its_own_cached_schema() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct A {
            a: String,
        }
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct B {
            b: bool,
        }
        let a1 = shared_elicitation_schema::<A>().expect("in the subset");
        let b = shared_elicitation_schema::<B>().expect("in the subset");
        let a2 = shared_elicitation_schema::<A>().expect("in the subset");
        assert!(std::ptr::eq::<JsonObject>(&*a1, &*a2));
        assert!(!std::ptr::eq::<JsonObject>(&*a1, &*b));
        assert!(a1["properties"].get("a").is_some() && a1["properties"].get("b").is_none());
        assert!(b["properties"].get("b").is_some());
    }
}
