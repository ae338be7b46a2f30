//! Form fields: the kind of a field from its schema ([`FieldKind`]), the hint shown at its
//! prompt, and the parsing and validation of an answer (`minLength`/`maxLength`/`format`,
//! `minimum`/`maximum`, y/n, single- and multi-select enums, `minItems`/`maxItems`, lists of
//! strings, JSON for other shapes). Used by elicitation forms ([`Console`](crate::interactive::Console))
//! and tool arguments ([`arguments`](crate::arguments)) alike.

use serde_json::{Value, json};

/// The kind of a form field, from its schema.
pub(crate) enum FieldKind {
    Text,
    Integer,
    Number,
    Boolean,
    /// `(value, label)` pairs.
    Enum(Vec<(String, String)>),
    MultiEnum(Vec<(String, String)>),
    /// An array of free strings: comma-separated, or a JSON array.
    TextList,
    /// Any other shape (an object, an array of objects…): a JSON value of the declared type.
    Json,
}

fn options(list: Option<&Value>, labels: Option<&Value>) -> Vec<(String, String)> {
    let labels: Vec<&str> = labels
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    list.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .enumerate()
                .filter_map(|(i, v)| match v {
                    Value::String(s) => Some((
                        s.clone(),
                        labels.get(i).map(|l| l.to_string()).unwrap_or(s.clone()),
                    )),
                    Value::Object(o) => {
                        let value = o.get("const")?.as_str()?.to_owned();
                        let label = o
                            .get("title")
                            .and_then(Value::as_str)
                            .unwrap_or(&value)
                            .to_owned();
                        Some((value, label))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

impl FieldKind {
    pub(crate) fn of(field: &Value) -> FieldKind {
        let ty = field
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("string");
        match ty {
            "integer" => FieldKind::Integer,
            "number" => FieldKind::Number,
            "boolean" => FieldKind::Boolean,
            "array" => {
                let items = field.get("items");
                let opts = match items.and_then(|i| i.get("enum")) {
                    Some(e) => options(Some(e), None),
                    None => options(items.and_then(|i| i.get("anyOf")), None),
                };
                let item_type = items.and_then(|i| i.get("type")).and_then(Value::as_str);
                if !opts.is_empty() {
                    FieldKind::MultiEnum(opts)
                } else if matches!(item_type, None | Some("string")) {
                    FieldKind::TextList
                } else {
                    FieldKind::Json
                }
            }
            "object" => FieldKind::Json,
            _ => {
                if let Some(e) = field.get("enum") {
                    FieldKind::Enum(options(Some(e), field.get("enumNames")))
                } else if let Some(o) = field.get("oneOf") {
                    FieldKind::Enum(options(Some(o), None))
                } else {
                    FieldKind::Text
                }
            }
        }
    }

    pub(crate) fn hint(&self) -> String {
        match self {
            FieldKind::Text => "text".into(),
            FieldKind::Integer => "integer".into(),
            FieldKind::Number => "number".into(),
            FieldKind::Boolean => "y/n".into(),
            FieldKind::Enum(_) => "pick one: number or value".into(),
            FieldKind::MultiEnum(_) => "pick any: numbers or values, comma-separated".into(),
            FieldKind::TextList => "comma-separated, or a JSON array".into(),
            FieldKind::Json => "JSON".into(),
        }
    }

    pub(crate) fn parse(&self, line: &str, field: &Value) -> Result<Value, String> {
        match self {
            FieldKind::Text => {
                let n = line.chars().count() as u64;
                if let Some(min) = field.get("minLength").and_then(Value::as_u64)
                    && n < min
                {
                    return Err(format!("at least {min} characters"));
                }
                if let Some(max) = field.get("maxLength").and_then(Value::as_u64)
                    && n > max
                {
                    return Err(format!("at most {max} characters"));
                }
                if let Some(fmt) = field.get("format").and_then(Value::as_str) {
                    check_format(fmt, line)?;
                }
                Ok(Value::String(line.to_owned()))
            }
            FieldKind::Integer => {
                let n: i64 = line.parse().map_err(|_| "not an integer".to_owned())?;
                check_range(n as f64, field)?;
                Ok(json!(n))
            }
            FieldKind::Number => {
                let n: f64 = line
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| "not a number".to_owned())?;
                check_range(n, field)?;
                Ok(json!(n))
            }
            FieldKind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Value::Bool(true)),
                "n" | "no" | "false" => Ok(Value::Bool(false)),
                _ => Err("answer y or n".into()),
            },
            FieldKind::Enum(opts) => pick(opts, line).map(Value::String),
            FieldKind::MultiEnum(opts) => {
                let mut chosen = Vec::new();
                for part in line.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let v = pick(opts, part)?;
                    if !chosen.contains(&v) {
                        chosen.push(v);
                    }
                }
                check_items(chosen.len(), field)?;
                Ok(json!(chosen))
            }
            FieldKind::TextList => {
                let items: Vec<String> = if line.starts_with('[') {
                    serde_json::from_str(line)
                        .map_err(|_| "not a JSON array of strings".to_owned())?
                } else {
                    line.split(',')
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect()
                };
                check_items(items.len(), field)?;
                Ok(json!(items))
            }
            FieldKind::Json => {
                let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
                let fits = match field.get("type").and_then(Value::as_str) {
                    Some("object") => v.is_object(),
                    Some("array") => v.is_array(),
                    _ => true,
                };
                if fits {
                    Ok(v)
                } else {
                    Err(format!(
                        "not a JSON {}",
                        field["type"].as_str().unwrap_or("value")
                    ))
                }
            }
        }
    }
}

/// `minItems` / `maxItems` of an array field.
fn check_items(n: usize, field: &Value) -> Result<(), String> {
    let n = n as u64;
    if let Some(min) = field.get("minItems").and_then(Value::as_u64)
        && n < min
    {
        return Err(format!("choose at least {min}"));
    }
    if let Some(max) = field.get("maxItems").and_then(Value::as_u64)
        && n > max
    {
        return Err(format!("choose at most {max}"));
    }
    Ok(())
}

fn pick(opts: &[(String, String)], input: &str) -> Result<String, String> {
    if let Ok(i) = input.parse::<usize>()
        && i >= 1
        && i <= opts.len()
    {
        return Ok(opts[i - 1].0.clone());
    }
    opts.iter()
        .find(|(v, l)| v == input || l == input)
        .map(|(v, _)| v.clone())
        .ok_or_else(|| format!("{input:?} is not one of the options"))
}

fn check_range(n: f64, field: &Value) -> Result<(), String> {
    if let Some(min) = field.get("minimum").and_then(Value::as_f64)
        && n < min
    {
        return Err(format!("must be at least {min}"));
    }
    if let Some(max) = field.get("maximum").and_then(Value::as_f64)
        && n > max
    {
        return Err(format!("must be at most {max}"));
    }
    Ok(())
}

pub(crate) fn check_format(fmt: &str, s: &str) -> Result<(), String> {
    let ok = match fmt {
        "email" => {
            let mut parts = s.splitn(2, '@');
            let local = parts.next().unwrap_or("");
            let domain = parts.next().unwrap_or("");
            !local.is_empty() && domain.contains('.') && !s.contains(char::is_whitespace)
        }
        "uri" => {
            s.split_once(':').is_some_and(|(scheme, rest)| {
                !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                    && !rest.is_empty()
            }) && !s.contains(char::is_whitespace)
        }
        "date" => is_date(s),
        "date-time" => s.len() > 11 && s.get(..10).is_some_and(is_date) && s.as_bytes()[10] == b'T',
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not a valid {fmt}"))
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}
