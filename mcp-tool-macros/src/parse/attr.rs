//! The options of `#[mcp_tool(...)]`, `#[mcp_prompt(...)]` and `#[mcp_resource(...)]` (and
//! `#[mcp_flow]`, which takes none), and the doc comments that become a description.

use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Meta, Token};

use super::sig::FnKind;
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
    /// Tools: `once`: single use (every state it issues is claimed in the server's ledger
    /// when presented; a replay gets the stored response).
    pub once: bool,
    /// Resources: `uri = "..."` (a fixed URI).
    pub uri: Option<LitStr>,
    /// Resources: `template = "..."` (an RFC 6570 URI template).
    pub template: Option<LitStr>,
    /// Resources: `mime_type = "..."`.
    pub mime_type: Option<LitStr>,
    /// Resources: `cache_ttl = "60s"` (seconds).
    pub cache_ttl_secs: Option<u64>,
    /// Resources: `private` (contents depend on the caller: `cacheScope: "private"`).
    pub private: bool,
    /// Prompts and resources: `complete(arg = completer_fn, …)`.
    pub complete: Vec<(Ident, Expr)>,
    /// Tools: `task = "optional" | "required"` (the Tasks extension, SEP-2663).
    pub task: Option<TaskOpt>,
    /// Tools: `task_start = "call" | "detach"` (where the task begins; needs `task`).
    pub task_start: Option<TaskStartOpt>,
    /// `crate = "path"`: the runtime's root in generated code, for a crate that re-exports
    /// `mcp_tool_runtime` (default `::mcp_tool_runtime`).
    pub krate: Option<syn::Path>,
    /// `scopes = "a b"` or `scopes = ["a", "b"]`: the OAuth scopes a caller must hold
    /// (RFC 6749 scope tokens, checked here; in order, without repeats).
    pub scopes: Vec<String>,
}

/// The value of `task = "…"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOpt {
    /// `"optional"`: a task for a client declaring the extension, a plain call otherwise.
    Optional,
    /// `"required"`: a task, or -32021 for a client without the extension.
    Required,
}

/// The value of `task_start = "…"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStartOpt {
    /// `"call"`: the call is a task from its first line (the default).
    Call,
    /// `"detach"`: rounds are answered as MRTR until `cx.detach(); cx.checkpoint().await`.
    Detach,
}

const KNOWN: &str = "`crate`, `name`, `title`, `description`, `max_rounds`, `ttl`, `read_only`, `destructive`, `idempotent`, `open_world`, `journal`, `early_answers`, `once`, `task`, `task_start`, `scopes`";
const KNOWN_PROMPT: &str = "`crate`, `name`, `title`, `description`, `max_rounds`, `ttl`, `journal`, `early_answers`, `scopes`, `complete(argument = completer, …)`";
const KNOWN_RESOURCE: &str = "`uri` or `template`, `name`, `title`, `description`, `mime_type`, `cache_ttl`, `private`, `max_rounds`, `ttl`, `journal`, `early_answers`, `scopes`, `complete(variable = completer, …)`, `crate`";

/// The options a kind of function takes (`None`: any name is unknown).
fn allowed(kind: FnKind, key: &str) -> bool {
    if key == "crate" {
        return true;
    }
    const COMMON: &[&str] = &[
        "name",
        "title",
        "description",
        "max_rounds",
        "ttl",
        "journal",
        "early_answers",
        "scopes",
    ];
    if COMMON.contains(&key) {
        return kind != FnKind::Flow;
    }
    match kind {
        FnKind::Tool => [
            "read_only",
            "destructive",
            "idempotent",
            "open_world",
            "once",
            "task",
            "task_start",
        ]
        .contains(&key),
        FnKind::Prompt => key == "complete",
        FnKind::Resource => [
            "uri",
            "template",
            "mime_type",
            "cache_ttl",
            "private",
            "complete",
        ]
        .contains(&key),
        FnKind::Flow => false,
    }
}

/// `#[mcp_flow]` takes no options but `crate = "path"` (returned): a flow's settings are its
/// calling tool's.
pub fn parse_flow_attr(tokens: TokenStream, errors: &mut Errors) -> Option<syn::Path> {
    if tokens.is_empty() {
        return None;
    }
    const NO_OPTIONS: &str = "`#[mcp_flow]` takes no options (but `crate = \"path\"`): a flow runs with the settings (`max_rounds`, `ttl`, `journal`, …) of the tool that calls it";
    let Ok(metas) = syn::parse::Parser::parse2(
        Punctuated::<Meta, Token![,]>::parse_terminated,
        tokens.clone(),
    ) else {
        errors.push_spanned(tokens, NO_OPTIONS);
        return None;
    };
    let mut krate = None;
    for meta in metas {
        if !meta.path().is_ident("crate") {
            errors.push_spanned(&meta, NO_OPTIONS);
        } else if krate.is_some() {
            errors.push_spanned(
                meta.path(),
                "duplicate `mcp_flow` option `crate`; give it once",
            );
        } else {
            krate = crate_path(&meta, errors);
        }
    }
    krate
}

/// The value of `crate = "path"`: a module path such as `::my_framework::mcp` or
/// `crate::mcp` (where the runtime is re-exported), recorded as an error at the literal when
/// it is not one.
fn crate_path(meta: &Meta, errors: &mut Errors) -> Option<syn::Path> {
    let s = string_value(meta, "crate", errors)?;
    match s.parse_with(syn::Path::parse_mod_style) {
        Ok(path) => Some(path),
        Err(_) => {
            errors.push(
                s.span(),
                format!(
                    "`crate = \"{}\"` is not a path; give the path of `mcp_tool_runtime` as your crate re-exports it, e.g. `crate = \"::my_framework::mcp\"` for `pub use mcp_tool_runtime as mcp;` in `my_framework`",
                    s.value()
                ),
            );
            None
        }
    }
}

/// Parses the attribute arguments of a function of `kind`, recording every problem in `errors`.
pub fn parse_attr(tokens: TokenStream, kind: FnKind, errors: &mut Errors) -> ToolAttr {
    let (attr_name, known) = match kind {
        FnKind::Prompt => ("mcp_prompt", KNOWN_PROMPT),
        FnKind::Resource => ("mcp_resource", KNOWN_RESOURCE),
        _ => ("mcp_tool", KNOWN),
    };
    let mut attr = ToolAttr::default();
    let metas =
        match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, tokens) {
            Ok(m) => m,
            Err(e) => {
                errors.add(syn::Error::new(
                    e.span(),
                    format!(
                        "{e}; expected `#[{attr_name}(key = value, flag, ...)]` with keys {known}"
                    ),
                ));
                return attr;
            }
        };
    let mut seen: Vec<String> = Vec::new();
    let mut task_start_span = None;
    let mut once_span: Option<proc_macro2::Span> = None;
    for meta in metas {
        let path = meta.path();
        let Some(ident) = path.get_ident() else {
            errors.push_spanned(
                path,
                format!("unknown `{attr_name}` option; expected one of {known}"),
            );
            continue;
        };
        let key = ident.to_string();
        if seen.contains(&key) {
            errors.push(
                ident.span(),
                format!("duplicate `{attr_name}` option `{key}`; give it once"),
            );
            continue;
        }
        seen.push(key.clone());
        if key == "once" && matches!(kind, FnKind::Prompt | FnKind::Resource) {
            errors.push(
                ident.span(),
                format!(
                    "`once` (single use) is for tools: `{attr_name}` answers a read \
                     (`prompts/get`, `resources/read`) with no effect to keep from running \
                     twice; move the effect into a `#[mcp_tool(once)]`"
                ),
            );
            continue;
        }
        if !allowed(kind, &key) {
            errors.push(
                ident.span(),
                format!("unknown `{attr_name}` option `{key}`; expected one of {known}"),
            );
            continue;
        }
        match key.as_str() {
            "crate" => attr.krate = crate_path(&meta, errors),
            "name" | "title" | "description" => {
                if let Some(s) = string_value(&meta, &key, errors) {
                    if key == "name" && kind != FnKind::Resource && !valid_tool_name(&s.value()) {
                        errors.push(
                            s.span(),
                            format!("a {} name is 1 to 128 characters of `A-Z a-z 0-9 _ - .`", kind.noun()),
                        );
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
            "task" => {
                if let Some(s) = string_value(&meta, &key, errors) {
                    match s.value().as_str() {
                        "optional" => attr.task = Some(TaskOpt::Optional),
                        "required" => attr.task = Some(TaskOpt::Required),
                        other => errors.push(
                            s.span(),
                            format!(
                                "unknown task support `{other}`; expected `task = \"optional\"` (a task when the client declares the tasks extension) or `task = \"required\"` (always a task; -32021 without the extension)"
                            ),
                        ),
                    }
                }
            }
            "task_start" => {
                if let Some(s) = string_value(&meta, &key, errors) {
                    match s.value().as_str() {
                        "call" => attr.task_start = Some(TaskStartOpt::Call),
                        "detach" => attr.task_start = Some(TaskStartOpt::Detach),
                        other => errors.push(
                            s.span(),
                            format!(
                                "unknown task start `{other}`; expected `task_start = \"call\"` (a task from the first line) or `task_start = \"detach\"` (MRTR rounds until `cx.detach()` and a checkpoint)"
                            ),
                        ),
                    }
                    task_start_span = Some(s.span());
                }
            }
            "uri" | "template" | "mime_type" => {
                if let Some(s) = string_value(&meta, &key, errors) {
                    if s.value().is_empty() {
                        errors.push(s.span(), format!("`{key}` cannot be empty"));
                    }
                    let slot = match key.as_str() {
                        "uri" => &mut attr.uri,
                        "template" => &mut attr.template,
                        _ => &mut attr.mime_type,
                    };
                    *slot = Some(s);
                }
            }
            "scopes" => parse_scopes(&meta, &mut attr.scopes, errors),
            "cache_ttl" => match &meta {
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => match i.base10_parse::<u64>() {
                        Ok(n) => attr.cache_ttl_secs = Some(n),
                        Err(_) => errors.push_spanned(i, "`cache_ttl` is a number of seconds"),
                    },
                    Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => match parse_duration(&s.value()) {
                        Some(n) => attr.cache_ttl_secs = Some(n),
                        None => errors.push_spanned(s, "cannot read this duration; write e.g. `cache_ttl = \"60s\"` or `cache_ttl = 0`"),
                    },
                    other => errors.push_spanned(other, "expected `cache_ttl = \"60s\"` or `cache_ttl = 60` (seconds)"),
                },
                _ => errors.push_spanned(&meta, "expected a value: `cache_ttl = \"60s\"`"),
            },
            "complete" => match &meta {
                Meta::List(l) => {
                    match l.parse_args_with(Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated) {
                        Ok(pairs) => {
                            for nv in pairs {
                                match nv.path.get_ident() {
                                    Some(arg) if attr.complete.iter().any(|(a, _)| a == arg) => errors.push(
                                        arg.span(),
                                        format!("`{arg}` has two completers; give one"),
                                    ),
                                    Some(arg) => attr.complete.push((arg.clone(), nv.value.clone())),
                                    None => errors.push_spanned(&nv.path, "expected an argument name: `complete(branch = complete_branch)`"),
                                }
                            }
                        }
                        Err(e) => errors.add(syn::Error::new(
                            e.span(),
                            format!("{e}; expected `complete(argument = completer_fn, …)`"),
                        )),
                    }
                }
                _ => errors.push_spanned(&meta, "expected `complete(argument = completer_fn, …)`"),
            },
            "read_only" | "destructive" | "idempotent" | "open_world" | "journal"
            | "early_answers" | "private" | "once" => {
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
                        "once" => {
                            attr.once = v;
                            if v {
                                once_span = Some(syn::spanned::Spanned::span(&meta));
                            }
                        }
                        "private" => attr.private = v,
                        _ => attr.journal = v,
                    }
                }
            }
            _ => errors.push(ident.span(), format!("unknown `{attr_name}` option `{key}`; expected one of {known}")),
        }
    }
    if let (Some(span), Some(_)) = (once_span, attr.task) {
        errors.push(
            span,
            "a single-use (`once`) tool cannot run as a task (`task = …`): its rounds are claimed in the ledger, a task's are not",
        );
    }
    if let (Some(span), None) = (task_start_span, attr.task) {
        errors.push(
            span,
            "`task_start` goes with `task = \"optional\"` or `task = \"required\"`",
        );
    }
    if kind == FnKind::Resource {
        match (&attr.uri, &attr.template) {
            (Some(_), Some(t)) => errors.push_spanned(
                t,
                "a resource has either a fixed `uri = \"…\"` or a `template = \"…{var}…\"`, not both",
            ),
            (None, None) => errors.push(
                proc_macro2::Span::call_site(),
                "`#[mcp_resource]` needs `uri = \"scheme://…\"` (a fixed resource) or `template = \"scheme://…/{var}\"` (a resource template)",
            ),
            _ => {}
        }
        if attr.uri.is_some()
            && let Some((arg, _)) = attr.complete.first()
        {
            errors.push(arg.span(), "a fixed resource has no variables to complete; `complete(…)` goes with a `template`");
        }
    }
    attr
}

const SCOPES_EXAMPLE: &str =
    "`scopes = \"notes:read notes:write\"` or `scopes = [\"notes:read\", \"notes:write\"]`";

/// `scopes = "a b"` (a space-separated list, as in OAuth) or `scopes = ["a", "b"]` (one
/// token per string). Each scope is an RFC 6749 scope token: `%x21 / %x23-5B / %x5D-7E`.
fn parse_scopes(meta: &Meta, scopes: &mut Vec<String>, errors: &mut Errors) {
    let Meta::NameValue(nv) = meta else {
        errors.push_spanned(meta, format!("expected a value: {SCOPES_EXAMPLE}"));
        return;
    };
    let mut add = |lit: &LitStr, list: bool, errors: &mut Errors| {
        let value = lit.value();
        if value.trim().is_empty() {
            errors.push(
                lit.span(),
                "a scope cannot be empty; list the scopes the caller needs (leave `scopes` out when it needs none)",
            );
            return;
        }
        let tokens: Vec<&str> = if list {
            value.split(' ').collect()
        } else {
            vec![value.as_str()]
        };
        for token in tokens {
            if token.is_empty() {
                errors.push(
                    lit.span(),
                    "scopes are separated by single spaces, without leading or trailing ones",
                );
                return;
            }
            if let Some(c) = token.chars().find(|c| !scope_char(*c)) {
                let what = if c == ' ' {
                    "a space (one string of the array form is one scope; write `scopes = \"a b\"` for a list)".to_owned()
                } else {
                    format!("{c:?}")
                };
                errors.push(
                    lit.span(),
                    format!(
                        "scope `{}` has {what}: a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)",
                        token.escape_debug()
                    ),
                );
                return;
            }
            if scopes.iter().any(|s| s == token) {
                errors.push(lit.span(), format!("scope `{token}` is given twice"));
                return;
            }
            scopes.push(token.to_owned());
        }
    };
    match &nv.value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => add(s, true, errors),
        Expr::Array(array) => {
            if array.elems.is_empty() {
                errors.push_spanned(
                    array,
                    "`scopes = []` requires nothing; leave `scopes` out, or list the scopes the caller needs",
                );
            }
            for elem in &array.elems {
                match elem {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => add(s, false, errors),
                    other => errors.push_spanned(
                        other,
                        format!("expected a string literal naming one scope: {SCOPES_EXAMPLE}"),
                    ),
                }
            }
        }
        other => errors.push_spanned(other, format!("expected {SCOPES_EXAMPLE}")),
    }
}

/// A character of an RFC 6749 scope token (`%x21 / %x23-5B / %x5D-7E`).
fn scope_char(c: char) -> bool {
    matches!(c, '\x21' | '\x23'..='\x5B' | '\x5D'..='\x7E')
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
            FnKind::Tool,
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
    fn crate_option_on_every_attribute() {
        for (kind, rest) in [
            (FnKind::Tool, quote!()),
            (FnKind::Prompt, quote!()),
            (FnKind::Resource, quote!(, uri = "x://y")),
        ] {
            let mut e = Errors::default();
            let a = parse_attr(quote!(crate = "::my_framework::mcp" #rest), kind, &mut e);
            let path = a.krate.expect("crate parsed");
            assert_eq!(quote!(#path).to_string(), ":: my_framework :: mcp");
            assert!(e.is_empty(), "{:?}", e.messages());
        }
        let mut e = Errors::default();
        let path = parse_flow_attr(quote!(crate = "crate::mcp"), &mut e).expect("flow crate");
        assert!(e.is_empty());
        assert_eq!(quote!(#path).to_string(), "crate :: mcp");
    }

    #[test]
    fn crate_option_refusals() {
        let mut e = Errors::default();
        let a = parse_attr(quote!(crate = "not a path"), FnKind::Tool, &mut e);
        assert!(a.krate.is_none());
        assert!(
            e.messages()[0].contains("is not a path"),
            "{:?}",
            e.messages()
        );
        let mut e = Errors::default();
        parse_attr(quote!(crate = my_framework), FnKind::Tool, &mut e);
        assert!(e.messages()[0].contains("expected a string literal"));
        let mut e = Errors::default();
        let path = parse_flow_attr(quote!(crate = "a::b", max_rounds = 2), &mut e);
        assert!(path.is_some());
        assert!(e.messages()[0].contains("takes no options (but `crate"));
    }

    #[test]
    fn scopes_lists_and_arrays() {
        let mut e = Errors::default();
        let a = parse_attr(
            quote!(scopes = "notes:read notes:write"),
            FnKind::Tool,
            &mut e,
        );
        assert!(e.is_empty());
        assert_eq!(a.scopes, ["notes:read", "notes:write"]);
        let a = parse_attr(quote!(scopes = ["a", "b:c"]), FnKind::Prompt, &mut e);
        assert!(e.is_empty());
        assert_eq!(a.scopes, ["a", "b:c"]);
        let a = parse_attr(
            quote!(uri = "x://y", scopes = "r"),
            FnKind::Resource,
            &mut e,
        );
        assert!(e.is_empty());
        assert_eq!(a.scopes, ["r"]);
        for bad in [
            quote!(scopes = ""),
            quote!(scopes = []),
            quote!(scopes = "a  b"),
            quote!(scopes = " a"),
            quote!(scopes = "a\"b"),
            quote!(scopes = "a\\b"),
            quote!(scopes = "é"),
            quote!(scopes = ["a b"]),
            quote!(scopes = "a a"),
            quote!(scopes = 3),
            quote!(scopes = [3]),
            quote!(scopes),
        ] {
            let mut e = Errors::default();
            parse_attr(bad.clone(), FnKind::Tool, &mut e);
            assert_eq!(e.messages().len(), 1, "{bad}: {:?}", e.messages());
        }
    }
}
