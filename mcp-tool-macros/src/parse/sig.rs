//! The signature of a tool or flow function: the context parameter, the arguments (a tool's
//! one `Args` type, a flow's ordinary parameters), the `State<T>` parameters, the return type.
//!
//! Types are not recognised by name: the parameters of a tool after its arguments are taken by
//! position and checked through `FromContext` by the generated code (a type spelled `State<…>`
//! right after the context only says that there are no arguments); the return type is any
//! `Result<T, E>` (an alias too) and is checked through traits by the generated code.

use syn::visit_mut::VisitMut;
use syn::{FnArg, GenericArgument, Ident, Lifetime, Pat, PathArguments, ReturnType, Type};

use crate::errors::Errors;

/// What the macro is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// `#[mcp_tool]`.
    Tool,
    /// `#[mcp_flow]`.
    Flow,
    /// `#[mcp_prompt]`.
    Prompt,
    /// `#[mcp_resource]`.
    Resource,
}

impl FnKind {
    /// `tool` or `flow`, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            FnKind::Tool => "tool",
            FnKind::Flow => "flow",
            FnKind::Prompt => "prompt",
            FnKind::Resource => "resource",
        }
    }
}

/// One parameter after the context.
#[derive(Clone)]
pub struct Param {
    /// Its pattern.
    pub pat: Pat,
    /// Its type (for a flow, elided lifetimes named [`FLOW_LIFETIME`]).
    pub ty: Type,
    /// A `FromContext` parameter such as `State<T>` (taken from the context in every round,
    /// never stored). For a tool, prompt or resource: every parameter but the arguments (the
    /// one right after the context, unless its type is spelled `State<…>`), recognised by
    /// position and checked through the trait; for a flow: the ones spelled `State<…>`.
    pub state: bool,
}

/// The lifetime of a flow call value (`name<'__mcp_a>(&'__mcp_a mut ToolContext, …)`).
pub const FLOW_LIFETIME: &str = "'__mcp_a";

/// What the macro needs from the signature.
pub struct Sig {
    /// Tool or flow.
    pub kind: FnKind,
    /// The function's identifier.
    pub ident: Ident,
    /// The function's visibility (the generated struct takes it).
    pub vis: syn::Visibility,
    /// The `ToolContext` parameter's binding (`cx`).
    pub cx: Ident,
    /// Its type as written (`&mut ToolContext`, `&mut mcp_tool_runtime::ToolContext`).
    pub cx_ty: Type,
    /// Every parameter after the context, in order.
    pub params: Vec<Param>,
    /// The return type as written.
    pub ret: Type,
}

impl Sig {
    /// A tool's arguments parameter (its one non-`State` parameter).
    pub fn args(&self) -> Option<&Param> {
        self.params.iter().find(|p| !p.state)
    }

    /// The `State<T>` parameters.
    pub fn states(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.state)
    }
}

/// Checks the signature, recording every problem; returns what it could read.
pub fn parse_sig(f: &syn::ItemFn, kind: FnKind, errors: &mut Errors) -> Option<Sig> {
    let sig = &f.sig;
    let noun = kind.noun();
    let attr = match kind {
        FnKind::Tool => "mcp_tool",
        FnKind::Flow => "mcp_flow",
        FnKind::Prompt => "mcp_prompt",
        FnKind::Resource => "mcp_resource",
    };
    let mut ok = true;
    if sig.asyncness.is_none() {
        errors.push(
            sig.fn_token.span,
            format!(
                "`#[{attr}]` needs an `async fn`: write `async fn name(cx: &mut ToolContext, …) -> Result<T, ToolError>`"
            ),
        );
        ok = false;
    }
    if let Some(c) = &sig.constness {
        errors.push(c.span, format!("a {noun} cannot be a `const fn`"));
        ok = false;
    }
    if let Some(u) = &sig.unsafety {
        errors.push(u.span, format!("a {noun} cannot be an `unsafe fn`"));
        ok = false;
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(abi, format!("a {noun} cannot have an `extern` ABI"));
        ok = false;
    }
    if let Some(v) = &sig.variadic {
        errors.push_spanned(v, format!("a {noun} cannot be variadic"));
        ok = false;
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push_spanned(
            &sig.generics,
            format!(
                "a {noun} cannot be generic: its state and schemas are fixed at compile time; use concrete types"
            ),
        );
        ok = false;
    }
    let mut inputs = sig.inputs.iter();
    let cx_ty = match sig.inputs.first() {
        Some(FnArg::Typed(pt)) => (*pt.ty).clone(),
        _ => {
            let root = crate::rt::root_at(proc_macro2::Span::call_site());
            syn::parse_quote!(&mut #root::ToolContext)
        }
    };
    let cx = match inputs.next() {
        Some(FnArg::Receiver(r)) => {
            errors.push_spanned(
                r,
                format!(
                    "a {noun} is a free function, not a method: remove `self` and write `cx: &mut ToolContext` first \
                     (application state comes as `State<T>` parameters)"
                ),
            );
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
                        format!(
                            "the first parameter of a {noun} is the context: `cx: &mut ToolContext`"
                        ),
                    );
                    None
                }
            }
        }
        None => {
            errors.push(
                sig.paren_token.span.join(),
                format!("a {noun} takes the context first: `(cx: &mut ToolContext, …)`"),
            );
            None
        }
    };
    let mut params = Vec::new();
    for input in inputs {
        let pt = match input {
            FnArg::Typed(pt) => pt,
            FnArg::Receiver(r) => {
                errors.push_spanned(r, format!("a {noun} cannot take `self`"));
                ok = false;
                continue;
            }
        };
        let state = match kind {
            // by position: the one after the context is the arguments (unless spelled
            // `State<…>`, so a tool without arguments can take state first); the others are
            // `FromContext` parameters, checked through the trait by the generated code
            FnKind::Tool | FnKind::Prompt | FnKind::Resource => {
                !params.is_empty() || is_state(&pt.ty)
            }
            FnKind::Flow => is_state(&pt.ty),
        };
        let mut ty = (*pt.ty).clone();
        match kind {
            FnKind::Tool | FnKind::Prompt | FnKind::Resource if !state => {
                if let Pat::Ident(pi) = &*pt.pat
                    && let Some(m) = &pi.mutability
                {
                    errors.push(
                        m.span,
                        format!("the {} are read again every round, so they cannot be `mut`; bind a copy instead: `let mut a = {};`", args_noun(kind), args_name(kind)),
                    );
                    ok = false;
                }
                if let Type::Reference(_) = &*pt.ty {
                    errors.push_spanned(
                        &pt.ty,
                        format!(
                            "the {} are owned: write `{}: T`, where `T: Deserialize + JsonSchema`",
                            args_noun(kind),
                            args_name(kind)
                        ),
                    );
                    ok = false;
                }
            }
            FnKind::Flow => {
                if let Type::ImplTrait(_) = &*pt.ty {
                    errors.push_spanned(
                        &pt.ty,
                        "a flow parameter cannot be `impl Trait`: the call builds a value that holds it; use a concrete type",
                    );
                    ok = false;
                    continue;
                }
                if !name_elided_lifetimes(&mut ty) {
                    errors.push_spanned(
                        &pt.ty,
                        "a flow parameter cannot name a lifetime (a flow is not generic); leave it elided: `&str`, `&[T]`",
                    );
                    ok = false;
                    continue;
                }
            }
            FnKind::Tool | FnKind::Prompt | FnKind::Resource => {}
        }
        if state && !matches!(&*pt.pat, Pat::Ident(_) | Pat::Wild(_)) {
            errors.push_spanned(
                &pt.pat,
                "bind a `FromContext` parameter such as `State<T>` to a name: `db: State<Db>`",
            );
            ok = false;
            continue;
        }
        params.push(Param {
            pat: (*pt.pat).clone(),
            ty,
            state,
        });
    }
    let ret = match &sig.output {
        ReturnType::Type(_, ty) if surely_not_result(ty) => {
            errors.push_spanned(
                ty,
                format!(
                    "a {noun} returns `Result<T, E>` (or an alias of it, such as `anyhow::Result<T>`): \
                     write `-> Result<{}, ToolError>`",
                    quote::ToTokens::to_token_stream(&**ty)
                ),
            );
            return None;
        }
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            errors.push(
                sig.paren_token.span.close(),
                format!("a {noun} returns `Result<T, E>`: add `-> Result<T, ToolError>`"),
            );
            return None;
        }
    };
    let cx = cx?;
    if !ok {
        return None;
    }
    Some(Sig {
        kind,
        ident: sig.ident.clone(),
        vis: f.vis.clone(),
        cx,
        cx_ty,
        params,
        ret,
    })
}

/// What the non-`State` parameter of `kind` holds, for messages.
fn args_noun(kind: FnKind) -> &'static str {
    match kind {
        FnKind::Resource => "template variables",
        _ => "arguments",
    }
}

/// The conventional name of that parameter.
fn args_name(kind: FnKind) -> &'static str {
    match kind {
        FnKind::Resource => "vars",
        _ => "args",
    }
}

/// Return types that are visibly not a `Result` (a shortcut to one clear message; anything
/// else, aliases included, is checked through the `ToolReturn` trait).
fn surely_not_result(ty: &Type) -> bool {
    const NOT: &[&str] = &[
        "String",
        "str",
        "bool",
        "char",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
        "Vec",
        "Option",
        "Box",
        "CallToolResult",
        "Value",
        "HashMap",
        "BTreeMap",
    ];
    match ty {
        Type::Tuple(_)
        | Type::Reference(_)
        | Type::ImplTrait(_)
        | Type::Slice(_)
        | Type::Array(_)
        | Type::Never(_) => true,
        Type::Path(tp) if tp.qself.is_none() => tp
            .path
            .segments
            .last()
            .is_some_and(|s| NOT.contains(&s.ident.to_string().as_str())),
        _ => false,
    }
}

/// `State<…>` (any path ending in `State` with one type argument).
fn is_state(ty: &Type) -> bool {
    let Type::Path(tp) = ty else { return false };
    let Some(seg) = tp.path.segments.last() else {
        return false;
    };
    seg.ident == "State"
        && matches!(&seg.arguments, PathArguments::AngleBracketed(ab)
            if ab.args.len() == 1 && matches!(ab.args[0], GenericArgument::Type(_)))
}

/// Names every elided lifetime (`&T`, `'_`) [`FLOW_LIFETIME`]; false when the type names a
/// lifetime of its own.
fn name_elided_lifetimes(ty: &mut Type) -> bool {
    struct Name {
        ok: bool,
    }
    impl VisitMut for Name {
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            match &r.lifetime {
                None => r.lifetime = Some(Lifetime::new(FLOW_LIFETIME, r.and_token.span)),
                Some(l) if l.ident == "_" => {
                    r.lifetime = Some(Lifetime::new(FLOW_LIFETIME, l.apostrophe))
                }
                Some(l) if l.ident == "static" => {}
                Some(_) => self.ok = false,
            }
            syn::visit_mut::visit_type_reference_mut(self, r);
        }
        fn visit_lifetime_mut(&mut self, l: &mut Lifetime) {
            if l.ident == "_" {
                *l = Lifetime::new(FLOW_LIFETIME, l.apostrophe);
            } else if l.ident != "static" && l.ident != "__mcp_a" {
                self.ok = false;
            }
        }
    }
    let mut n = Name { ok: true };
    n.visit_type_mut(ty);
    n.ok
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

#[cfg(test)]
mod tests {
    use super::*;
    use quote::{ToTokens, quote};

    fn parse(f: proc_macro2::TokenStream, kind: FnKind) -> (Option<Sig>, Vec<String>) {
        let f: syn::ItemFn = syn::parse2(f).unwrap();
        let mut e = Errors::default();
        let s = parse_sig(&f, kind, &mut e);
        (s, e.messages())
    }

    #[test]
    fn tool_signature() {
        let (s, e) = parse(
            quote! {
                pub async fn t(cx: &mut ToolContext, args: A, db: State<Db>, _cfg: State<Cfg>) -> anyhow::Result<String> { todo!() }
            },
            FnKind::Tool,
        );
        assert!(e.is_empty(), "{e:?}");
        let s = s.unwrap();
        assert_eq!(s.cx, "cx");
        assert_eq!(s.params.len(), 3);
        assert_eq!(s.states().count(), 2);
        assert_eq!(s.args().unwrap().pat.to_token_stream().to_string(), "args");
        let (s, e) = parse(quote! { fn t<T>(x: u32) -> u32 { 1 } }, FnKind::Tool);
        assert!(s.is_none());
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(e[3].contains("Result<u32, ToolError>"), "{e:?}");
        let (s, e) = parse(
            quote! { async fn t(cx: &mut ToolContext, a: A, b: B, c: mcp_tool_runtime::State<C>) -> R { 1 } },
            FnKind::Tool,
        );
        assert!(e.is_empty(), "{e:?}");
        let s = s.unwrap();
        assert_eq!(s.states().count(), 2);
        assert_eq!(s.args().unwrap().pat.to_token_stream().to_string(), "a");
        let (s, e) = parse(
            quote! { async fn t(cx: &mut ToolContext, db: State<Db>, c: AppState<C>) -> R { 1 } },
            FnKind::Tool,
        );
        assert!(e.is_empty(), "{e:?}");
        let s = s.unwrap();
        assert_eq!(s.states().count(), 2);
        assert!(s.args().is_none());
    }

    #[test]
    fn flow_lifetimes() {
        let (s, e) = parse(
            quote! { async fn f(cx: &mut ToolContext, q: &str, v: Vec<&'_ [u8]>, n: u32) -> R { 1 } },
            FnKind::Flow,
        );
        assert!(e.is_empty(), "{e:?}");
        let tys: Vec<String> = s
            .unwrap()
            .params
            .iter()
            .map(|p| p.ty.to_token_stream().to_string())
            .collect();
        assert_eq!(tys, ["& '__mcp_a str", "Vec < & '__mcp_a [u8] >", "u32"]);
        let (s, e) = parse(
            quote! { async fn f<'x>(cx: &mut ToolContext, q: &'x str) -> R { 1 } },
            FnKind::Flow,
        );
        assert!(s.is_none());
        assert_eq!(e.len(), 2, "{e:?}");
    }
}
