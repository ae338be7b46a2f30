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
/// that name, so a mismatched pair fails to compile at the expansion's `use` of it ("no
/// `v0_1_0` in `…::__private`", see [`scoped`] and the runtime's `__private::v0_1_0`).
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

/// Whether the function's return type can be named by the block's alias `__mcp_Ret` (see
/// [`scoped`]): not when it has a reference, a lifetime or an `impl` (an alias cannot
/// elide a lifetime).
fn aliasable(ret: &syn::Type) -> bool {
    fn plain(tokens: TokenStream) -> bool {
        tokens.into_iter().all(|t| match t {
            TokenTree::Punct(p) => p.as_char() != '&' && p.as_char() != '\'',
            TokenTree::Ident(i) => i != "impl" && i != "dyn",
            TokenTree::Group(g) => plain(g.stream()),
            TokenTree::Literal(_) => true,
        })
    }
    plain(ret.to_token_stream())
}

/// The function's return type `R` as the generated items inside [`scoped`] name it:
/// `__mcp_Ret` (spanned at it), or the type itself when it cannot be aliased.
pub fn ret_ty(ret: &syn::Type) -> TokenStream {
    if aliasable(ret) {
        quote_spanned!(ret.span()=> __mcp_Ret)
    } else {
        ret.to_token_stream()
    }
}

/// `<R as ToolReturn>::Error` for the function's return type `R`, spanned at it (so a type
/// that is not a `Result<T, E: From<ToolError>>` is reported there).
pub fn err_ty(ret: &syn::Type) -> TokenStream {
    if aliasable(ret) {
        return quote_spanned!(ret.span()=> __mcp_Err);
    }
    let p = Rt.at(ret.span());
    let r = ret_ty(ret);
    quote_spanned!(ret.span()=> <#r as #p::ToolReturn>::Error)
}

/// `<R as ToolReturn>::Ok` for the function's return type `R`, spanned at it.
pub fn ok_ty(ret: &syn::Type) -> TokenStream {
    if aliasable(ret) {
        return quote_spanned!(ret.span()=> __mcp_Ok);
    }
    let p = Rt.at(ret.span());
    let r = ret_ty(ret);
    quote_spanned!(ret.span()=> <#r as #p::ToolReturn>::Ok)
}

/// `expr` (a `Result<T, ToolError>` of the generated plumbing) unwrapped in the machine:
/// `__mcp_p.ok(expr, cx)?` records the error in the context and returns it as the machine's
/// error type (see [`ok_fn`], the plumbing declared once in the machine function).
pub fn plumb(cx: &Ident, _err: &TokenStream, expr: TokenStream) -> TokenStream {
    quote!(__mcp_p.ok(#expr, #cx)?)
}

/// The machine's plumbing `let __mcp_p = __private::plumb::<E>();` (`E` the machine's
/// error type `err`, [`err_ty`]) that [`plumb`] and the generated requests and suspensions
/// call: its path spanned at `err`'s first token (the return type, where a wrong error type
/// is reported, once).
pub fn ok_fn(err: &TokenStream) -> TokenStream {
    let span = err
        .clone()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site);
    let p = Rt.at(span);
    let new = quote_spanned!(span=> #p::plumb::<#err>);
    quote!(let __mcp_p = #new();)
}

/// An expression of the flow call's type that is never evaluated (`false.then(|| f(loop {},
/// …))`, `f` the called `path`: `None` of the call's type): names the flow's type without naming its
/// path as a type, so that a function that is not a flow gets `Flow`'s diagnostic, not a path
/// error.
pub fn witness(path: &syn::Path, call: &syn::ExprCall) -> TokenStream {
    let args = call.args.iter().map(|_| quote!(loop {}));
    quote_spanned! {call.span()=>
        false.then(|| #path(#(#args),*))
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
    /// The function returning the final value (`__private::done`).
    pub finish: TokenStream,
}

impl GeneratedNames {
    /// The fixed generated names.
    pub fn new() -> Self {
        GeneratedNames {
            st: format_ident!("__mcp_st"),
            state: format_ident!("__mcp_State"),
            dispatch: Lifetime::new("'__mcp_dispatch", Span::call_site()),
            finish: {
                let p = Rt;
                quote!(#p::done)
            },
        }
    }
}

/// The name generated items use for the runtime's private module inside [`scoped`].
pub const ALIAS: &str = "__mcp";

/// `items` (impls and the like, never the items the user's module names) inside
/// `const _: () = { use <root>::__private::v… as __mcp; … };` with the dispatch traits in
/// scope (`autoref::traits`), the function's return type `ret` as `type __mcp_Ret` with its
/// `__mcp_Ok` and `__mcp_Err` (when it can be aliased, [`ret_ty`]) and lints allowed (the
/// function as written is compiled too, outside the block, and reports the body's warnings
/// once), with every spelled-out path to
/// the private module, and to `Result`, `Option`, `String`, `Vec` and `Box`, shortened to the
/// alias (`__mcp::ToolContext`, `__mcp::Option`): the expansion the compiler reads stays the
/// same items, in a fraction of the tokens. A version mismatch is then reported once, at the
/// `use` (``no `v0_1_0` in `__private` ``).
pub fn scoped(items: TokenStream, ret: Option<&syn::Type>) -> TokenStream {
    let alias = Ident::new(ALIAS, Span::call_site());
    let root = Rt;
    // `__mcp_Ok` only where it is named (a flow's expansion does not)
    let names_ok = mentions(&items, "__mcp_Ok");
    let ret = ret.filter(|r| aliasable(r)).map(|r| {
        let r = shorten(r.to_token_stream());
        let ok = names_ok.then(|| quote!(type __mcp_Ok = <__mcp_Ret as #alias::ToolReturn>::Ok;));
        quote! {
            type __mcp_Ret = #r;
            #ok
            type __mcp_Err = <__mcp_Ret as #alias::ToolReturn>::Error;
        }
    });
    let body = shorten(items);
    quote! {
        #[allow(warnings, clippy::all)]
        const _: () = {
            use #root as #alias;
            use #alias::autoref::traits::*;
            #ret
            #body
        };
    }
}

/// True when `tokens` contain the identifier `name` (in groups too).
fn mentions(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}

/// The paths [`shorten`] replaces with `__mcp::<last segment>` (the runtime re-exports each).
const STD_PATHS: [[&str; 3]; 5] = [
    ["core", "result", "Result"],
    ["core", "option", "Option"],
    ["std", "string", "String"],
    ["std", "vec", "Vec"],
    ["std", "boxed", "Box"],
];

/// The keywords after which a path starts (after any other identifier, `::` goes on a path).
const KEYWORDS: [&str; 26] = [
    "as", "dyn", "impl", "for", "in", "return", "mut", "const", "static", "where", "let", "if",
    "else", "match", "move", "break", "ref", "use", "type", "struct", "enum", "fn", "pub",
    "unsafe", "async", "while",
];

/// `tokens` with the spelled-out paths of [`scoped`] shortened (in groups too).
fn shorten(tokens: TokenStream) -> TokenStream {
    let mut root: Vec<String> = root_at(Span::call_site())
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    root.extend([":", ":", "__private", ":", ":"].map(String::from));
    root.push(private_module().to_string());
    let std_paths: Vec<Vec<String>> = STD_PATHS
        .iter()
        .map(|segs| {
            segs.iter()
                .flat_map(|s| [":".to_owned(), ":".to_owned(), (*s).to_owned()])
                .collect()
        })
        .collect();
    shorten_with(tokens, &root, &std_paths)
}

/// [`shorten`] with the token texts of the runtime path and of the std paths.
fn shorten_with(tokens: TokenStream, root: &[String], std_paths: &[Vec<String>]) -> TokenStream {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::with_capacity(tts.len());
    let matches = |at: usize, pat: &[String]| {
        pat.len() <= tts.len() - at
            && pat.iter().zip(&tts[at..]).all(|(p, t)| match t {
                TokenTree::Ident(i) => i == p,
                TokenTree::Punct(c) => p.len() == 1 && p.starts_with(c.as_char()),
                _ => false,
            })
    };
    let mut i = 0;
    while i < tts.len() {
        // a path starts here, not in the middle of another one (`a::core::…`)
        let starts = |pat: &[String]| match out.last() {
            None => true,
            // after a keyword (`dyn`, `impl`, …) or a lifetime (`&'a …`)
            Some(TokenTree::Ident(prev)) => {
                KEYWORDS.iter().any(|k| prev == k)
                    || matches!(
                        out.len().checked_sub(2).map(|j| &out[j]),
                        Some(TokenTree::Punct(q)) if q.as_char() == '\''
                    )
            }
            Some(TokenTree::Punct(c)) if c.as_char() == ':' => {
                // `x: ::core::…` (ascription), not `a:: core::…` (a path going on)
                let before = out.len().checked_sub(2).map(|j| &out[j]);
                let colons = matches!(
                    before,
                    Some(TokenTree::Punct(b))
                        if b.as_char() == ':' && b.spacing() == proc_macro2::Spacing::Joint
                );
                !colons && (pat[0] == ":" || c.spacing() == proc_macro2::Spacing::Alone)
            }
            Some(_) => true,
        };
        if starts(root) && matches(i, root) {
            let span = tts[i + root.len() - 1].span();
            out.push(TokenTree::Ident(Ident::new(ALIAS, span)));
            i += root.len();
            continue;
        }
        if let Some(pat) = std_paths.iter().find(|p| starts(p) && matches(i, p)) {
            let span = tts[i].span();
            let last = tts[i + pat.len() - 1].to_string();
            out.push(TokenTree::Ident(Ident::new(ALIAS, span)));
            let mut c1 = proc_macro2::Punct::new(':', proc_macro2::Spacing::Joint);
            c1.set_span(span);
            let mut c2 = proc_macro2::Punct::new(':', proc_macro2::Spacing::Alone);
            c2.set_span(span);
            out.push(TokenTree::Punct(c1));
            out.push(TokenTree::Punct(c2));
            out.push(TokenTree::Ident(Ident::new(&last, span)));
            i += pat.len();
            continue;
        }
        let t = match &tts[i] {
            TokenTree::Group(g) => {
                let mut inner = proc_macro2::Group::new(
                    g.delimiter(),
                    shorten_with(g.stream(), root, std_paths),
                );
                inner.set_span(g.span());
                TokenTree::Group(inner)
            }
            other => other.clone(),
        };
        out.push(t);
        i += 1;
    }
    out.into_iter().collect()
}
