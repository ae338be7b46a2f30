//! Rewriting code emitted as written: `break`/`continue` out of exploded loops become jumps,
//! `return e` returns through the finish function; and the check that nothing effectful runs
//! before a suspension point in its expression.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Lifetime};

use super::super::anf::{is_assign_op, is_compound, pure};
use super::super::susp::as_suspension;
use super::*;
use crate::analyse::refusal::Refusal;

pub(super) struct EffectsBefore<'c> {
    pub(super) cx: &'c Ident,
    pub(super) found: bool,
    pub(super) impure: Option<TokenStream>,
    pub(super) bad: Option<(TokenStream, &'static str)>,
}

impl EffectsBefore<'_> {
    pub(super) fn walk(&mut self, e: &Expr) {
        if self.found || self.bad.is_some() {
            return;
        }
        if as_suspension(e, self.cx).is_some() {
            self.found = true;
            return;
        }
        if !has_susp(e, self.cx) {
            if !pure(e) && self.impure.is_none() {
                self.impure = Some(e.to_token_stream());
            }
            return;
        }
        match e {
            Expr::MethodCall(m) => {
                self.walk(&m.receiver);
                m.args.iter().for_each(|a| self.walk(a));
            }
            Expr::Call(c) => {
                self.walk(&c.func);
                c.args.iter().for_each(|a| self.walk(a));
            }
            Expr::Binary(b) => {
                if matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_))
                    && has_susp(&b.right, self.cx)
                {
                    self.bad = Some((b.right.to_token_stream(), "lazy"));
                } else if is_assign_op(&b.op) {
                    self.walk(&b.right);
                    self.walk(&b.left);
                } else {
                    self.walk(&b.left);
                    self.walk(&b.right);
                }
            }
            Expr::Assign(a) => {
                self.walk(&a.right);
                self.walk(&a.left);
            }
            Expr::Unary(u) => self.walk(&u.expr),
            Expr::Cast(c) => self.walk(&c.expr),
            Expr::Paren(p) => self.walk(&p.expr),
            Expr::Group(g) => self.walk(&g.expr),
            Expr::Field(f) => self.walk(&f.base),
            Expr::Try(t) => self.walk(&t.expr),
            Expr::Await(a) => self.walk(&a.base),
            Expr::Reference(r) => self.walk(&r.expr),
            Expr::Return(r) => {
                if let Some(x) = &r.expr {
                    self.walk(x)
                }
            }
            Expr::Break(b) => {
                if let Some(x) = &b.expr {
                    self.walk(x)
                }
            }
            Expr::Repeat(r) => self.walk(&r.expr),
            Expr::Index(i) => {
                self.walk(&i.expr);
                self.walk(&i.index);
            }
            Expr::Struct(s) => {
                s.fields.iter().for_each(|f| self.walk(&f.expr));
                if let Some(r) = &s.rest {
                    self.walk(r)
                }
            }
            Expr::Tuple(t) => t.elems.iter().for_each(|x| self.walk(x)),
            Expr::Array(a) => a.elems.iter().for_each(|x| self.walk(x)),
            Expr::Range(r) => {
                if let Some(x) = &r.start {
                    self.walk(x)
                }
                if let Some(x) = &r.end {
                    self.walk(x)
                }
            }
            e if is_compound(e) || matches!(e, Expr::TryBlock(_) | Expr::Const(_)) => {
                self.bad = Some((e.to_token_stream(), "value"))
            }
            Expr::Closure(_) | Expr::Async(_) | Expr::Macro(_) => {
                self.bad = Some((e.to_token_stream(), "reported"))
            }
            _ => self.bad = Some((e.to_token_stream(), "other")),
        }
    }
}

/// Replaces the (only) suspension point with the answer expression.
pub(super) struct Replace<'c> {
    pub(super) cx: &'c Ident,
    pub(super) with: Option<TokenStream>,
}

impl VisitMut for Replace<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.with.is_some() && as_suspension(e, self.cx).is_some() {
            *e = Expr::Verbatim(self.with.take().expect("once"));
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

pub(super) struct ExplodedLoop {
    pub(super) label: Option<String>,
    pub(super) is_block: bool,
    pub(super) brk: Option<TokenStream>,
    /// The jump of `break value` (its value in `__mcp_value`), when the loop has a value.
    pub(super) brk_value: Option<TokenStream>,
    pub(super) cont: Option<TokenStream>,
}

/// Rewrites `break`/`continue`/`return` in code that is emitted as written.
pub(super) struct JumpRewriter<'a> {
    pub(super) loops: &'a [ExplodedLoop],
    /// Loops and labelled blocks inside the code being rewritten: (label, is_block).
    pub(super) inner: Vec<(Option<String>, bool)>,
    pub(super) finish: &'a TokenStream,
    pub(super) errors: Vec<(Span, Refusal<'static>)>,
}

impl<'a> JumpRewriter<'a> {
    /// The exploded loop a `break`/`continue` with this label targets, if it leaves the code.
    fn target(&self, label: Option<&Lifetime>, is_continue: bool) -> Option<&'a ExplodedLoop> {
        let loops: &'a [ExplodedLoop] = self.loops;
        match label {
            Some(l) => {
                let name = l.ident.to_string();
                if self
                    .inner
                    .iter()
                    .any(|(n, _)| n.as_deref() == Some(name.as_str()))
                {
                    return None;
                }
                loops
                    .iter()
                    .rev()
                    .find(|x| x.label.as_deref() == Some(name.as_str()))
            }
            None => {
                if self.inner.iter().any(|(_, is_block)| !is_block) {
                    return None;
                }
                let _ = is_continue;
                loops.iter().rev().find(|x| !x.is_block)
            }
        }
    }
}

impl VisitMut for JumpRewriter<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                let label = match e {
                    Expr::Loop(l) => l.label.as_ref(),
                    Expr::While(l) => l.label.as_ref(),
                    Expr::ForLoop(l) => l.label.as_ref(),
                    _ => None,
                }
                .map(|l| l.name.ident.to_string());
                self.inner.push((label, false));
                syn::visit_mut::visit_expr_mut(self, e);
                self.inner.pop();
            }
            Expr::Block(b) if b.label.is_some() => {
                self.inner
                    .push((b.label.as_ref().map(|l| l.name.ident.to_string()), true));
                syn::visit_mut::visit_expr_mut(self, e);
                self.inner.pop();
            }
            Expr::Break(b) => {
                if let Some(t) = self.target(b.label.as_ref(), false) {
                    if let Some(v) = &mut b.expr {
                        if let Some(g) = &t.brk_value {
                            self.visit_expr_mut(v);
                            let v = &**v;
                            *e = Expr::Verbatim(quote!({ let __mcp_value = #v; #g }));
                            return;
                        }
                        // the A-normal form makes every loop left with a value a `let`
                        // initializer
                        let what = format!("break {}", super::super::susp::short_text(&**v));
                        self.errors.push((v.span(), Refusal::Unlowered { what }));
                    }
                    match &t.brk {
                        Some(g) => *e = Expr::Verbatim(g.clone()),
                        None => {
                            // and every loop left by a `break` at the end of the function
                            let what = super::super::susp::short_text(&*b);
                            self.errors.push((b.span(), Refusal::Unlowered { what }))
                        }
                    }
                } else {
                    syn::visit_mut::visit_expr_mut(self, e);
                }
            }
            Expr::Continue(c) => {
                if let Some(t) = self.target(c.label.as_ref(), true)
                    && let Some(g) = &t.cont
                {
                    *e = Expr::Verbatim(g.clone());
                }
            }
            Expr::Return(r) => {
                if let Some(x) = &mut r.expr {
                    self.visit_expr_mut(x);
                    let finish = self.finish;
                    let x = &**x;
                    *e = Expr::Verbatim(quote!(return #finish(#x)));
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
