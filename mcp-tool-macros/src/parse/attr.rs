//! The options of `#[mcp_tool(...)]` (and `#[mcp_flow]`, which takes none) and the doc
//! comments that become a description.

use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Token};

use crate::errors::Errors;

/// The options of `#[mcp_tool(...)]`.
#[derive(Default)]
pub struct ToolAttr {
    /// `name = "..."`: the wire name (default: the function's name).
    pub name: Option<LitStr>,
    /// `title = "..."`.
    pub title: Option<LitStr>,
    /// `description = "..."` (default: the doc comments).
    pub description: Option<LitStr>,
    /// `max_rounds = N` (N >= 1).
    pub max_rounds: Option<u32>,
    /// `ttl = "10m"` or `ttl = 600` (seconds).
    pub ttl_secs: Option<u64>,
    /// Tool annotation hints.
    pub read_only: Option<bool>,
    /// `destructive` hint.
    pub destructive: Option<bool>,
    /// `idempotent` hint.
    pub idempotent: Option<bool>,
    /// `open_world` hint.
    pub open_world: Option<bool>,
    /// `journal`: keep answers by key so a newer build can restart without asking twice.
    pub journal: bool,
    /// `early_answers`: answers sent on a first call are offered to the tool.
    pub early_answers: bool,
}

const KNOWN: &str = "`name`, `title`, `description`, `max_rounds`, `ttl`, `read_only`, `destructive`, `idempotent`, `open_world`, `journal`, `early_answers`";

/// `#[mcp_flow]` takes no options: a flow's settings are its calling tool's.
pub fn parse_flow_attr(tokens: TokenStream, errors: &mut Errors) {
    if !tokens.is_empty() {
        errors.push_spanned(
            tokens,
            "`#[mcp_flow]` takes no options: a flow runs with the settings (`max_rounds`, `ttl`, `journal`, …) of the tool that calls it",
        );
    }
}

/// Parses the attribute arguments, recording every problem in `errors`.
pub fn parse_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let metas =
        match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, tokens) {
            Ok(m) => m,
            Err(e) => {
                errors.add(syn::Error::new(
                    e.span(),
                    format!(
                        "{e}; expected `#[mcp_tool(key = value, flag, ...)]` with keys {KNOWN}"
                    ),
                ));
                return attr;
            }
        };
    let mut seen: Vec<String> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let Some(ident) = path.get_ident() else {
            errors.push_spanned(
                path,
                format!("unknown `mcp_tool` option; expected one of {KNOWN}"),
            );
            continue;
        };
        let key = ident.to_string();
        if seen.contains(&key) {
            errors.push(
                ident.span(),
                format!("duplicate `mcp_tool` option `{key}`; give it once"),
            );
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            "name" | "title" | "description" => {
                if let Some(s) = string_value(&meta, &key, errors) {
                    if key == "name" && !valid_tool_name(&s.value()) {
                        errors.push(s.span(), "a tool name is 1 to 128 characters of `A-Z a-z 0-9 _ - .`");
                    }
                    let slot = match key.as_str() {
                        "name" => &mut attr.name,
                        "title" => &mut attr.title,
                        _ => &mut attr.description,
                    };
                    *slot = Some(s);
                }
            }
            "max_rounds" => match &meta {
                Meta::NameValue(nv) => match lit_int(&nv.value) {
                    Some(Ok(0)) => errors.push_spanned(
                        &nv.value,
                        "`max_rounds = 0` would forbid every round; use at least 1 (or leave it out for the default)",
                    ),
                    Some(Ok(n)) => attr.max_rounds = Some(n),
                    Some(Err(())) => errors.push_spanned(&nv.value, "`max_rounds` does not fit in a u32"),
                    None => errors.push_spanned(&nv.value, "expected an integer: `max_rounds = 3`"),
                },
                _ => errors.push_spanned(&meta, "expected a value: `max_rounds = 3`"),
            },
            "ttl" => match &meta {
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => match i.base10_parse::<u64>() {
                        Ok(0) | Err(_) => errors.push_spanned(i, "`ttl` is a positive number of seconds"),
                        Ok(n) => attr.ttl_secs = Some(n),
                    },
                    Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => match parse_duration(&s.value()) {
                        Some(n) if n > 0 => attr.ttl_secs = Some(n),
                        _ => errors.push_spanned(
                            s,
                            "cannot read this duration; write e.g. `ttl = \"90s\"`, `\"10m\"`, `\"1h30m\"` or `ttl = 600` (seconds)",
                        ),
                    },
                    other => errors.push_spanned(other, "expected `ttl = \"10m\"` or `ttl = 600` (seconds)"),
                },
                _ => errors.push_spanned(&meta, "expected a value: `ttl = \"10m\"` or `ttl = 600` (seconds)"),
            },
            "read_only" | "destructive" | "idempotent" | "open_world" | "journal"
            | "early_answers" => {
                let value = match &meta {
                    Meta::Path(_) => Some(true),
                    Meta::NameValue(nv) => match &nv.value {
                        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Some(b.value),
                        other => {
                            errors.push_spanned(other, format!("expected `{key}` or `{key} = true|false`"));
                            None
                        }
                    },
                    Meta::List(l) => {
                        errors.push_spanned(l, format!("expected `{key}` or `{key} = true|false`"));
                        None
                    }
                };
                if let Some(v) = value {
                    match key.as_str() {
                        "read_only" => attr.read_only = Some(v),
                        "destructive" => attr.destructive = Some(v),
                        "idempotent" => attr.idempotent = Some(v),
                        "open_world" => attr.open_world = Some(v),
                        "early_answers" => attr.early_answers = v,
                        _ => attr.journal = v,
                    }
                }
            }
            _ => errors.push(ident.span(), format!("unknown `mcp_tool` option `{key}`; expected one of {KNOWN}")),
        }
    }
    attr
}

fn string_value(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.clone()),
            other => {
                errors.push_spanned(
                    other,
                    format!("expected a string literal: `{key} = \"...\"`"),
                );
                None
            }
        },
        _ => {
            errors.push_spanned(meta, format!("expected a value: `{key} = \"...\"`"));
            None
        }
    }
}

fn lit_int(e: &Expr) -> Option<Result<u32, ()>> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => Some(i.base10_parse::<u32>().map_err(|_| ())),
        _ => None,
    }
}

fn valid_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// Reads `"90s"`, `"10m"`, `"1h30m"`, `"2d"`, `"600"` as seconds.
pub fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
        } else {
            let n: u64 = num.parse().ok()?;
            num.clear();
            let unit = match c {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86400,
                _ => return None,
            };
            total = total.checked_add(n.checked_mul(unit)?)?;
        }
    }
    if !num.is_empty() {
        total = total.checked_add(num.parse().ok()?)?;
    }
    Some(total)
}

/// The doc comments of the function, joined like rustdoc does (one space trimmed per line).
pub fn doc_string(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(nv) = &a.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            let v = s.value();
            lines.push(v.strip_prefix(' ').map(str::to_owned).unwrap_or(v));
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m"), Some(600));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("45"), Some(45));
        assert_eq!(parse_duration("2x"), None);
    }

    #[test]
    fn attr_errors_accumulate() {
        let mut e = Errors::default();
        let a = parse_attr(
            quote!(
                max_rounds = 0,
                bogus,
                title = 3,
                ttl = "10m",
                ttl = 5,
                read_only
            ),
            &mut e,
        );
        assert_eq!(a.ttl_secs, Some(600));
        assert_eq!(a.read_only, Some(true));
        let m = e.messages();
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(m[0].contains("max_rounds = 0"));
        assert!(m[1].contains("unknown `mcp_tool` option `bogus`"));
        assert!(m[3].contains("duplicate"));
    }
}
