//! The runtime as generated code names it, shared by analysis and expansion: the private
//! module's path ([`Rt`]), the plumbing that turns the runtime's results into the machine's
//! error type ([`plumb`], [`err_ty`]), the never-evaluated expression that names a flow call's
//! type ([`witness`]) and the names of the machine's own items ([`GeneratedNames`]).
//!
//! This is the only module that spells `::mcp_tool_runtime::__private`; everything else
//! writes `quote!(#p::name)` with `let p = Rt;`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Lifetime};

/// The runtime's private module, `::mcp_tool_runtime::__private`, at the macro's call site.
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
        tokens.extend(quote_spanned!(self.0=> ::mcp_tool_runtime::__private));
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
