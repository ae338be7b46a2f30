//! The macro's pipeline: parse -> analyse -> expand, falling back on errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::errors::Errors;
use crate::{analyse, expand, fallback, parse};

/// Expands `#[mcp_tool(attr)] item`.
pub fn expand_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                "`#[mcp_tool]` goes on an `async fn` (the tool function)",
            );
            let err = e.to_compile_error();
            return quote!(#err #item);
        }
    };
    let attr = parse::parse_attr(attr, &mut errors);
    let sig = parse::parse_sig(&f, &mut errors);
    let before_body = errors.is_empty();
    let generated = sig.as_ref().map(|sig| {
        let a = analyse::analyse(&f.block, &sig.cx, attr.journal, &mut errors);
        // direct mode asks with the keys the state machine derives
        let direct = expand::with_default_keys(&f, &sig.cx, &a);
        (direct, expand::expand(&f, &attr, sig, &a))
    });
    let body_rejected = before_body && !errors.is_empty();
    match generated {
        Some((direct, g)) if errors.is_empty() => quote!(#[allow(dead_code)] #direct #g),
        _ => {
            let errs = errors.to_compile_errors();
            let stub = fallback::fallback(&f.sig.ident);
            // A rejected body would only add the compiler's own (secondary) errors about the
            // same construct: keep the signature, drop the body.
            let f = if body_rejected {
                fallback::without_body(&f)
            } else {
                f
            };
            quote!(#errs #[allow(dead_code)] #f #stub)
        }
    }
}
