//! Statements in A-normal form: `let`s, compound statements and their heads, `while`,
//! `let … else`.

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Label, Local, LocalInit, Pat, Stmt};

use super::exprs::is_compound;
use super::{Anf, Mode, Origin};
use crate::analyse::refusal::Refusal;
use crate::analyse::susp::short_text;
use crate::analyse::vars::pat_bindings;

impl Anf<'_, '_> {
    /// A statement list in normal form.
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        let n = stmts.len();
        for (i, s) in stmts.iter().enumerate() {
            let is_tail = i + 1 == n && matches!(s, Stmt::Expr(_, None));
            self.stmt(s.clone(), is_tail, &mut out);
        }
        out
    }

    pub(super) fn block(&mut self, b: &Block) -> Block {
        Block {
            brace_token: b.brace_token,
            stmts: self.stmts(&b.stmts),
        }
    }

    pub(super) fn stmt(&mut self, s: Stmt, is_tail: bool, out: &mut Vec<Stmt>) {
        let suspends = match &s {
            Stmt::Local(l) => l.init.as_ref().is_some_and(|i| {
                self.has(&i.expr) || i.diverge.as_ref().is_some_and(|(_, d)| self.has(d))
            }),
            Stmt::Expr(e, _) => self.has(e),
            _ => false,
        };
        if !suspends {
            out.push(s);
            return;
        }
        match s {
            Stmt::Local(l) => self.local(l, out),
            Stmt::Expr(e, semi) => {
                if is_compound(&e) {
                    // a loop or labelled block left by a `break` that gives the block's
                    // value (at the end of a block) or a discarded value: the value goes
                    // through a temporary, as a `let` initializer's does
                    let breaks = breaks_with_value(&e);
                    let e = self.compound(e, out);
                    if is_tail && breaks.is_some() {
                        let t = self.temp(e, out);
                        out.push(Stmt::Expr(t, None));
                    } else if breaks == Some(true) {
                        self.temp(e, out);
                    } else {
                        out.push(Stmt::Expr(e, semi));
                    }
                } else {
                    let e = self.expr(e, Mode::Keep, out);
                    out.push(Stmt::Expr(e, semi));
                }
            }
            other => out.push(other),
        }
    }

    pub(super) fn local(&mut self, mut l: Local, out: &mut Vec<Stmt>) {
        let Some(init) = l.init.take() else {
            out.push(Stmt::Local(l));
            return;
        };
        let LocalInit {
            eq_token,
            expr,
            diverge,
        } = init;
        if let Some((else_token, d)) = diverge {
            if self.has(&d) {
                self.let_else(l, *expr, *d, out);
                return;
            }
            let expr = self.expr(*expr, Mode::Keep, out);
            l.init = Some(LocalInit {
                eq_token,
                expr: Box::new(expr),
                diverge: Some((else_token, d)),
            });
            out.push(Stmt::Local(l));
            return;
        }
        let expr = if is_compound(&expr) {
            self.compound(*expr, out)
        } else {
            self.expr(*expr, Mode::Keep, out)
        };
        l.init = Some(LocalInit {
            eq_token,
            expr: Box::new(expr),
            diverge: None,
        });
        out.push(Stmt::Local(l));
    }

    /// `let p = e else { d };` with a suspending `d`, as
    /// `let (a, b) = match e { p => (a, b), _ => d };`.
    pub(super) fn let_else(&mut self, l: Local, init: Expr, diverge: Expr, out: &mut Vec<Stmt>) {
        let (pat, scrutinee) = match l.pat {
            Pat::Type(t) => {
                let ty = &t.ty;
                let id = self.fresh(init.span());
                self.origins
                    .insert(id.to_string(), Origin::Temp(short_text(&init)));
                out.push(syn::parse_quote!(let #id: #ty = #init;));
                (*t.pat, syn::parse_quote!(#id))
            }
            p => (p, init),
        };
        let bindings = pat_bindings(&pat);
        let names: Vec<&Ident> = bindings.iter().map(|b| &b.ident).collect();
        let outer: Vec<Pat> = bindings
            .iter()
            .map(|b| {
                Pat::Ident(syn::PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: b.mutable.then(Default::default),
                    ident: b.ident.clone(),
                    subpat: None,
                })
            })
            .collect();
        let mut inner = pat;
        strip_mut(&mut inner);
        let (outer_pat, value): (Pat, Expr) = match names.as_slice() {
            [] => (syn::parse_quote!(_), syn::parse_quote!(())),
            [one] => (outer[0].clone(), syn::parse_quote!(#one)),
            _ => (
                syn::parse_quote!((#(#outer),*)),
                syn::parse_quote!((#(#names),*)),
            ),
        };
        let arm_else = match diverge {
            Expr::Block(b) => Expr::Block(b),
            other => syn::parse_quote!({ #other }),
        };
        let m: Expr = syn::parse_quote!(match #scrutinee { #inner => #value, _ => #arm_else });
        let s: Stmt = Stmt::Local(Local {
            attrs: l.attrs,
            let_token: l.let_token,
            pat: outer_pat,
            init: Some(LocalInit {
                eq_token: Default::default(),
                expr: Box::new(m),
                diverge: None,
            }),
            semi_token: l.semi_token,
        });
        self.stmt(s, false, out);
    }

    /// A compound expression whose heads no longer suspend: heads bound before it (into
    /// `out`), bodies in normal form.
    pub(super) fn compound(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
        match e {
            Expr::If(mut i) => {
                if self.has(&i.cond) {
                    let cond = std::mem::replace(&mut *i.cond, syn::parse_quote!(true));
                    *i.cond = self.head(cond, out);
                }
                i.then_branch = self.block(&i.then_branch);
                if let Some((else_token, els)) = i.else_branch.take() {
                    let els = match *els {
                        Expr::Block(mut b) => {
                            b.block = self.block(&b.block);
                            Expr::Block(b)
                        }
                        other @ Expr::If(_) => {
                            let mut pre = Vec::new();
                            let e = self.compound(other, &mut pre);
                            if pre.is_empty() {
                                e
                            } else {
                                // `else if c` with a suspending `c`: `else { let t = c; if t … }`
                                pre.push(Stmt::Expr(e, None));
                                syn::parse_quote!({ #(#pre)* })
                            }
                        }
                        other => other,
                    };
                    i.else_branch = Some((else_token, Box::new(els)));
                }
                Expr::If(i)
            }
            Expr::Match(mut m) => {
                if self.has(&m.expr) {
                    let scrut = std::mem::replace(&mut *m.expr, syn::parse_quote!(()));
                    *m.expr = self.expr(scrut, Mode::Hoist, out);
                }
                for arm in &mut m.arms {
                    if !self.has(&arm.body) {
                        continue;
                    }
                    let body = std::mem::replace(&mut *arm.body, syn::parse_quote!(()));
                    *arm.body = match body {
                        Expr::Block(mut b) if b.label.is_none() => {
                            b.block = self.block(&b.block);
                            Expr::Block(b)
                        }
                        other if !is_compound(&other) => {
                            // an arm written as an expression stays one when nothing is bound
                            // before it
                            let mut pre = Vec::new();
                            let e = self.expr(other, Mode::Keep, &mut pre);
                            if pre.is_empty() {
                                e
                            } else {
                                pre.push(Stmt::Expr(e, None));
                                syn::parse_quote!({ #(#pre)* })
                            }
                        }
                        other => {
                            let block: Block = syn::parse_quote!({ #other });
                            Expr::Block(syn::ExprBlock {
                                attrs: Vec::new(),
                                label: None,
                                block: self.block(&block),
                            })
                        }
                    };
                }
                Expr::Match(m)
            }
            Expr::Block(mut b) => {
                b.block = self.block(&b.block);
                Expr::Block(b)
            }
            Expr::Loop(mut l) => {
                l.body = self.block(&l.body);
                Expr::Loop(l)
            }
            Expr::ForLoop(mut f) => {
                if self.has(&f.expr) {
                    let it = std::mem::replace(&mut *f.expr, syn::parse_quote!(()));
                    *f.expr = self.expr(it, Mode::Hoist, out);
                }
                f.body = self.block(&f.body);
                Expr::ForLoop(f)
            }
            Expr::While(w) if self.has(&w.cond) => self.while_loop(w),
            Expr::While(mut w) => {
                w.body = self.block(&w.body);
                Expr::While(w)
            }
            other => other,
        }
    }

    /// `while c { body }` with a suspending `c`, as a `loop` that tests `c` first.
    pub(super) fn while_loop(&mut self, w: syn::ExprWhile) -> Expr {
        let label: Option<Label> = w.label;
        let body = &w.body;
        let looped: Block = match *w.cond {
            Expr::Let(l) => {
                let pat = &l.pat;
                let scrut = &l.expr;
                syn::parse_quote!({
                    match #scrut {
                        #pat => #body,
                        _ => break,
                    }
                })
            }
            cond => syn::parse_quote!({
                if !(#cond) {
                    break;
                }
                #body
            }),
        };
        let looped = self.block(&looped);
        syn::parse_quote!(#label loop #looped)
    }

    /// An `if` condition that suspends: its suspension points bound before the `if`; a `let`
    /// condition keeps its pattern.
    pub(super) fn head(&mut self, cond: Expr, out: &mut Vec<Stmt>) -> Expr {
        match cond {
            Expr::Let(mut l) => {
                let scrut = std::mem::replace(&mut *l.expr, syn::parse_quote!(()));
                *l.expr = self.expr(scrut, Mode::Hoist, out);
                Expr::Let(l)
            }
            c if contains_let(&c) => {
                self.errors.refuse(&c, Refusal::InLetChain);
                c
            }
            c => self.expr(c, Mode::Hoist, out),
        }
    }
}

/// Whether `e` (a loop or a labelled block) is left by a `break` that targets it: `Some(true)`
/// when a `break` carries a value, `Some(false)` when all are bare, `None` without one.
fn breaks_with_value(e: &Expr) -> Option<bool> {
    let (label, body, is_block) = match e {
        Expr::Loop(l) => (l.label.as_ref(), &l.body, false),
        Expr::Block(b) if b.label.is_some() => (b.label.as_ref(), &b.block, true),
        _ => return None,
    };
    struct Breaks<'l> {
        label: Option<&'l syn::Lifetime>,
        is_block: bool,
        depth: usize,
        found: Option<bool>,
    }
    impl<'a> Visit<'a> for Breaks<'_> {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Closure(_) | Expr::Async(_) => {}
                Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                    self.depth += 1;
                    syn::visit::visit_expr(self, e);
                    self.depth -= 1;
                }
                Expr::Break(b) => {
                    let ours = match (&b.label, self.label) {
                        (Some(l), Some(mine)) => l.ident == mine.ident,
                        (None, _) => !self.is_block && self.depth == 0,
                        (Some(_), None) => false,
                    };
                    if ours {
                        let v = b.expr.is_some();
                        self.found = Some(self.found.unwrap_or(false) || v);
                    }
                    syn::visit::visit_expr(self, e);
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut v = Breaks {
        label: label.map(|l| &l.name),
        is_block,
        depth: 0,
        found: None,
    };
    v.visit_block(body);
    v.found
}

fn contains_let(e: &Expr) -> bool {
    match e {
        Expr::Let(_) => true,
        Expr::Binary(b) => contains_let(&b.left) || contains_let(&b.right),
        Expr::Paren(p) => contains_let(&p.expr),
        _ => false,
    }
}

/// Removes `mut` from the bindings of a pattern (the arm of a lowered `let … else`; the
/// outer `let` keeps it).
fn strip_mut(p: &mut Pat) {
    struct S;
    impl syn::visit_mut::VisitMut for S {
        fn visit_pat_ident_mut(&mut self, i: &mut syn::PatIdent) {
            i.mutability = None;
            syn::visit_mut::visit_pat_ident_mut(self, i);
        }
    }
    syn::visit_mut::VisitMut::visit_pat_mut(&mut S, p);
}
