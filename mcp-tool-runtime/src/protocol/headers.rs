//! The `Mcp-*` HTTP headers of Streamable HTTP, shared by the server, the client and the
//! server builder: the header names, the `=?base64?…?=` value codec, and `x-mcp-header`
//! (tool parameters mirrored into `Mcp-Param-{Name}` headers, "Custom Headers from Tool
//! Parameters").
//!
//! [`header_params`] reads and validates the annotations of a tool's `inputSchema`;
//! clients use [`param_headers`] to build the headers of a `tools/call`, servers use
//! [`check_param_headers`] to verify them against the body.

use serde_json::{Map, Value};

use base64::Engine as _;

/// Header carrying the protocol version (must equal `_meta` protocolVersion).
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// Header mirroring the JSON-RPC `method`.
pub const METHOD_HEADER: &str = "mcp-method";
/// Header mirroring `params.name` / `params.uri`.
pub const NAME_HEADER: &str = "mcp-name";

/// The schema keyword naming the header.
pub const X_MCP_HEADER: &str = "x-mcp-header";
/// The prefix of the mirrored header names.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The JSON type of an annotated parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"` (within the JavaScript safe range).
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One annotated parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The name portion: the header is `Mcp-Param-{name}`.
    pub name: String,
    /// The chain of `properties` keys from the schema root to the parameter.
    pub path: Vec<String>,
    /// The parameter's type.
    pub kind: ParamKind,
}

impl HeaderParam {
    /// The full header name, `Mcp-Param-{name}`.
    pub fn header_name(&self) -> String {
        format!("{PARAM_HEADER_PREFIX}{}", self.name)
    }

    /// The argument value at this parameter's path, if present and not null.
    pub fn value_in<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        let mut v = arguments;
        for key in &self.path {
            v = v.as_object()?.get(key)?;
        }
        (!v.is_null()).then_some(v)
    }
}

/// Decodes the `=?base64?…?=` sentinel form of `Mcp-Name` / `Mcp-Param-*` values.
///
/// # Errors
/// When the value uses the sentinel but is not valid Base64 of UTF-8 text.
pub fn decode_header_value(raw: &str) -> Result<std::borrow::Cow<'_, str>, String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|_| "invalid Base64 in header value".to_owned())?;
            String::from_utf8(bytes)
                .map(std::borrow::Cow::Owned)
                .map_err(|_| "Base64 header value is not UTF-8".to_owned())
        }
        None => Ok(std::borrow::Cow::Borrowed(raw)),
    }
}

/// Encodes a value for `Mcp-Name` / `Mcp-Param-*`: plain when it is safe visible ASCII
/// without leading/trailing spaces and not itself sentinel-shaped, the Base64 sentinel
/// form otherwise.
pub fn encode_header_value(value: &str) -> String {
    let plain_ok = !value.is_empty()
        && value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !value.starts_with("=?base64?");
    if plain_ok {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// The body field mirrored by `Mcp-Name` for `method`, if any.
pub fn name_field(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // SEP-2663: routing to the replica holding the task.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Reads the `x-mcp-header` annotations of `input_schema`.
///
/// # Errors
/// A description of the first violated constraint (empty or non-token name, duplicate
/// name ignoring case, non-primitive or `number` type, an annotation that is not
/// statically reachable through `properties` only). Such a tool definition is invalid.
pub fn header_params(input_schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut out)?;
    let mut seen = std::collections::HashSet::new();
    for p in &out {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(format!("duplicate x-mcp-header `{}`", p.name));
        }
    }
    Ok(out)
}

fn walk(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    if let Some(h) = schema.get(X_MCP_HEADER) {
        if !reachable || path.is_empty() {
            return Err(format!(
                "x-mcp-header at `{}` is not statically reachable through `properties`",
                path.join(".")
            ));
        }
        let name = h
            .as_str()
            .ok_or_else(|| "x-mcp-header must be a string".to_owned())?;
        if name.is_empty() || !name.chars().all(is_tchar) {
            return Err(format!("x-mcp-header `{name}` is not an HTTP token"));
        }
        let kind = match schema.get("type").and_then(Value::as_str) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            other => {
                return Err(format!(
                    "x-mcp-header `{name}` on a parameter of type {other:?} (only string, integer, boolean)"
                ));
            }
        };
        out.push(HeaderParam {
            name: name.to_owned(),
            path: path.clone(),
            kind,
        });
    }
    for (key, value) in schema {
        match (key.as_str(), value) {
            ("properties", Value::Object(props)) => {
                for (prop, sub) in props {
                    if let Value::Object(sub) = sub {
                        path.push(prop.clone());
                        walk(sub, path, reachable, out)?;
                        path.pop();
                    }
                }
            }
            (X_MCP_HEADER, _) => {}
            (_, Value::Object(sub)) => walk_unreachable(sub, path, out)?,
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(sub) = item {
                        walk_unreachable(sub, path, out)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn walk_unreachable(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    // Under `items`, `oneOf`, `$defs`, ...: any annotation here is invalid. Keys that are
    // not schemas (e.g. an `enum` or `const` object) are walked too; an `x-mcp-header`
    // key in them is equally suspicious.
    walk(schema, path, false, out)
}

/// `f` as an integer when it is a whole number in the safe integer range.
fn safe_integer(f: f64) -> Option<i64> {
    // Within the range the cast is exact (and `as` saturates, never panics, outside it).
    (f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64).then_some(f as i64)
}

/// The header text of an argument value (before encoding), when it has the right type.
pub fn param_text(kind: ParamKind, value: &Value) -> Option<String> {
    match (kind, value) {
        (ParamKind::String, Value::String(s)) => Some(s.clone()),
        (ParamKind::Integer, Value::Number(n)) => {
            let i = n.as_i64().or_else(|| n.as_f64().and_then(safe_integer))?;
            (i.checked_abs()? <= MAX_SAFE_INTEGER).then(|| i.to_string())
        }
        (ParamKind::Boolean, Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers of a `tools/call` with `arguments`, encoded.
pub fn param_headers(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|p| {
            let v = p.value_in(arguments)?;
            let text = param_text(p.kind, v)?;
            Some((p.header_name(), encode_header_value(&text)))
        })
        .collect()
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its `arguments`.
/// `header` looks a header up by name (case-insensitively) and returns its raw value,
/// `Err(())` when it is not visible ASCII.
///
/// # Errors
/// A -32020 message: a header missing for a present value, a header present for an
/// absent or null value, a value mismatch, or a header with invalid characters or
/// invalid Base64.
pub fn check_param_headers(
    params: &[HeaderParam],
    arguments: &Value,
    header: impl Fn(&str) -> Option<Result<String, ()>>,
) -> Result<(), String> {
    for p in params {
        let name = p.header_name();
        let Some(value) = p.value_in(arguments) else {
            // Not in the arguments (or null): the header is not expected, and one that is
            // sent anyway claims a value the body does not carry.
            if header(&name).is_some() {
                return Err(format!(
                    "Header mismatch: {name} is present but the body has no value for it"
                ));
            }
            continue;
        };
        let raw = match header(&name) {
            None => return Err(format!("Header mismatch: missing required header {name}")),
            Some(Err(())) => {
                return Err(format!(
                    "Header mismatch: {name} contains invalid characters"
                ));
            }
            Some(Ok(raw)) => raw,
        };
        let decoded =
            decode_header_value(&raw).map_err(|e| format!("Header mismatch: {name}: {e}"))?;
        let matches = match (p.kind, value) {
            // Numerically (`42.0` == `42`), within the safe integer range only: beyond it
            // distinct integers share an `f64`.
            (ParamKind::Integer, Value::Number(n)) => {
                let header = decoded.trim().parse::<f64>().ok().and_then(safe_integer);
                let body = n.as_i64().or_else(|| n.as_f64().and_then(safe_integer));
                header.is_some_and(|h| body == Some(h) && h.abs() <= MAX_SAFE_INTEGER)
            }
            _ => param_text(p.kind, value).is_some_and(|t| t == decoded),
        };
        if !matches {
            return Err(format!(
                "Header mismatch: {name} header value does not match the body"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn reads_annotations_on_reachable_primitives() {
        let s = obj(json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "query":{"type":"string"}}}));
        let p = header_params(&s).unwrap();
        assert_eq!(p.len(), 2);
        let args = json!({"region":"us-west1","opts":{"n":42},"query":"x"});
        let h = param_headers(&p, &args);
        assert!(h.contains(&("Mcp-Param-Region".into(), "us-west1".into())));
        assert!(h.contains(&("Mcp-Param-N".into(), "42".into())));
        let lookup = |name: &str| {
            h.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| Ok(v.clone()))
        };
        assert!(check_param_headers(&p, &args, lookup).is_ok());
        let other = json!({"region":"eu","opts":{"n":42}});
        assert!(check_param_headers(&p, &other, lookup).is_err());
        // Integers compare numerically.
        let float = |_: &str| Some(Ok("42.0".to_owned()));
        let p_n: Vec<_> = p.iter().filter(|x| x.name == "N").cloned().collect();
        assert!(check_param_headers(&p_n, &args, float).is_ok());
        // A missing header for a present value is an error; an absent value expects none.
        assert!(check_param_headers(&p, &args, |_| None).is_err());
        assert!(check_param_headers(&p, &json!({}), |_| None).is_ok());
    }

    #[test]
    fn rejects_invalid_annotations() {
        for bad in [
            json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"type":"object","properties":{
                "a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"type":"object","properties":{"a":{"oneOf":[{"type":"string","x-mcp-header":"A"}]}}}),
            json!({"type":"object","x-mcp-header":"Root"}),
        ] {
            assert!(header_params(&obj(bad.clone())).is_err(), "{bad}");
        }
    }
}
