//! Parsing of the `#[mcp_tool(...)]` attribute and of the tool function's signature.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Expr, ExprLit, FnArg, GenericArgument, Ident, Lit, LitStr, Meta, Pat, PathArguments,
    ReturnType, Token, Type,
};

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
}

const KNOWN: &str = "`name`, `title`, `description`, `max_rounds`, `ttl`, `read_only`, `destructive`, `idempotent`, `open_world`, `journal`";

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
            "read_only" | "destructive" | "idempotent" | "open_world" | "journal" => {
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

/// How the `Ok` value of the function becomes a `CallToolResult`, decided by its type's last
/// path segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// `String`: one text content block.
    Text,
    /// `CallToolResult`: passed through as is.
    Raw,
    /// Anything else: `structuredContent` + its JSON as text, and an `outputSchema`.
    Structured,
}

/// What the macro needs from the signature.
pub struct ToolSig {
    /// The function's identifier.
    pub ident: Ident,
    /// The `ToolContext` parameter's binding (`cx`).
    pub cx: Ident,
    /// The arguments parameter: pattern and type (None for a tool without arguments).
    pub args: Option<(Pat, Type)>,
    /// `T` of `Result<T, ToolError>`.
    pub ok_ty: Type,
    /// The error type as written (`ToolError` or a path to it).
    pub err_ty: Type,
    /// How `T` becomes a result.
    pub output: OutputKind,
}

/// Checks the signature, recording every problem; returns what it could read.
pub fn parse_sig(f: &syn::ItemFn, errors: &mut Errors) -> Option<ToolSig> {
    let sig = &f.sig;
    let mut ok = true;
    if sig.asyncness.is_none() {
        errors.push(
            sig.fn_token.span,
            "`#[mcp_tool]` needs an `async fn`: write `async fn name(cx: &mut ToolContext, args: Args) -> Result<T, ToolError>`",
        );
        ok = false;
    }
    if let Some(c) = &sig.constness {
        errors.push(c.span, "a tool cannot be a `const fn`");
        ok = false;
    }
    if let Some(u) = &sig.unsafety {
        errors.push(u.span, "a tool cannot be an `unsafe fn`");
        ok = false;
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(abi, "a tool cannot have an `extern` ABI");
        ok = false;
    }
    if let Some(v) = &sig.variadic {
        errors.push_spanned(v, "a tool cannot be variadic");
        ok = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push_spanned(
            &sig.generics,
            "a tool cannot be generic: its state and schemas are fixed at compile time; use concrete types",
        );
        ok = false;
    }
    let mut inputs = sig.inputs.iter();
    let cx = match inputs.next() {
        Some(FnArg::Receiver(r)) => {
            errors.push_spanned(r, "a tool is a free function, not a method: remove `self` and write `cx: &mut ToolContext` first");
            None
        }
        Some(FnArg::Typed(pt)) => {
            let is_ctx = matches!(&*pt.ty, Type::Reference(r) if r.mutability.is_some() && last_ident(&r.elem).is_some_and(|i| i == "ToolContext"));
            match (&*pt.pat, is_ctx) {
                (Pat::Ident(pi), true) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    Some(pi.ident.clone())
                }
                (_, true) => {
                    errors.push_spanned(
                        &pt.pat,
                        "bind the context to a plain name: `cx: &mut ToolContext`",
                    );
                    None
                }
                _ => {
                    errors.push_spanned(
                        &pt.ty,
                        "the first parameter of a tool is the context: `cx: &mut ToolContext`",
                    );
                    None
                }
            }
        }
        None => {
            errors.push(
                sig.paren_token.span.join(),
                "a tool takes the context first: `(cx: &mut ToolContext, args: Args)`",
            );
            None
        }
    };
    let args = match inputs.next() {
        Some(FnArg::Typed(pt)) => {
            if let Pat::Ident(pi) = &*pt.pat
                && let Some(m) = &pi.mutability
            {
                errors.push(
                        m.span,
                        "the arguments are read again every round, so they cannot be `mut`; bind a copy instead: `let mut a = args;`",
                    );
                ok = false;
            }
            if let Type::Reference(_) = &*pt.ty {
                errors.push_spanned(&pt.ty, "the arguments are owned: write `args: Args`, where `Args: Deserialize + JsonSchema`");
                ok = false;
            }
            Some(((*pt.pat).clone(), (*pt.ty).clone()))
        }
        Some(FnArg::Receiver(r)) => {
            errors.push_spanned(r, "a tool cannot take `self`");
            None
        }
        None => None,
    };
    for extra in inputs {
        errors.push_spanned(
            extra,
            "a tool takes at most two parameters, `cx: &mut ToolContext` and `args: Args`; put every argument in the `Args` struct",
        );
        ok = false;
    }
    let (ok_ty, err_ty) = match &sig.output {
        ReturnType::Type(_, ty) => match result_args(ty) {
            Some(pair) => pair,
            None => {
                errors.push_spanned(ty, "a tool returns `Result<T, ToolError>` (T: `String`, `CallToolResult`, or `Serialize + JsonSchema`)");
                return None;
            }
        },
        ReturnType::Default => {
            errors.push(
                sig.paren_token.span.close(),
                "a tool returns `Result<T, ToolError>`: add `-> Result<T, ToolError>`",
            );
            return None;
        }
    };
    let output = match last_ident(&ok_ty) {
        Some(i) if i == "String" => OutputKind::Text,
        Some(i) if i == "CallToolResult" => OutputKind::Raw,
        _ => OutputKind::Structured,
    };
    let cx = cx?;
    if !ok {
        return None;
    }
    Some(ToolSig {
        ident: sig.ident.clone(),
        cx,
        args,
        ok_ty,
        err_ty,
        output,
    })
}

fn result_args(ty: &Type) -> Option<(Type, Type)> {
    let Type::Path(tp) = ty else { return None };
    let seg = tp.path.segments.last()?;
    if seg.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(ab) = &seg.arguments else {
        return None;
    };
    let tys: Vec<&Type> = ab
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match tys.as_slice() {
        [ok, err] if last_ident(err).is_some_and(|i| i == "ToolError") => {
            Some(((*ok).clone(), (*err).clone()))
        }
        _ => None,
    }
}

/// The last path segment's identifier of a path type.
pub fn last_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => tp.path.segments.last().map(|s| &s.ident),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
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

/// A span for the whole signature, for errors that concern all of it.
#[allow(dead_code)]
pub fn sig_span(f: &syn::ItemFn) -> Span {
    f.sig.span()
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

    #[test]
    fn signature() {
        let f: syn::ItemFn = syn::parse2(quote! {
            async fn t(cx: &mut ToolContext, args: A) -> Result<String, ToolError> { todo!() }
        })
        .unwrap();
        let mut e = Errors::default();
        let s = parse_sig(&f, &mut e).unwrap();
        assert_eq!(s.cx, "cx");
        assert_eq!(s.output, OutputKind::Text);
        let f: syn::ItemFn = syn::parse2(quote! { fn t<T>(x: u32) -> u32 { 1 } }).unwrap();
        let mut e = Errors::default();
        assert!(parse_sig(&f, &mut e).is_none());
        assert_eq!(e.messages().len(), 4, "{:?}", e.messages());
    }
}
