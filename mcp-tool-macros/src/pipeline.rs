//! The macros' pipeline: parse -> analyse -> expand, falling back on errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::analyse::{self, Inputs};
use crate::errors::Errors;
use crate::parse::{self, FnKind, Sig};
use crate::{expand, fallback};

/// Parses the item as a function, or gives the error and the item back.
fn item_fn(item: &TokenStream, kind: FnKind) -> Result<syn::ItemFn, TokenStream> {
    syn::parse2(item.clone()).map_err(|e| {
        let what = match kind {
            FnKind::Tool => "`#[mcp_tool]` goes on an `async fn` (the tool function)",
            FnKind::Flow => "`#[mcp_flow]` goes on an `async fn` (the flow function)",
            FnKind::Prompt => "`#[mcp_prompt]` goes on an `async fn` (the prompt function)",
            FnKind::Resource => "`#[mcp_resource]` goes on an `async fn` (the resource function)",
        };
        let err = syn::Error::new(e.span(), what).to_compile_error();
        quote!(#err #item)
    })
}

/// What the body sees: the context, a tool's argument names, a flow's parameters.
fn inputs<'a>(sig: &'a Sig) -> Inputs<'a> {
    let names = |pat: &syn::Pat| analyse::vars::pat_bindings(pat);
    Inputs {
        cx: &sig.cx,
        args: match sig.kind {
            FnKind::Tool | FnKind::Prompt | FnKind::Resource => sig
                .args()
                .map(|a| {
                    names(&a.pat)
                        .into_iter()
                        .map(|b| b.ident.to_string())
                        .collect()
                })
                .unwrap_or_default(),
            FnKind::Flow => Default::default(),
        },
        params: match sig.kind {
            FnKind::Tool | FnKind::Prompt | FnKind::Resource => Vec::new(),
            FnKind::Flow => sig
                .params
                .iter()
                .filter(|p| !p.state)
                .flat_map(|p| names(&p.pat))
                .collect(),
        },
        err: crate::rt::err_ty(&sig.ret),
    }
}

/// Expands `#[mcp_tool(attr)] item`.
pub fn expand_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_callable(FnKind::Tool, attr, item)
}

/// Expands `#[mcp_prompt(attr)] item`.
pub fn expand_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_callable(FnKind::Prompt, attr, item)
}

/// Expands `#[mcp_resource(attr)] item`.
pub fn expand_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_callable(FnKind::Resource, attr, item)
}

/// A tool, prompt or resource: the function kept for direct mode, and its registrable
/// struct (or, on errors, the errors and a stub that compiles).
fn expand_callable(kind: FnKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let f = match item_fn(&item, kind) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut errors = Errors::default();
    let attr = parse::parse_attr(attr, kind, &mut errors);
    crate::rt::with_root(attr.krate.clone(), || {
        expand_parsed(kind, &f, &attr, errors)
    })
}

/// [`expand_callable`] once the attribute is read: under its runtime root.
fn expand_parsed(
    kind: FnKind,
    f: &syn::ItemFn,
    attr: &parse::ToolAttr,
    mut errors: Errors,
) -> TokenStream {
    let sig = parse::parse_sig(f, kind, &mut errors);
    let before_body = errors.is_empty();
    let generated = sig.as_ref().map(|sig| {
        let a = analyse::analyse(&f.block, &inputs(sig), attr.journal, &mut errors);
        // direct mode asks with the keys the state machine derives
        let direct = expand::with_default_keys(f, &sig.cx, &a);
        let g = match kind {
            FnKind::Prompt => expand::expand_prompt(f, attr, sig, &a),
            FnKind::Resource => expand::expand_resource(f, attr, sig, &a),
            _ => expand::expand_tool(f, attr, sig, &a),
        };
        (direct, g)
    });
    let body_rejected = before_body && !errors.is_empty();
    match generated {
        Some((direct, g)) if errors.is_empty() => quote!(#[allow(dead_code)] #direct #g),
        _ => {
            let errs = errors.to_compile_errors();
            let stub = fallback::fallback(kind, &f.sig.ident, &f.vis);
            // A rejected body would only add the compiler's own (secondary) errors about the
            // same construct: keep the signature, drop the body.
            let f = if body_rejected {
                fallback::without_body(f)
            } else {
                f.clone()
            };
            quote!(#errs #[allow(dead_code)] #f #stub)
        }
    }
}

/// Expands `#[mcp_flow(attr)] item`.
pub fn expand_flow(attr: TokenStream, item: TokenStream) -> TokenStream {
    let f = match item_fn(&item, FnKind::Flow) {
        Ok(f) => f,
        Err(e) => return e,
    };
    let mut errors = Errors::default();
    let root = parse::parse_flow_attr(attr, &mut errors);
    crate::rt::with_root(root, || expand_flow_parsed(&f, errors))
}

/// [`expand_flow`] once the attribute is read: under its runtime root.
fn expand_flow_parsed(f: &syn::ItemFn, mut errors: Errors) -> TokenStream {
    let sig = parse::parse_sig(f, FnKind::Flow, &mut errors);
    let generated = sig.as_ref().map(|sig| {
        // flows are not journaled on their own: their keys are checked in the calling tool
        let a = analyse::analyse(&f.block, &inputs(sig), false, &mut errors);
        let direct = expand::with_default_keys(f, &sig.cx, &a);
        expand::expand_flow(f, &direct, sig, &a)
    });
    let errs = errors.to_compile_errors();
    match (generated, &sig) {
        (Some(g), _) if errors.is_empty() => g,
        // the call value still exists, so callers report nothing more
        (_, Some(sig)) => {
            let stub = expand::flow_stub(sig);
            quote!(#errs #stub)
        }
        (_, None) => quote!(#errs #[allow(dead_code)] #f),
    }
}
