//! Recognising suspension points: `<cx>.{ask|elicit|elicit_url|sample|roots|round|checkpoint}(…)`
//! followed by builder calls (`.key("…")`, …) and `.await`.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;

use super::refusal::Refusal;
use crate::rt::Rt;
use syn::{
    AngleBracketedGenericArguments, Expr, ExprMethodCall, GenericArgument, Ident, LitStr, Type,
};

/// The kind of a suspension point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `cx.ask::<T>(message)` -> `T`.
    Ask,
    /// `cx.elicit::<T>(message)` -> `Elicitation<T>`.
    Elicit,
    /// `cx.elicit_url(message, url)`.
    ElicitUrl,
    /// `cx.sample(Sample::user(..))`.
    Sample,
    /// `cx.roots()`.
    Roots,
    /// `cx.round((a, b, ..))`: several requests in one round.
    Round,
    /// `cx.checkpoint()`: a round with the state only.
    Checkpoint,
    /// `flow_fn(cx, …)`: a call of an `#[mcp_flow]`.
    Flow,
}

impl Kind {
    fn from_method(m: &Ident) -> Option<Kind> {
        Some(match m.to_string().as_str() {
            "ask" => Kind::Ask,
            "elicit" => Kind::Elicit,
            "elicit_url" => Kind::ElicitUrl,
            "sample" => Kind::Sample,
            "roots" => Kind::Roots,
            "round" => Kind::Round,
            "checkpoint" => Kind::Checkpoint,
            _ => return None,
        })
    }

    /// True for a method name that starts a suspension point.
    pub fn is_method(name: &str) -> bool {
        matches!(
            name,
            "ask" | "elicit" | "elicit_url" | "sample" | "roots" | "round" | "checkpoint"
        )
    }
}

/// A capability a request needs from the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cap {
    /// `elicitation` (ask, elicit, elicit_url).
    Elicitation,
    /// `sampling`.
    Sampling,
    /// `roots`.
    Roots,
}

/// One request of a suspension point: the standalone builder expression that makes it.
#[derive(Clone)]
pub struct Part {
    /// The builder expression (`Ask::<T>::new(msg)`, `Sample::user(..)`, ...), `.key(..)` removed.
    pub builder: Expr,
    /// An explicit `.key("…")`.
    pub key: Option<LitStr>,
    /// The capability it needs.
    pub cap: Cap,
    /// `T` of an `ask`/`elicit`, when visible.
    pub elicit_ty: Option<Type>,
    /// Where it is written.
    pub span: Span,
    /// Its tokens (for errors spanning the whole request).
    pub tokens: TokenStream,
}

/// A flow call: `path(cx, args…)`, optionally `.key(site)`, awaited.
#[derive(Clone)]
pub struct FlowCall {
    /// The call as written, without `.key(..)`.
    pub call: syn::ExprCall,
    /// The called function's path.
    pub path: syn::Path,
    /// `.key(…)` on the call: the call site's name, literal or computed.
    pub key: Option<Expr>,
}

impl FlowCall {
    /// The flow function's name.
    pub fn name(&self) -> String {
        self.path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default()
    }

    /// A literal `.key("…")`.
    pub fn literal_key(&self) -> Option<LitStr> {
        match &self.key {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) => Some(s.clone()),
            _ => None,
        }
    }
}

/// A recognised suspension point.
#[derive(Clone)]
pub struct Susp {
    /// Which method.
    pub kind: Kind,
    /// The method name token (for messages).
    #[allow(dead_code)]
    pub method: Ident,
    /// The requests made (one, or several for `round`, none for `checkpoint`).
    pub parts: Vec<Part>,
    /// The whole `cx.…(..).await` expression span.
    #[allow(dead_code)]
    pub span: Span,
    /// The whole expression's tokens (for errors spanning all of it).
    pub tokens: TokenStream,
    /// The whole expression's text, shortened, for messages and docs.
    pub text: String,
    /// For a flow call, the call.
    pub flow: Option<FlowCall>,
}

/// If `base` (awaited) is `path(cx, …)` or `path(cx, …).key(site)`, the flow call.
pub fn flow_call(base: &Expr, cx: &Ident) -> Option<FlowCall> {
    let (call, key) = match base {
        Expr::MethodCall(m) if m.method == "key" && m.args.len() == 1 => match &*m.receiver {
            Expr::Call(c) => (c, Some(m.args[0].clone())),
            _ => return None,
        },
        Expr::Call(c) => (c, None),
        Expr::Paren(p) => return flow_call(&p.expr, cx),
        _ => return None,
    };
    let Expr::Path(p) = &*call.func else {
        return None;
    };
    if p.qself.is_some() || !call.args.first().is_some_and(|a| passes_context(a, cx)) {
        return None;
    }
    Some(FlowCall {
        call: call.clone(),
        path: p.path.clone(),
        key,
    })
}

/// `cx` or `&mut *cx`: the context itself, passed on.
pub fn passes_context(e: &Expr, cx: &Ident) -> bool {
    match e {
        Expr::Reference(r) if r.mutability.is_some() => {
            matches!(&*r.expr, Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && is_cx(&u.expr, cx))
        }
        other => is_cx(other, cx),
    }
}

/// Whether an awaited expression passes the context to something other than a flow call
/// in the recognised shape (a method, a closure call, a nested call): returns its span.
pub fn passes_context_elsewhere(base: &Expr, cx: &Ident) -> Option<Span> {
    struct F<'c> {
        cx: &'c Ident,
        found: Option<Span>,
    }
    impl<'a> Visit<'a> for F<'_> {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            if self.found.is_none()
                && let Some(a) = c.args.iter().find(|a| passes_context(a, self.cx))
            {
                self.found = Some(a.span());
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            if self.found.is_none()
                && let Some(a) = m.args.iter().find(|a| passes_context(a, self.cx))
            {
                self.found = Some(a.span());
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = F { cx, found: None };
    f.visit_expr(base);
    f.found
}

/// If `expr` is `cx.method(..)[.builder(..)]*.await` or an awaited flow call, describes it.
pub fn as_suspension(expr: &Expr, cx: &Ident) -> Option<Susp> {
    let Expr::Await(aw) = expr else { return None };
    if let Some(call) = flow_call(&aw.base, cx) {
        return Some(Susp {
            kind: Kind::Flow,
            method: call
                .path
                .segments
                .last()
                .map(|s| s.ident.clone())
                .unwrap_or_else(|| cx.clone()),
            parts: Vec::new(),
            span: expr.span(),
            tokens: expr.to_token_stream(),
            text: short_text(expr),
            flow: Some(call),
        });
    }
    let (root, calls) = call_chain(&aw.base, cx)?;
    let kind = Kind::from_method(&root.method)?;
    let mut key = None;
    let mut extra: Vec<&ExprMethodCall> = Vec::new();
    for c in &calls {
        if c.method == "key"
            && c.args.len() == 1
            && let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &c.args[0]
        {
            key = Some(s.clone());
            continue;
        }
        extra.push(c);
    }
    let args: Vec<Expr> = root.args.iter().cloned().collect();
    let turbofish = root.turbofish.as_ref().and_then(first_type);
    let span = expr.span();
    let tokens = expr.to_token_stream();
    let mk = |builder: Expr, cap: Cap, ty: Option<Type>| Part {
        builder: apply_calls(builder, &extra),
        key: key.clone(),
        cap,
        elicit_ty: ty,
        span,
        tokens: tokens.clone(),
    };
    let args_ts = quote::quote!(#(#args),*);
    let tf = root.turbofish.clone();
    let p = Rt;
    let parts = match kind {
        Kind::Ask => vec![mk(
            syn::parse_quote!(#p::Ask #tf ::new(#args_ts)),
            Cap::Elicitation,
            turbofish,
        )],
        Kind::Elicit => vec![mk(
            syn::parse_quote!(#p::Elicit #tf ::new(#args_ts)),
            Cap::Elicitation,
            turbofish,
        )],
        Kind::ElicitUrl => vec![mk(
            syn::parse_quote!(#p::UrlElicit::new(#args_ts)),
            Cap::Elicitation,
            None,
        )],
        Kind::Sample => {
            let b = args
                .first()
                .cloned()
                .unwrap_or_else(|| syn::parse_quote!(#p::Sample::default()));
            vec![mk(b, Cap::Sampling, None)]
        }
        Kind::Roots => vec![mk(syn::parse_quote!(#p::Roots::new()), Cap::Roots, None)],
        Kind::Checkpoint | Kind::Flow => Vec::new(),
        Kind::Round => {
            let mut parts = Vec::new();
            let elems: Vec<Expr> = match args.first() {
                Some(Expr::Tuple(t)) => t.elems.iter().cloned().collect(),
                Some(Expr::Paren(p)) => vec![(*p.expr).clone()],
                _ => Vec::new(),
            };
            for el in elems {
                let (el, k) = strip_key(el);
                let (cap, ty) = round_element(&el).unwrap_or((Cap::Elicitation, None));
                parts.push(Part {
                    span: el.span(),
                    tokens: el.to_token_stream(),
                    builder: el,
                    key: k,
                    cap,
                    elicit_ty: ty,
                });
            }
            parts
        }
    };
    Some(Susp {
        kind,
        method: root.method.clone(),
        parts,
        span,
        tokens: expr.to_token_stream(),
        text: short_text(expr),
        flow: None,
    })
}

/// `cx.round(..)` argument problems, reported by the caller.
pub fn round_problems(expr: &Expr, cx: &Ident) -> Vec<(Span, Refusal<'static>)> {
    let mut out = Vec::new();
    let Expr::Await(aw) = expr else { return out };
    let Some((root, _)) = call_chain(&aw.base, cx) else {
        return out;
    };
    if root.method != "round" {
        return out;
    }
    match root.args.first() {
        Some(Expr::Tuple(t)) if root.args.len() == 1 => {
            for el in &t.elems {
                let (el, _) = strip_key(el.clone());
                if round_element(&el).is_none() {
                    out.push((el.span(), Refusal::RoundElementUnknown));
                }
            }
        }
        _ => out.push((root.span(), Refusal::RoundNotATuple)),
    }
    out
}

fn round_element(el: &Expr) -> Option<(Cap, Option<Type>)> {
    let mut e = el;
    loop {
        match e {
            Expr::MethodCall(m) => e = &m.receiver,
            Expr::Paren(p) => e = &p.expr,
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return None };
                let segs: Vec<_> = p.path.segments.iter().collect();
                if segs.len() < 2 {
                    return None;
                }
                let ty_seg = segs[segs.len() - 2];
                let ty = match &ty_seg.arguments {
                    syn::PathArguments::AngleBracketed(ab) => first_type(ab),
                    _ => None,
                };
                return match ty_seg.ident.to_string().as_str() {
                    "Ask" | "Elicit" => Some((Cap::Elicitation, ty)),
                    "UrlElicit" => Some((Cap::Elicitation, None)),
                    "Sample" => Some((Cap::Sampling, None)),
                    "Roots" => Some((Cap::Roots, None)),
                    _ => None,
                };
            }
            _ => return None,
        }
    }
}

/// True when the key of `part` is fixed at compile time: a literal `.key("…")` at the
/// suspension point, or a builder visibly made here without any `.key(..)` call (a builder
/// made elsewhere, or keyed with a computed value, may carry a key set at run time).
pub fn static_key(part: &Part) -> bool {
    fn calls_key(e: &Expr) -> bool {
        match e {
            Expr::MethodCall(m) => m.method == "key" || calls_key(&m.receiver),
            Expr::Paren(p) => calls_key(&p.expr),
            _ => false,
        }
    }
    part.key.is_some() || (!calls_key(&part.builder) && round_element(&part.builder).is_some())
}

fn strip_key(el: Expr) -> (Expr, Option<LitStr>) {
    if let Expr::MethodCall(m) = &el
        && m.method == "key"
        && m.args.len() == 1
        && let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &m.args[0]
    {
        return ((*m.receiver).clone(), Some(s.clone()));
    }
    (el, None)
}

fn apply_calls(mut builder: Expr, calls: &[&ExprMethodCall]) -> Expr {
    for c in calls {
        let mut c = (*c).clone();
        c.receiver = Box::new(builder);
        builder = Expr::MethodCall(c);
    }
    builder
}

fn first_type(ab: &AngleBracketedGenericArguments) -> Option<Type> {
    ab.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

/// Walks `base` down the receivers of method calls to `cx.method(..)`; returns it and the
/// builder calls after it, innermost first.
fn call_chain<'e>(
    base: &'e Expr,
    cx: &Ident,
) -> Option<(&'e ExprMethodCall, Vec<&'e ExprMethodCall>)> {
    let mut calls = Vec::new();
    let mut e = base;
    loop {
        match e {
            Expr::MethodCall(m) => {
                if is_cx(&m.receiver, cx) {
                    Kind::from_method(&m.method)?;
                    calls.reverse();
                    return Some((m, calls));
                }
                calls.push(m);
                e = &m.receiver;
            }
            _ => return None,
        }
    }
}

/// `cx.method(..)` for a suspension method, outside of an `.await` (checked by the caller).
pub fn is_bare_call(m: &ExprMethodCall, cx: &Ident) -> bool {
    is_cx(&m.receiver, cx) && Kind::from_method(&m.method).is_some()
}

fn is_cx(e: &Expr, cx: &Ident) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none() && p.path.is_ident(cx),
        Expr::Paren(p) => is_cx(&p.expr, cx),
        _ => false,
    }
}

/// Every suspension point inside `node` (not looking into macros).
pub fn find_all<'e, T: FindIn<'e> + ?Sized>(node: &'e T, cx: &Ident) -> Vec<&'e Expr> {
    let mut f = Finder {
        cx,
        found: Vec::new(),
    };
    node.find_in(&mut f);
    f.found
}

/// Nodes `find_all` can search.
pub trait FindIn<'e> {
    /// Visits self.
    fn find_in(&'e self, f: &mut Finder<'e, '_>);
}
impl<'e> FindIn<'e> for Expr {
    fn find_in(&'e self, f: &mut Finder<'e, '_>) {
        f.visit_expr(self)
    }
}
impl<'e> FindIn<'e> for syn::Stmt {
    fn find_in(&'e self, f: &mut Finder<'e, '_>) {
        f.visit_stmt(self)
    }
}
impl<'e> FindIn<'e> for syn::Block {
    fn find_in(&'e self, f: &mut Finder<'e, '_>) {
        f.visit_block(self)
    }
}
impl<'e> FindIn<'e> for [syn::Stmt] {
    fn find_in(&'e self, f: &mut Finder<'e, '_>) {
        for s in self {
            f.visit_stmt(s)
        }
    }
}

/// The visitor behind [`find_all`].
pub struct Finder<'e, 'c> {
    cx: &'c Ident,
    found: Vec<&'e Expr>,
}

impl<'e> Visit<'e> for Finder<'e, '_> {
    fn visit_expr(&mut self, e: &'e Expr) {
        if as_suspension(e, self.cx).is_some() {
            self.found.push(e);
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_item(&mut self, _: &'e syn::Item) {}
}

/// True when the tokens of a macro call mention `cx.<suspension method>`.
pub fn macro_mentions(tokens: &TokenStream, cx: &Ident) -> Option<Span> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Group(g) => {
                if let Some(s) = macro_mentions(&g.stream(), cx) {
                    return Some(s);
                }
            }
            TokenTree::Ident(id) if id == cx => {
                if let (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(m))) =
                    (trees.get(i + 1), trees.get(i + 2))
                    && p.as_char() == '.'
                    && Kind::is_method(&m.to_string())
                {
                    return Some(id.span());
                }
            }
            _ => {}
        }
    }
    None
}

/// The expression as compact text (at most ~60 characters), for messages.
pub fn short_text(e: &impl ToTokens) -> String {
    let s = e.to_token_stream().to_string();
    let s = s
        .replace(" . ", ".")
        .replace(" (", "(")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,", ",")
        .replace(" ?", "?")
        .replace(":: ", "::")
        .replace(" ::", "::")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">");
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}…")
    } else {
        s
    }
}
