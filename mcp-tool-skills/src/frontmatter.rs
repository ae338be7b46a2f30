//! The YAML frontmatter of a `SKILL.md`, read by [`saphyr`] (YAML 1.2, core schema), so that
//! what the server publishes as `frontmatter` is what a YAML 1.2 parser reads from the file.
//!
//! Refused: a block over [`MAX_FRONTMATTER_BYTES`]; aliases (`*name`), so nothing is ever
//! expanded (no "billion laughs"); mappings and sequences nested deeper than 32 levels (both
//! checked on the parser's events, before any tree is built); duplicate keys; more than one
//! document or one that is not a mapping; keys that are not strings; tags other than YAML's
//! own (`!!str`, ...); numbers JSON cannot hold (`.inf`, `.nan`); and tabs in indentation
//! (libyaml-based parsers refuse them).

use saphyr::{LoadableYamlNode as _, Mapping, Scalar, ScanError, Yaml};
use saphyr_parser::{Event, Parser};
use serde_json::{Number, Value};

use mcp_tool_runtime::protocol::JsonObject;

/// Longest frontmatter block accepted, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Deepest nesting of mappings and sequences accepted (the frontmatter itself is level 1).
const MAX_NESTING: usize = 32;

/// The frontmatter of `text` (a whole `SKILL.md`) as a JSON object, or why it is refused.
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, String> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md must begin with a `---` line opening its YAML frontmatter")?;
    let mut block_end = None;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            block_end = Some(offset);
            break;
        }
        offset += line.len();
    }
    let end = block_end.ok_or("the YAML frontmatter has no closing `---` line")?;
    if end > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "the frontmatter is longer than {MAX_FRONTMATTER_BYTES} bytes"
        ));
    }
    let yaml = &rest[..end];
    // YAML 1.2 reads some tab indentation that libyaml-based parsers refuse.
    if let Some(n) = yaml
        .lines()
        .position(|l| l.trim_start_matches(' ').starts_with('\t'))
    {
        return Err(format!(
            "line {}: tabs are not allowed in indentation",
            n + 2
        ));
    }
    check_events(yaml)?;
    match Yaml::load_from_str(yaml).map_err(scan_error)?.as_slice() {
        [] => Ok(JsonObject::new()),
        [Yaml::Mapping(mapping)] => object(mapping),
        [_] => Err("the frontmatter is not a YAML mapping".into()),
        _ => Err("the frontmatter holds more than one YAML document".into()),
    }
}

/// A parser error with its line in the `SKILL.md` (the block starts on line 2).
fn scan_error(e: ScanError) -> String {
    format!("line {}: {}", e.marker().line() + 1, e.info())
}

/// Refuses aliases and deep nesting from the parser's events, before a tree is built.
fn check_events(yaml: &str) -> Result<(), String> {
    let mut depth = 0usize;
    for event in Parser::new_from_str(yaml) {
        let (event, span) = event.map_err(scan_error)?;
        let line = span.start.line() + 1;
        match event {
            Event::Alias(_) => {
                return Err(format!(
                    "line {line}: aliases (`*name`) are not accepted: write the value out"
                ));
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(format!(
                        "line {line}: nested deeper than {MAX_NESTING} levels"
                    ));
                }
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn object(mapping: &Mapping) -> Result<JsonObject, String> {
    mapping
        .iter()
        .map(|(key, value)| match key {
            Yaml::Value(Scalar::String(key)) => Ok((key.to_string(), json(value)?)),
            _ => Err("a key is not a string (a number, `true`, `null`, ...): quote it".into()),
        })
        .collect()
}

fn json(node: &Yaml) -> Result<Value, String> {
    Ok(match node {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => Number::from_f64(**f)
            .map(Value::Number)
            .ok_or_else(|| format!("`{f}` is not a number JSON can hold: quote it"))?,
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(json).collect::<Result<_, _>>()?),
        Yaml::Mapping(mapping) => Value::Object(object(mapping)?),
        Yaml::Tagged(tag, _) => return Err(format!("the tag `{tag}` is not accepted")),
        other => return Err(format!("unsupported YAML value {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fm(yaml: &str) -> Result<Value, String> {
        parse_frontmatter(&format!("---\n{yaml}---\n# Body\n")).map(Value::Object)
    }

    #[test]
    fn reads_the_agent_skills_fields() {
        let v = fm("name: notes\ndescription: \"Keep notes: add, list\" # why\nlicense: MIT\n\
                    metadata:\n  version: \"1.0\"\n  author: 'O''Brien'\nallowed-tools:\n  - a\n  - b\n\
                    n: 12\nf: 1.5\nflag: true\nnothing:\nanchored: &a x\nflow: [1, \"2\"]\n\
                    folded: >\n  one\n  two\nstr: !!str 3\n")
        .unwrap();
        assert_eq!(
            v,
            json!({"name": "notes", "description": "Keep notes: add, list", "license": "MIT",
                   "metadata": {"version": "1.0", "author": "O'Brien"}, "allowed-tools": ["a", "b"],
                   "n": 12, "f": 1.5, "flag": true, "nothing": null, "anchored": "x",
                   "flow": [1, "2"], "folded": "one two\n", "str": "3"})
        );
        assert_eq!(fm("").unwrap(), json!({}));
    }

    #[test]
    fn refuses_what_hosts_could_read_differently_or_expand() {
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n\
                      c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c]\n";
        let deep = format!("a: {}{}\n", "[".repeat(40), "]".repeat(40));
        let deep_block = format!("a:\n  {}x\n", "- ".repeat(40));
        for (bad, why) in [
            ("name: a\nname: b\n", "duplicated key"),
            ("a: &x 1\nb: *x\n", "aliases"),
            (laughs, "aliases"),
            (&deep, "nested deeper"),
            (&deep_block, "nested deeper"),
            ("tag: !custom 1\n", "tag"),
            ("tag: !custom [1]\n", "tag"),
            ("1: one\n", "not a string"),
            ("f: .inf\n", "JSON"),
            ("- a\n- b\n", "not a YAML mapping"),
            ("a: 1\n...\nb: 2\n", "more than one"),
            ("description: a: b\n", "line 2"),
            ("q: \"open\n", "line"),
            ("\tname: tab\n", "tabs"),
            ("a:\n  \tb: 1\n", "tabs"),
        ] {
            let e = fm(bad).expect_err(bad);
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        assert!(parse_frontmatter("name: x\n").is_err());
        assert!(parse_frontmatter("---\nname: x\n").is_err());
        let big = format!("---\nd: \"{}\"\n---\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert!(parse_frontmatter(&big).unwrap_err().contains("longer than"));
    }
}
