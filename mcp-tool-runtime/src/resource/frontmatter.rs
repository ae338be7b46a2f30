//! The YAML frontmatter of a `SKILL.md`, read by a strict parser of a small YAML subset.
//!
//! Agent Skills frontmatter is a flat mapping of short values (`name`, `description`,
//! `license`, `compatibility`, `allowed-tools`) and one string-to-string mapping
//! (`metadata`). Rather than pull a full YAML implementation into the core crate for that,
//! this parser accepts exactly:
//!
//! - block mappings (two or more spaces of indentation per level, no tabs), keys plain or
//!   quoted, no duplicate keys;
//! - block sequences (`- item`) of scalars;
//! - scalars on one line: plain, `'single'` (`''` escapes a quote) or `"double"` quoted
//!   (escapes `\" \\ \/ \n \t \r \0 \uXXXX`); plain scalars are typed as YAML 1.2's core
//!   schema types them (`null`/`~`/empty, `true`/`false`, decimal integers and floats);
//! - full-line comments and ` #` comments after a value.
//!
//! Everything else (anchors, aliases, tags, flow collections, block scalars `|` `>`,
//! multi-line plain scalars, `: ` inside a plain scalar, hexadecimal or octal numbers,
//! `.inf`) is refused with a message saying what to write instead, so that what the server
//! publishes as `frontmatter` is what any YAML parser reads from the file.

use serde_json::{Number, Value};

use crate::protocol::JsonObject;

/// Longest frontmatter block accepted, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

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
    let lines: Vec<(usize, &str)> = rest[..end]
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 2, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| {
            let t = l.trim_start();
            !t.is_empty() && !t.starts_with('#')
        })
        .collect();
    let mut pos = 0;
    let value = parse_mapping(&lines, &mut pos, 0)?;
    if let Some((n, _)) = lines.get(pos) {
        return Err(format!("line {n}: unexpected indentation"));
    }
    Ok(value)
}

fn indent_of(n: usize, line: &str) -> Result<usize, String> {
    let trimmed = line.trim_start_matches(' ');
    if trimmed.starts_with('\t') {
        return Err(format!("line {n}: tabs are not allowed in indentation"));
    }
    Ok(line.len() - trimmed.len())
}

fn parse_mapping(
    lines: &[(usize, &str)],
    pos: &mut usize,
    indent: usize,
) -> Result<JsonObject, String> {
    let mut map = JsonObject::new();
    while let Some(&(n, line)) = lines.get(*pos) {
        let ind = indent_of(n, line)?;
        if ind < indent {
            break;
        }
        if ind > indent {
            return Err(format!("line {n}: unexpected indentation"));
        }
        let body = &line[ind..];
        if body.starts_with("- ") || body == "-" {
            return Err(format!(
                "line {n}: a sequence item where a key was expected"
            ));
        }
        let (key, rest) = split_key(n, body)?;
        if map.contains_key(&key) {
            return Err(format!("line {n}: duplicate key `{key}`"));
        }
        *pos += 1;
        let rest = strip_comment(rest).trim();
        let value = if rest.is_empty() {
            match lines.get(*pos) {
                Some(&(m, next)) if indent_of(m, next)? > indent => {
                    let child = indent_of(m, next)?;
                    let body = &next[child..];
                    if body.starts_with("- ") || body == "-" {
                        parse_sequence(lines, pos, child)?
                    } else {
                        Value::Object(parse_mapping(lines, pos, child)?)
                    }
                }
                // `- item` lines at the key's own indentation also belong to it.
                Some(&(m, next))
                    if indent_of(m, next)? == indent
                        && (next[indent..].starts_with("- ") || &next[indent..] == "-") =>
                {
                    parse_sequence(lines, pos, indent)?
                }
                _ => Value::Null,
            }
        } else {
            let v = scalar(n, rest)?;
            if let Some(&(m, next)) = lines.get(*pos)
                && indent_of(m, next)? > indent
            {
                return Err(format!(
                    "line {m}: multi-line values are not supported: write `{key}` on one line \
                     (quote it if it holds `: ` or `#`)"
                ));
            }
            v
        };
        map.insert(key, value);
    }
    Ok(map)
}

fn parse_sequence(
    lines: &[(usize, &str)],
    pos: &mut usize,
    indent: usize,
) -> Result<Value, String> {
    let mut items = Vec::new();
    while let Some(&(n, line)) = lines.get(*pos) {
        let ind = indent_of(n, line)?;
        if ind != indent {
            if ind > indent {
                return Err(format!("line {n}: only sequences of scalars are supported"));
            }
            break;
        }
        let body = &line[ind..];
        let item = if body == "-" {
            ""
        } else if let Some(item) = body.strip_prefix("- ") {
            item
        } else {
            break;
        };
        let item = strip_comment(item).trim();
        if item.starts_with("- ") || find_mapping_colon(item).is_some() {
            return Err(format!("line {n}: only sequences of scalars are supported"));
        }
        items.push(scalar(n, item)?);
        *pos += 1;
    }
    Ok(Value::Array(items))
}

/// The key and what follows its `:`.
fn split_key(n: usize, body: &str) -> Result<(String, &str), String> {
    if body.starts_with('"') || body.starts_with('\'') {
        let (key, used) = quoted(n, body)?;
        let rest = &body[used..];
        let rest = rest
            .strip_prefix(':')
            .filter(|r| r.is_empty() || r.starts_with(' '))
            .ok_or_else(|| format!("line {n}: expected `:` after the quoted key"))?;
        return Ok((key, rest));
    }
    let Some(colon) = find_mapping_colon(body) else {
        return Err(format!("line {n}: expected `key: value`"));
    };
    let key = body[..colon].trim_end();
    check_plain(n, key)?;
    Ok((key.to_owned(), &body[colon + 1..]))
}

/// The first `:` followed by a space or the end of the text.
fn find_mapping_colon(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    (0..bytes.len()).find(|&i| bytes[i] == b':' && (i + 1 == bytes.len() || bytes[i + 1] == b' '))
}

/// `s` without a ` #` comment (quoted scalars are left whole).
fn strip_comment(s: &str) -> &str {
    let t = s.trim_start();
    if t.starts_with('"') || t.starts_with('\'') {
        return s;
    }
    if t.starts_with('#') {
        return "";
    }
    match s.find(" #") {
        Some(i) => &s[..i],
        None => s,
    }
}

fn check_plain(n: usize, s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("line {n}: empty key"));
    }
    if let Some(c) = s.chars().next()
        && "[]{}&*!|>%@`,?".contains(c)
    {
        return Err(format!(
            "line {n}: `{c}` starts YAML syntax this parser does not support \
             (anchors, aliases, tags, flow collections, block scalars): quote the value"
        ));
    }
    if s.starts_with("- ") {
        return Err(format!("line {n}: unexpected sequence item"));
    }
    if find_mapping_colon(s).is_some() {
        return Err(format!(
            "line {n}: `: ` inside a plain value: quote the value"
        ));
    }
    Ok(())
}

fn scalar(n: usize, s: &str) -> Result<Value, String> {
    if s.starts_with('"') || s.starts_with('\'') {
        let (text, used) = quoted(n, s)?;
        let tail = strip_comment(&s[used..]).trim();
        if !tail.is_empty() {
            return Err(format!("line {n}: text after a quoted value"));
        }
        return Ok(Value::String(text));
    }
    check_plain(n, s)?;
    Ok(match s {
        "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => number(n, s)?.unwrap_or_else(|| Value::String(s.to_owned())),
    })
}

/// A plain scalar YAML's core schema reads as a number, `None` for a string.
fn number(n: usize, s: &str) -> Result<Option<Value>, String> {
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    let lower = unsigned.to_ascii_lowercase();
    if lower.starts_with("0x")
        || lower.starts_with("0o")
        || matches!(lower.as_str(), ".inf" | ".nan")
    {
        return Err(format!(
            "line {n}: `{s}` is a special YAML number: quote it if it is text"
        ));
    }
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if digits(unsigned) {
        return match s.parse::<i64>() {
            Ok(i) => Ok(Some(Value::Number(i.into()))),
            Err(_) => Err(format!("line {n}: integer `{s}` is out of range: quote it")),
        };
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let mantissa_ok = match frac {
        Some(f) => (digits(int) || int.is_empty()) && (digits(f) || (f.is_empty() && digits(int))),
        None => digits(int),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    if !mantissa_ok || !exponent_ok || (frac.is_none() && exponent.is_none()) {
        return Ok(None);
    }
    match s.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(f) => Ok(Some(Value::Number(f))),
        None => Err(format!("line {n}: number `{s}` is out of range: quote it")),
    }
}

/// A quoted scalar at the start of `s`: its text and the bytes it spans.
fn quoted(n: usize, s: &str) -> Result<(String, usize), String> {
    let quote = s.as_bytes()[0];
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        if quote == b'\'' {
            if c == '\'' {
                if matches!(chars.peek(), Some((_, '\''))) {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                return Ok((out, i + 1));
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => return Ok((out, i + 1)),
            '\\' => {
                let Some((_, e)) = chars.next() else { break };
                match e {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '/' => out.push('/'),
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, h)| h))
                            .collect();
                        let ch = u32::from_str_radix(&hex, 16)
                            .ok()
                            .filter(|_| hex.len() == 4)
                            .and_then(char::from_u32)
                            .ok_or_else(|| format!("line {n}: bad `\\u` escape"))?;
                        out.push(ch);
                    }
                    other => {
                        return Err(format!("line {n}: unsupported escape `\\{other}`"));
                    }
                }
            }
            c => out.push(c),
        }
    }
    Err(format!("line {n}: unterminated quoted value"))
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
                    n: 12\nf: 1.5\nflag: true\nnothing:\n")
        .unwrap();
        assert_eq!(
            v,
            json!({"name": "notes", "description": "Keep notes: add, list", "license": "MIT",
                   "metadata": {"version": "1.0", "author": "O'Brien"}, "allowed-tools": ["a", "b"],
                   "n": 12, "f": 1.5, "flag": true, "nothing": null})
        );
    }

    #[test]
    fn refuses_what_it_does_not_read_exactly() {
        for bad in [
            "name: a\nname: b\n",
            "description: a: b\n",
            "description: >\n  folded\n",
            "description: |\n  literal\n",
            "anchor: &x 1\n",
            "flow: [a, b]\n",
            "tag: !!str 1\n",
            "hex: 0x1F\n",
            "d: first\n  second\n",
            "\tname: tab\n",
            "q: \"open\n",
            "seq:\n  - a: b\n",
        ] {
            assert!(fm(bad).is_err(), "accepted {bad:?}");
        }
        assert!(parse_frontmatter("name: x\n").is_err());
        assert!(parse_frontmatter("---\nname: x\n").is_err());
    }
}
