//! The runtime as generated code names it, shared by analysis and expansion: the private
//! module's path ([`Rt`]), the plumbing that turns the runtime's results into the machine's
//! error type ([`plumb`], [`err_ty`]), the never-evaluated expression that names a flow call's
//! type ([`witness`]) and the names of the machine's own items ([`GeneratedNames`]).
//!
//! This is the only module that spells `::mcp_tool_runtime::__private::v…`; everything else
//! writes `quote!(#p::name)` with `let p = Rt;`. The runtime's root is `::mcp_tool_runtime`
//! unless the attribute says `crate = "path"` (a crate that re-exports the runtime): the
//! pipeline runs each expansion inside [`with_root`], and every [`Rt`] written during it names
//! that root. A scoped per-thread setting rather than a parameter, because some fifty
//! places in analysis and expansion write the path, and a macro invocation runs on one
//! thread from start to end.

use std::cell::RefCell;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Lifetime};

thread_local! {
    /// The runtime's root for the expansion under way (`None`: `::mcp_tool_runtime`).
    static ROOT: RefCell<Option<syn::Path>> = const { RefCell::new(None) };
}

/// Runs `f` with `root` (the value of `crate = "…"`, if given) as the runtime's root of every
/// [`Rt`] it writes; the previous root is restored afterwards.
pub fn with_root<T>(root: Option<syn::Path>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<syn::Path>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            ROOT.with(|r| *r.borrow_mut() = previous);
        }
    }
    let _restore = Restore(ROOT.with(|r| r.replace(root)));
    f()
}

/// The name of the runtime's versioned private module, from this crate's version (which the
/// runtime pins exactly): `v0_1_0` for 0.1.0. A runtime of another version has no module of
/// that name, so a mismatched pair fails to compile at every generated path with "could not
/// find `v0_1_0` in `__private`" (see the runtime's `__private::v0_1_0`).
pub fn private_module() -> Ident {
    format_ident!(
        "v{}",
        env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_")
    )
}

/// The runtime's root as generated code names it, with its tokens at `span`: the path given
/// with `crate = "…"`, else `::mcp_tool_runtime`.
pub fn root_at(span: Span) -> TokenStream {
    ROOT.with(|r| match &*r.borrow() {
        Some(path) => respan(path.to_token_stream(), span),
        None => quote_spanned!(span=> ::mcp_tool_runtime),
    })
}

/// `tokens` with every token at `span` (a path has no groups, but they are handled too).
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            match &mut t {
                TokenTree::Group(g) => {
                    let mut inner =
                        proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                    inner.set_span(span);
                    *g = inner;
                }
                other => other.set_span(span),
            }
            t
        })
        .collect()
}

/// The runtime's private module, `::mcp_tool_runtime::__private::v0_1_0` (or under the root
/// given with `crate = "…"`), at the macro's call site.
#[derive(Clone, Copy)]
pub struct Rt;

impl Rt {
    /// The same path with its tokens at `span` (where a diagnostic about it points).
    pub fn at(self, span: Span) -> RtAt {
        RtAt(span)
    }
}

impl ToTokens for Rt {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        RtAt(Span::call_site()).to_tokens(tokens);
    }
}

/// [`Rt`] spanned at a given place (see [`Rt::at`]).
#[derive(Clone, Copy)]
pub struct RtAt(Span);

impl ToTokens for RtAt {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let root = root_at(self.0);
        let version = Ident::new(&private_module().to_string(), self.0);
        tokens.extend(quote_spanned!(self.0=> #root::__private::#version));
    }
}

/// `<R as ToolReturn>::Error` for the function's return type `R`, spanned at it (so a type
/// that is not a `Result<T, E: From<ToolError>>` is reported there).
pub fn err_ty(ret: &syn::Type) -> TokenStream {
    let p = Rt;
    quote_spanned!(ret.span()=> <#ret as #p::ToolReturn>::Error)
}

/// `expr` (a `Result<T, ToolError>` of the generated plumbing) unwrapped in the machine:
/// `__private::ok::<_, E>(expr, cx)?` records the error in the context and returns it as the
/// machine's error type `err` ([`err_ty`]). The `ok` path is spanned at `err`'s first token
/// (the return type, where a wrong error type is reported).
pub fn plumb(cx: &Ident, err: &TokenStream, expr: TokenStream) -> TokenStream {
    let span = err
        .clone()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site);
    let p = Rt.at(span);
    let ok = quote_spanned!(span=> #p::ok::<_, #err>);
    quote!(#ok(#expr, #cx)?)
}

/// An expression of the flow call's type that is never evaluated (`if false { Some(f(loop
/// {}, …)) } else { None }`, `f` the called `path`): names the flow's type without naming its
/// path as a type, so that a function that is not a flow gets `Flow`'s diagnostic, not a path
/// error.
pub fn witness(path: &syn::Path, call: &syn::ExprCall) -> TokenStream {
    let args = call.args.iter().map(|_| quote!(loop {}));
    quote_spanned! {call.span()=>
        if false {
            ::core::option::Option::Some(#path(#(#args),*))
        } else {
            ::core::option::Option::None
        }
    }
}

/// Names of the machine function's own items, which the lowered code jumps through and the
/// expansion declares.
pub struct GeneratedNames {
    /// The state slot.
    pub st: Ident,
    /// The state enum.
    pub state: Ident,
    /// The dispatch loop label.
    pub dispatch: Lifetime,
    /// The function converting the final value.
    pub finish: Ident,
}

impl GeneratedNames {
    /// The fixed generated names.
    pub fn new() -> Self {
        GeneratedNames {
            st: format_ident!("__mcp_st"),
            state: format_ident!("__mcp_State"),
            dispatch: Lifetime::new("'__mcp_dispatch", Span::call_site()),
            finish: format_ident!("__mcp_finish"),
        }
    }
}
