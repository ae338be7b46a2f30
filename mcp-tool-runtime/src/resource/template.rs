//! RFC 6570 URI templates, matched against requested URIs: the forms MCP servers use.
//!
//! Supported expressions: `{var}` (simple: unreserved characters and percent-escapes, no
//! `/`), `{+var}` (reserved: anything, `/` included), `{#var}` (a fragment), `{/var}` (a path
//! segment), `{.var}` (a label), `{?a,b}` and `{&a,b}` (query parameters, each optional), and
//! several variables in one expression (`{x,y}`). Explode (`*`) and prefix (`:n`) modifiers are
//! refused when the template is parsed. Matched values are percent-decoded; a URI that does not
//! match, or a value that does not decode to UTF-8, is no match.

use std::collections::BTreeMap;

/// Longest URI matched against a template (longer ones match nothing).
pub const MAX_URI_LEN: usize = 4096;
/// Most expressions in one template.
pub const MAX_EXPRESSIONS: usize = 16;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Path,
    Label,
    Query,
    QueryCont,
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("URI template `{template}`: {reason}")]
pub struct TemplateError {
    template: String,
    reason: String,
}

impl UriTemplate {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<UriTemplate, TemplateError> {
        let err = |reason: &str| TemplateError {
            template: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut parts = Vec::new();
        let mut rest = text;
        let mut exprs = 0;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| err("`{` without `}`"))?;
                    let inner = &rest[1..end];
                    let (op, names) = match inner.chars().next() {
                        Some('+') => (Op::Reserved, &inner[1..]),
                        Some('#') => (Op::Fragment, &inner[1..]),
                        Some('/') => (Op::Path, &inner[1..]),
                        Some('.') => (Op::Label, &inner[1..]),
                        Some('?') => (Op::Query, &inner[1..]),
                        Some('&') => (Op::QueryCont, &inner[1..]),
                        Some(';' | '=' | ',' | '!' | '@' | '|') => {
                            return Err(err("this expression operator is not supported"));
                        }
                        _ => (Op::Simple, inner),
                    };
                    let vars: Vec<String> = names.split(',').map(str::to_owned).collect();
                    for v in &vars {
                        if v.contains('*') || v.contains(':') {
                            return Err(err(
                                "explode (`*`) and prefix (`:n`) modifiers are not supported",
                            ));
                        }
                        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            return Err(err("a variable name is 1 or more of `A-Z a-z 0-9 _`"));
                        }
                    }
                    exprs += 1;
                    if exprs > MAX_EXPRESSIONS {
                        return Err(err("too many expressions"));
                    }
                    if let Some(Part::Expr { .. }) = parts.last()
                        && !matches!(op, Op::Query | Op::QueryCont | Op::Path | Op::Label)
                    {
                        return Err(err(
                            "two expressions in a row cannot be told apart when matching; put a literal between them",
                        ));
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(err("`}` without `{`"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        if parts
            .iter()
            .any(|p| matches!(p, Part::Literal(l) if l.contains('}')))
        {
            return Err(err("`}` without `{`"));
        }
        let mut seen = Vec::new();
        for p in &parts {
            if let Part::Expr { vars, .. } = p {
                for v in vars {
                    if seen.contains(v) {
                        return Err(err("a variable appears twice"));
                    }
                    seen.push(v.clone());
                }
            }
        }
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variables, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr { vars, .. } => vars.iter().map(String::as_str).collect(),
                Part::Literal(_) => Vec::new(),
            })
            .collect()
    }

    /// The variables `uri` gives, when it matches (query variables that are absent are left
    /// out).
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let mut memo = vec![vec![None; uri.len() + 1]; self.parts.len() + 1];
        let mut out = BTreeMap::new();
        if self.walk(0, uri, 0, &mut memo, &mut out) {
            Some(out)
        } else {
            None
        }
    }

    /// Whether `parts[i..]` matches `uri[pos..]`, collecting variables into `out`.
    fn walk(
        &self,
        i: usize,
        uri: &str,
        pos: usize,
        memo: &mut Vec<Vec<Option<bool>>>,
        out: &mut BTreeMap<String, String>,
    ) -> bool {
        if let Some(known) = memo[i][pos]
            && !known
        {
            return false;
        }
        let rest = &uri[pos..];
        let ok = match self.parts.get(i) {
            None => rest.is_empty(),
            Some(Part::Literal(l)) => {
                rest.starts_with(l.as_str()) && self.walk(i + 1, uri, pos + l.len(), memo, out)
            }
            Some(Part::Expr { op, vars }) => {
                let mut found = false;
                // try the longest candidate first (then shorter), stopping at the first that
                // lets the rest match
                let ends = candidate_ends(*op, rest);
                for end in ends.into_iter().rev() {
                    let piece = &rest[..end];
                    let Some(values) = decode_expr(*op, vars, piece) else {
                        continue;
                    };
                    let mut attempt = out.clone();
                    attempt.extend(values);
                    if self.walk(i + 1, uri, pos + end, memo, &mut attempt) {
                        *out = attempt;
                        found = true;
                        break;
                    }
                }
                found
            }
        };
        memo[i][pos] = Some(ok);
        ok
    }
}

impl std::fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The byte lengths an expression of `op` may take at the start of `rest`.
fn candidate_ends(op: Op, rest: &str) -> Vec<usize> {
    let allowed = |c: char| match op {
        Op::Simple | Op::Path | Op::Label => {
            c.is_ascii_alphanumeric() || "-._~%,".contains(c) || !c.is_ascii()
        }
        Op::Reserved | Op::Fragment => c != '#' || op == Op::Fragment,
        Op::Query | Op::QueryCont => c != '#',
    };
    let prefix = match op {
        Op::Path => Some('/'),
        Op::Label => Some('.'),
        Op::Fragment => Some('#'),
        Op::Query => Some('?'),
        Op::QueryCont => Some('&'),
        _ => None,
    };
    let mut ends = Vec::new();
    let mut chars = rest.char_indices().peekable();
    if let Some(p) = prefix {
        match chars.peek() {
            Some((_, c)) if *c == p => {
                chars.next();
            }
            // query expressions are optional: they may match nothing
            _ => {
                if matches!(op, Op::Query | Op::QueryCont) {
                    ends.push(0);
                }
                return ends;
            }
        }
        if matches!(op, Op::Query | Op::QueryCont) {
            ends.push(0);
        }
    }
    for (i, c) in chars {
        if !allowed(c) {
            break;
        }
        ends.push(i + c.len_utf8());
    }
    ends
}

/// The variables of one expression from the text it matched.
fn decode_expr(op: Op, vars: &[String], piece: &str) -> Option<Vec<(String, String)>> {
    let body = match op {
        Op::Path | Op::Label | Op::Fragment | Op::Query | Op::QueryCont => {
            piece.get(1..).unwrap_or("")
        }
        _ => piece,
    };
    match op {
        Op::Query | Op::QueryCont => {
            let mut out = Vec::new();
            if body.is_empty() {
                return Some(out);
            }
            for pair in body.split('&') {
                let (k, v) = pair.split_once('=')?;
                if !vars.iter().any(|n| n == k) {
                    return None;
                }
                out.push((k.to_owned(), percent_decode(v)?));
            }
            Some(out)
        }
        _ => {
            if body.is_empty() {
                return None;
            }
            let values: Vec<&str> = if vars.len() > 1 {
                body.split(',').collect()
            } else {
                vec![body]
            };
            if values.len() != vars.len() {
                return None;
            }
            vars.iter()
                .zip(values)
                .map(|(n, v)| Some((n.clone(), percent_decode(v)?)))
                .collect()
        }
    }
}

/// Percent-decodes `s` (invalid escapes or non-UTF-8 results: `None`). A `%` not followed
/// by two hex digits is refused here: `percent-encoding` would keep it as it is.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let escape_ok = |i: usize| {
        bytes
            .get(i + 1..i + 3)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    };
    if (0..bytes.len()).any(|i| bytes[i] == b'%' && !escape_ok(i)) {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(s).decode_utf8().ok()?;
    Some(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    fn v(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        )
    }

    #[test]
    fn simple_and_reserved() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            v(&[("id", "123")])
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            m("file:///{+path}", "file:///src/main.rs"),
            v(&[("path", "src/main.rs")])
        );
        assert_eq!(m("file:///{path}", "file:///src/main.rs"), None);
        assert_eq!(
            m("repo://{owner}/{repo}", "repo://a%20b/c"),
            v(&[("owner", "a b"), ("repo", "c")])
        );
        assert_eq!(m("x://{a}", "x://%ZZ"), None);
        assert_eq!(m("x://{a}", "x://%FF"), None);
        assert_eq!(m("x://{a,b}", "x://1,2"), v(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn other_operators() {
        assert_eq!(m("x://r{/seg}", "x://r/abc"), v(&[("seg", "abc")]));
        assert_eq!(m("x://r{.ext}", "x://r.json"), v(&[("ext", "json")]));
        assert_eq!(m("x://r{#frag}", "x://r#a/b"), v(&[("frag", "a/b")]));
        assert_eq!(
            m("x://s{?q,lang}", "x://s?q=rust&lang=en"),
            v(&[("lang", "en"), ("q", "rust")])
        );
        assert_eq!(m("x://s{?q,lang}", "x://s"), v(&[]));
        assert_eq!(m("x://s{?q}", "x://s?other=1"), None);
        assert_eq!(
            m("x://s/{id}{?v}", "x://s/7?v=2"),
            v(&[("id", "7"), ("v", "2")])
        );
    }

    #[test]
    fn refused_templates() {
        for t in [
            "x://{a*}",
            "x://{a:3}",
            "x://{",
            "x://}",
            "x://{;a}",
            "x://{a}{b}",
            "x://{a}/{a}",
            "x://{a-b}",
        ] {
            assert!(UriTemplate::parse(t).is_err(), "{t}");
        }
        let t = UriTemplate::parse("x://{a}/{+b}").unwrap();
        assert_eq!(t.variables(), ["a", "b"]);
        assert_eq!(t.to_string(), "x://{a}/{+b}");
        let long = format!("x://{}", "a".repeat(MAX_URI_LEN));
        assert_eq!(t.matches(&long), None);
    }
}
