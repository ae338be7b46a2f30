//! The position check, run over the whole body before lowering: suspension points in places
//! the transform cannot split (a closure, an `async` block, a match guard, a nested item,
//! another macro's arguments), `cx.round` arguments that are not a tuple of
//! visible builders, request builders not awaited where written, and the context passed to
//! awaited code that is not a flow call. The refusals and their messages are in
//! [`super::refusal`].

use syn::visit::Visit;
use syn::{Expr, Ident};

use super::refusal::Refusal;
use super::susp::{as_suspension, is_bare_call, macro_mentions, short_text};
use crate::errors::Errors;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Closure,
    Async,
    Guard,
    Item,
}

/// Reports every suspension point in a position the transform cannot split.
pub fn check(body: &syn::Block, cx: &Ident, errors: &mut Errors) {
    let mut r = Positions {
        cx,
        errors,
        ctx: Vec::new(),
    };
    r.visit_block(body);
}

struct Positions<'c, 'e> {
    cx: &'c Ident,
    errors: &'e mut Errors,
    ctx: Vec<Ctx>,
}

impl Positions<'_, '_> {
    fn with<F: FnOnce(&mut Self)>(&mut self, c: Ctx, f: F) {
        self.ctx.push(c);
        f(self);
        self.ctx.pop();
    }
}

impl<'a> Visit<'a> for Positions<'_, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        if let Some(s) = as_suspension(e, self.cx) {
            let text = short_text(e);
            if let Some(c) = self.ctx.last() {
                let text = text.as_str();
                let r = match c {
                    Ctx::Closure => Refusal::InClosure { text },
                    Ctx::Async => Refusal::InAsyncBlock { text },
                    Ctx::Guard => Refusal::InMatchGuard { text },
                    Ctx::Item => Refusal::InNestedItem { text },
                };
                self.errors.refuse(&s.tokens, r);
            }
            for (span, r) in super::susp::round_problems(e, self.cx) {
                self.errors.refuse_at(span, r);
            }
            // look into the builder (or flow call) arguments only
            if let Some(call) = &s.flow {
                for a in call.call.args.iter().skip(1).chain(call.key.iter()) {
                    self.visit_expr(a);
                }
            } else if let Expr::Await(aw) = e {
                let mut b = &*aw.base;
                while let Expr::MethodCall(m) = b {
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                    b = &m.receiver;
                }
            }
            return;
        }
        if let Expr::Await(aw) = e
            && let Some(span) = super::susp::passes_context_elsewhere(&aw.base, self.cx)
        {
            let text = short_text(e);
            self.errors.refuse_at(
                span,
                Refusal::ContextToNonFlow {
                    text: &text,
                    cx: self.cx.to_string(),
                },
            );
        }
        if let Expr::MethodCall(m) = e
            && is_bare_call(m, self.cx)
        {
            let text = short_text(e);
            self.errors.refuse(e, Refusal::NotAwaited { text: &text });
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_expr_closure(&mut self, c: &'a syn::ExprClosure) {
        self.with(Ctx::Closure, |s| syn::visit::visit_expr_closure(s, c));
    }
    fn visit_expr_async(&mut self, a: &'a syn::ExprAsync) {
        self.with(Ctx::Async, |s| syn::visit::visit_expr_async(s, a));
    }
    fn visit_arm(&mut self, a: &'a syn::Arm) {
        self.visit_pat(&a.pat);
        if let Some((_, g)) = &a.guard {
            self.with(Ctx::Guard, |s| s.visit_expr(g));
        }
        self.visit_expr(&a.body);
    }
    fn visit_item(&mut self, i: &'a syn::Item) {
        self.with(Ctx::Item, |s| syn::visit::visit_item(s, i));
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        if let Some(span) = macro_mentions(&m.tokens, self.cx) {
            let name = m
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            self.errors.refuse_at(
                span,
                Refusal::InMacro {
                    name,
                    cx: self.cx.to_string(),
                },
            );
        }
    }
}
