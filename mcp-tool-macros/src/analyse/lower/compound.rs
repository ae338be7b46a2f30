//! Exploding compound statements that contain a suspension point into jumps between stages.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, Expr, Lifetime, Stmt};

use super::super::vars::{Binding, Names, free_in_expr, free_in_stmts, pat_bindings};
use super::*;
use crate::analyse::refusal::Refusal;
use crate::rt::Rt;

impl Lowerer<'_> {
    /// Lowers a compound statement (`if`, `match`, a block, a loop) that contains a suspension
    /// point: its control flow becomes jumps between stages.
    pub(super) fn lower_compound(
        &mut self,
        e: &Expr,
        ret: Tail,
        target: After,
        live_after: &Names,
    ) -> TokenStream {
        let span = e.span();
        match e {
            Expr::If(i) => {
                self.scopes.push(Vec::new());
                let cond = self.rewrite_expr(&i.cond);
                if let Expr::Let(l) = &*i.cond {
                    self.declare(pat_bindings(&l.pat));
                }
                let before = self.assigned.clone();
                let then = self.lower_block(&i.then_branch, ret, target, live_after);
                self.assigned = before.clone();
                self.scopes.pop();
                let els = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        Expr::If(_) => self.lower_compound(e, ret, target, live_after),
                        Expr::Block(b) => self.lower_block(&b.block, ret, target, live_after),
                        other => {
                            let block: Block = syn::parse_quote!({ #other });
                            self.lower_block(&block, ret, target, live_after)
                        }
                    },
                    None => {
                        let g = self.emit_cont(target, span);
                        quote!({ #g })
                    }
                };
                self.assigned = before;
                quote!(if #cond #then else #els)
            }
            Expr::Match(m) => {
                let scrut = self.rewrite_expr(&m.expr);
                let mut arms = TokenStream::new();
                let before = self.assigned.clone();
                for arm in &m.arms {
                    self.assigned = before.clone();
                    self.scopes.push(Vec::new());
                    self.declare(pat_bindings(&arm.pat));
                    let pat = &arm.pat;
                    let guard = arm.guard.as_ref().map(|(_, g)| {
                        let g = self.rewrite_expr(g);
                        quote!(if #g)
                    });
                    let body = match &*arm.body {
                        Expr::Block(b) if b.label.is_none() => {
                            self.lower_block(&b.block, ret, target, live_after)
                        }
                        other => {
                            let block: Block = syn::parse_quote!({ #other });
                            self.lower_block(&block, ret, target, live_after)
                        }
                    };
                    self.scopes.pop();
                    arms.extend(quote!(#pat #guard => #body));
                }
                self.assigned = before;
                quote!(match #scrut { #arms })
            }
            Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.loops.push(LoopCtx {
                        label: Some(l.name.clone()),
                        is_block: true,
                        brk: target,
                        cont: None,
                    });
                    let code = self.lower_block(&b.block, ret, target, live_after);
                    self.loops.pop();
                    code
                } else {
                    self.lower_block(&b.block, ret, target, live_after)
                }
            }
            Expr::Loop(lp) => {
                let mut live_h = free_in_stmts(&lp.body.stmts);
                live_h.extend(live_after.iter().cloned());
                self.lower_loop(
                    lp.label.as_ref().map(|l| l.name.clone()),
                    &live_h,
                    target,
                    span,
                    &lp.body.stmts,
                    |me, h| {
                        let body = me.lower_block(&lp.body, Tail::Stmt, After::Goto(h), &live_h);
                        quote!(#body)
                    },
                )
            }
            Expr::While(w) => {
                let mut live_h = free_in_expr(&w.cond);
                live_h.extend(free_in_stmts(&w.body.stmts));
                live_h.extend(live_after.iter().cloned());
                self.lower_loop(
                    w.label.as_ref().map(|l| l.name.clone()),
                    &live_h,
                    target,
                    span,
                    &w.body.stmts,
                    |me, h| {
                        me.scopes.push(Vec::new());
                        let cond = me.rewrite_expr(&w.cond);
                        if let Expr::Let(l) = &*w.cond {
                            me.declare(pat_bindings(&l.pat));
                        }
                        let body = me.lower_block(&w.body, Tail::Stmt, After::Goto(h), &live_h);
                        me.scopes.pop();
                        let exit = me.emit_cont(target, span);
                        quote!(if #cond #body else { #exit })
                    },
                )
            }
            Expr::ForLoop(f) => {
                let bindings = pat_bindings(&f.pat);
                let derived: Names = self
                    .scopes
                    .iter()
                    .flatten()
                    .filter(|v| v.rederive.is_some())
                    .map(|v| v.ident.to_string())
                    .collect();
                // over a borrow of the arguments, or a borrow of a local that is kept as it is
                // (declared without `mut`, not a borrow itself): keep the position, bind the
                // item again (the items themselves, borrows, could not be stored)
                let mut latest: std::collections::HashMap<String, &crate::analyse::model::Var> =
                    std::collections::HashMap::new();
                for v in self.scopes.iter().flatten() {
                    latest.insert(v.ident.to_string(), v);
                }
                let mut roots = self.args.clone();
                if crate::analyse::args::looks_borrowed(&f.expr) {
                    roots.extend(latest.into_iter().filter_map(|(n, v)| {
                        (!v.mutable
                            && !v.borrow
                            && v.rederive.is_none()
                            && v.deferred.is_none()
                            && !n.starts_with("__mcp_"))
                        .then_some(n)
                    }));
                }
                let positional = bindings.iter().all(|b| !b.mutable && !b.by_ref)
                    && crate::analyse::args::reaches_into(&f.expr, &roots, &derived);
                let src = self.rewrite_expr(&f.expr);
                let iter = format_ident!(
                    "__mcp_{}{}",
                    if positional { "pos" } else { "iter" },
                    self.tmp,
                    span = f.expr.span()
                );
                self.tmp += 1;
                let init = if positional {
                    quote_spanned!(f.expr.span()=> let mut #iter: usize = 0;)
                } else {
                    let rt_src = Rt.at(f.expr.span());
                    quote_spanned!(f.expr.span()=> let mut #iter = #rt_src::for_items(#src);)
                };
                self.declare(vec![Binding {
                    ident: iter.clone(),
                    mutable: true,
                    by_ref: false,
                }]);
                let mut live_h = free_in_stmts(&f.body.stmts);
                for b in &bindings {
                    live_h.remove(&b.ident.to_string());
                }
                live_h.insert(iter.to_string());
                if positional {
                    live_h.extend(free_in_expr(&f.expr));
                }
                live_h.extend(live_after.iter().cloned());
                let code = self.lower_loop(f.label.as_ref().map(|l| l.name.clone()), &live_h, target, span, &f.body.stmts, |me, h| {
                    me.scopes.push(Vec::new());
                    let pat = &f.pat;
                    let head = if positional {
                        let mut deps = free_in_expr(&f.expr);
                        deps.insert(iter.to_string());
                        let p = Rt;
                        let item = plumb(me.cx, &me.err, quote!(#p::nth_item(#src, #iter - 1)));
                        let rebind = quote!(let #pat = #item;);
                        me.declare_rederived(bindings.clone(), rebind, deps);
                        quote!(if let ::core::option::Option::Some(#pat) = ::core::iter::Iterator::nth(&mut ::core::iter::IntoIterator::into_iter(#src), #iter))
                    } else {
                        me.declare(bindings.clone());
                        quote!(if let ::core::option::Option::Some(#pat) = #iter.pop_front())
                    };
                    let body = me.lower_block(&f.body, Tail::Stmt, After::Goto(h), &live_h);
                    me.scopes.pop();
                    let exit = me.emit_cont(target, span);
                    if positional {
                        quote!(#head { #iter += 1; #body } else { #exit })
                    } else {
                        quote!(#head #body else { #exit })
                    }
                });
                quote!(#init #code)
            }
            other => {
                self.errors.refuse(other, Refusal::InUnsafeBlock);
                TokenStream::new()
            }
        }
    }

    pub(super) fn lower_loop(
        &mut self,
        label: Option<Lifetime>,
        live_h: &Names,
        target: After,
        span: Span,
        stmts: &[Stmt],
        body: impl FnOnce(&mut Self, usize) -> TokenStream,
    ) -> TokenStream {
        // at the head, a deferred variable the body assigns may be assigned or not
        self.note_maybe(stmts);
        let h = self.new_stage_for(StageKind::Jump, live_h, Vec::new());
        let enter = self.goto(h, span);
        self.loops.push(LoopCtx {
            label,
            is_block: false,
            brk: target,
            cont: Some(h),
        });
        let code = body(self, h);
        self.loops.pop();
        self.stages[h].code = code;
        enter
    }
}
