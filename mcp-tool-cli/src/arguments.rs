//! A tool's arguments asked field by field from its `inputSchema`, with the prompts and the
//! validation of elicitation forms ([`Console`]).
//!
//! An `inputSchema` is richer than the flat subset allowed for forms: [`form_field`] first
//! brings each property to a form field — a local `$ref` (`#/$defs/…`) is resolved, a
//! nullable type (`["string", "null"]`, `anyOf: [X, {"type": "null"}]`) becomes `X`, a lone
//! `allOf: [X]` becomes `X` — keeping the property's own `title`, `description` and
//! `default`. Arrays of strings are asked comma-separated (or as a JSON array), objects and
//! other shapes as JSON. An optional field left empty is left out, so the server applies its
//! own default.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::interactive::Console;

/// How deep `$ref`s are followed before giving up (a schema that refers to itself).
const MAX_REF_DEPTH: usize = 8;

/// The form field for the property schema `property` of the tool schema `root`.
pub fn form_field(root: &Value, property: &Value) -> Value {
    let mut field = resolve(root, property, 0);
    // The property's own words win over the referenced definition's.
    if let (Value::Object(out), Value::Object(own)) = (&mut field, property) {
        for key in ["title", "description", "default"] {
            if let Some(v) = own.get(key) {
                out.insert(key.to_owned(), v.clone());
            }
        }
    }
    field
}

fn resolve(root: &Value, schema: &Value, depth: usize) -> Value {
    if depth > MAX_REF_DEPTH {
        return schema.clone();
    }
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if let Some(target) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        let mut out = resolve(root, target, depth + 1);
        merge_siblings(&mut out, obj, "$ref");
        return out;
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = obj.get(combinator) {
            let non_null: Vec<&Value> = alts.iter().filter(|a| !is_null_type(a)).collect();
            // `oneOf` of `const`s is a titled enum, already a form field.
            if non_null.len() == 1 && non_null.len() < alts.len() {
                let mut out = resolve(root, non_null[0], depth + 1);
                merge_siblings(&mut out, obj, combinator);
                return out;
            }
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf")
        && all.len() == 1
    {
        let mut out = resolve(root, &all[0], depth + 1);
        merge_siblings(&mut out, obj, "allOf");
        return out;
    }
    let mut out = obj.clone();
    if let Some(Value::Array(types)) = obj.get("type") {
        let non_null: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if let [only] = non_null.as_slice() {
            out.insert("type".into(), (*only).clone());
        }
    }
    Value::Object(out)
}

fn is_null_type(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Copies the keys beside `skip` in `from` into `out` (where `out` is an object).
fn merge_siblings(out: &mut Value, from: &Map<String, Value>, skip: &str) {
    if let Value::Object(out) = out {
        for (k, v) in from {
            if k != skip {
                out.insert(k.clone(), v.clone());
            }
        }
    }
}

impl<R: BufRead, W: Write> Console<R, W> {
    /// Asks the arguments of tool `tool` field by field from its `inputSchema` (properties in
    /// key order, required ones marked by the hints, each validated and asked again until
    /// valid). A schema without properties asks nothing and gives `{}`. `None` at end of
    /// input.
    pub fn ask_arguments(&mut self, tool: &str, schema: &Value) -> Option<Map<String, Value>> {
        let mut args = Map::new();
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Some(args);
        };
        if props.is_empty() {
            return Some(args);
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(
            self.out(),
            "── arguments of `{tool}` (empty: the default, or left out when optional)"
        );
        for (name, property) in props {
            let field = form_field(schema, property);
            let is_required = required.contains(&name.as_str());
            match self.prompt_field(name, &field, is_required, true) {
                Ok(Some(v)) => {
                    args.insert(name.clone(), v);
                }
                Ok(None) => {}
                Err(_) => return None,
            }
        }
        Some(args)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::interactive::{AnswerConfig, SamplingResponder};

    fn console(input: &str) -> Console<&[u8], Vec<u8>> {
        let config = AnswerConfig {
            elicitation: true,
            sampling: Some(SamplingResponder::Echo),
            roots: vec![],
        };
        Console::new(input.as_bytes(), Vec::new(), config)
    }

    /// The shapes schemars gives `#[mcp_tool]` arguments: a nullable string with a `null`
    /// default, a bounded integer, a boolean with a default, an enum behind a `$ref`, a
    /// list of strings, a nested object.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "audience": {"$ref": "#/$defs/Audience", "description": "Who reads it."},
                "branches": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "critique": {"type": "boolean", "default": false},
                "limits": {"type": "object", "properties": {"max": {"type": "integer"}}},
                "n": {"type": "integer", "minimum": 0, "maximum": 100},
                "purpose": {"type": ["string", "null"], "default": null},
                "size": {"anyOf": [{"$ref": "#/$defs/Size"}, {"type": "null"}]}
            },
            "required": ["audience", "branches", "n"],
            "$defs": {
                "Audience": {"type": "string", "enum": ["developer", "manager"]},
                "Size": {"type": "string", "oneOf": [
                    {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}
                ]}
            }
        })
    }

    #[test]
    fn arguments_are_asked_per_field_and_validated_like_forms() {
        // Key order: audience, branches, critique, limits, n, purpose, size.
        let input = "ceo\n2\na, b,c,d\nmain, dev\n\n[1]\n{\"max\": 3}\n-1\nmany\n42\n\nLarge\n";
        let mut c = console(input);
        let args = c.ask_arguments("t", &schema()).unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"audience": "manager", "branches": ["main", "dev"],
                   "limits": {"max": 3}, "n": 42, "size": "l"})
        );
        let shown = String::from_utf8(c.out().clone()).unwrap();
        assert!(shown.contains("── arguments of `t`"), "{shown}");
        assert!(
            shown.contains("\"ceo\" is not one of the options"),
            "{shown}"
        );
        assert!(shown.contains("choose at most 3"), "{shown}");
        assert!(shown.contains("not a JSON object"), "{shown}");
        assert!(shown.contains("must be at least 0"), "{shown}");
        assert!(shown.contains("not an integer"), "{shown}");
        assert!(shown.contains("Who reads it."), "{shown}");
        assert!(
            shown.contains("purpose (text, default null, optional)"),
            "{shown}"
        );
    }

    #[test]
    fn required_fields_are_asked_again_and_eof_gives_none() {
        let schema = json!({"type": "object", "properties": {"location": {"type": "string"}},
                            "required": ["location"]});
        let mut c = console("\nParis\n");
        assert_eq!(
            Value::Object(c.ask_arguments("w", &schema).unwrap()),
            json!({"location": "Paris"})
        );
        assert!(
            String::from_utf8(c.out().clone())
                .unwrap()
                .contains("a value is required")
        );
        assert_eq!(console("\n").ask_arguments("w", &schema), None);
        // No properties: nothing is asked, even with no input at all.
        let mut c = console("");
        assert_eq!(
            c.ask_arguments("r", &json!({"type": "object"})),
            Some(Map::new())
        );
        assert!(c.out().is_empty());
    }

    #[test]
    fn form_fields_from_schemas() {
        let root = schema();
        assert_eq!(
            form_field(&root, &root["properties"]["size"]),
            json!({"type": "string", "oneOf": [
                {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]})
        );
        assert_eq!(
            form_field(&root, &root["properties"]["purpose"]),
            json!({"type": "string", "default": null})
        );
        // A schema that refers to itself ends, unresolved.
        let looped = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}});
        assert_eq!(
            form_field(&looped, &json!({"$ref": "#/$defs/A"})),
            json!({"$ref": "#/$defs/A"})
        );
    }
}
