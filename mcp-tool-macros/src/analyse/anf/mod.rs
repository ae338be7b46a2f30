//! A-normal form: the body rewritten, ahead of lowering, so that every suspension point sits
//! where the lowering can split it, in Rust's own evaluation order.
//!
//! The lowering ([`super::lower`]) splits a statement at one suspension point that nothing
//! effectful precedes, and explodes `if` / `match` / loops / blocks whose heads do not suspend.
//! This pass brings every other form to those shapes:
//!
//! - **Operands** (of calls, methods — the receiver first —, operators, fields, indexes,
//!   tuples, arrays, struct literals) are evaluated left to right. Each operand that runs
//!   before the last one that suspends is bound to a fresh temporary first (`let __mcp_e0 =
//!   …;`), unless it is pure (a literal, a path, a field of one, a borrow of one) and nothing
//!   between it and that suspension can change it. A temporary is an ordinary variable: it is
//!   kept in the state only when it is live across a suspension point.
//! - **`&&` / `||`** with a suspension on the right become `if a { b } else { false }` /
//!   `if a { true } else { b }`: the right side runs (and asks) only when Rust would run it.
//! - **Value-producing `if` / `match` / blocks / loops** in any position become the
//!   initializer of a temporary (`let __mcp_e1 = match … { … };`), which the lowering carries
//!   to the code after it. A loop that `break`s with a value, or a labelled block, at the end
//!   of a block gets one too, so `break value` works from any loop.
//! - **Heads:** a suspension in an `if` condition, `match` scrutinee or `for` iterable is
//!   bound before the statement; `else if c` with a suspending `c` becomes `else { if c … }`;
//!   `while c { body }` becomes `loop { if !c { break; } body }` (`while let p = e` becomes
//!   `loop { match e { p => body, _ => break } }`).
//! - **`let p = e else { … }`** whose `else` block suspends becomes the equivalent `match`.
//! - **Shadowing** ([`shadow`]): a name declared again inside an exploded branch or loop,
//!   while the outer variable is still used afterwards, is renamed.
//!
//! A statement the lowering already accepts is left exactly as written, so a tool without
//! nested suspensions expands as before. The temporaries and renamed variables are recorded
//! in [`Origins`]: a temporary's request key is derived from its method and ordinal (see
//! [`super::lower`]), a renamed variable's from its name as written, and messages name them as
//! written.

mod shadow;

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Label, Local, LocalInit, Pat, Stmt};

use super::refusal::Refusal;
use super::susp::{as_suspension, find_all, short_text};
use super::vars::{Names, free_in_expr, pat_bindings};
use crate::errors::Errors;

/// What a name made by this pass stands for.
#[derive(Clone, Debug)]
pub enum Origin {
    /// A temporary holding the value of an expression (its text, shortened).
    Temp(String),
    /// A variable renamed because it shadows one still used; its name as written.
    Renamed(String),
}

/// The names this pass made, by name.
pub type Origins = HashMap<String, Origin>;

/// The name to show an author for `name`: as written, or the expression a temporary holds.
pub fn display(origins: &Origins, name: &str) -> String {
    match origins.get(name) {
        Some(Origin::Temp(text)) => text.clone(),
        Some(Origin::Renamed(n)) => n.clone(),
        None => name.to_owned(),
    }
}

/// The body in A-normal form, and what the names it made stand for. `bound` holds the names
/// visible before the body (the arguments' bindings, a flow's parameters).
pub fn normalize(body: &Block, cx: &Ident, bound: &Names, errors: &mut Errors) -> (Block, Origins) {
    let mut a = Anf {
        cx,
        next: 0,
        origins: Origins::new(),
        errors,
    };
    let mut block = body.clone();
    block.stmts = a.stmts(&body.stmts);
    shadow::rename(&mut block, cx, bound, &mut a.origins);
    (block, a.origins)
}

/// How far an expression is taken apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The last suspension point may stay in place (the statement is split there).
    Keep,
    /// No suspension point stays (a head, evaluated before the statement it belongs to).
    Hoist,
}

struct Anf<'c, 'e> {
    cx: &'c Ident,
    next: usize,
    origins: Origins,
    errors: &'e mut Errors,
}

impl Anf<'_, '_> {
    fn has(&self, e: &Expr) -> bool {
        !find_all(e, self.cx).is_empty()
    }

    /// Binds `init` to a fresh temporary (hygienic, located at `init`) and returns its path.
    fn temp(&mut self, init: Expr, out: &mut Vec<Stmt>) -> Expr {
        let id = self.fresh(init.span());
        self.origins
            .insert(id.to_string(), Origin::Temp(short_text(&init)));
        out.push(syn::parse_quote!(let #id = #init;));
        syn::parse_quote!(#id)
    }

    /// A fresh name, `__mcp_e<n>`, located at `at` so that a message about the value (not
    /// serializable, a borrow) points at the expression. The `__mcp_` prefix is the macro's:
    /// the generated code restores and saves it by name from spans of its own, so it keeps the
    /// author's hygiene, as the other generated variables do.
    fn fresh(&mut self, at: Span) -> Ident {
        let id = Ident::new(&format!("__mcp_e{}", self.next), at);
        self.next += 1;
        id
    }

    /// A statement list in normal form.
    fn stmts(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        let n = stmts.len();
        for (i, s) in stmts.iter().enumerate() {
            let is_tail = i + 1 == n && matches!(s, Stmt::Expr(_, None));
            self.stmt(s.clone(), is_tail, &mut out);
        }
        out
    }

    fn block(&mut self, b: &Block) -> Block {
        Block {
            brace_token: b.brace_token,
            stmts: self.stmts(&b.stmts),
        }
    }

    fn stmt(&mut self, s: Stmt, is_tail: bool, out: &mut Vec<Stmt>) {
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

    fn local(&mut self, mut l: Local, out: &mut Vec<Stmt>) {
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
    fn let_else(&mut self, l: Local, init: Expr, diverge: Expr, out: &mut Vec<Stmt>) {
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
    fn compound(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
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
    fn while_loop(&mut self, w: syn::ExprWhile) -> Expr {
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
    fn head(&mut self, cond: Expr, out: &mut Vec<Stmt>) -> Expr {
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

    /// `e` with what must run before its last suspension point bound into `out`; in `Hoist`
    /// mode no suspension point stays.
    fn expr(&mut self, e: Expr, mode: Mode, out: &mut Vec<Stmt>) -> Expr {
        if !self.has(&e) {
            return e;
        }
        // (a suspension point in another one's arguments borrows the context twice: Rust
        // refuses it before this matters)
        if as_suspension(&e, self.cx).is_some() {
            return match mode {
                Mode::Keep => e,
                Mode::Hoist => self.temp(e, out),
            };
        }
        match e {
            Expr::Try(mut t) => {
                *t.expr = self.expr(*t.expr, mode, out);
                Expr::Try(t)
            }
            Expr::Await(mut a) => {
                *a.base = self.expr(*a.base, mode, out);
                Expr::Await(a)
            }
            Expr::Paren(mut p) => {
                *p.expr = self.expr(*p.expr, mode, out);
                Expr::Paren(p)
            }
            Expr::Group(mut g) => {
                *g.expr = self.expr(*g.expr, mode, out);
                Expr::Group(g)
            }
            Expr::Field(mut f) => {
                *f.base = self.expr(*f.base, mode, out);
                Expr::Field(f)
            }
            Expr::Cast(mut c) => {
                *c.expr = self.expr(*c.expr, mode, out);
                Expr::Cast(c)
            }
            Expr::Unary(mut u) => {
                *u.expr = self.expr(*u.expr, mode, out);
                Expr::Unary(u)
            }
            Expr::Reference(mut r) => {
                *r.expr = self.expr(*r.expr, mode, out);
                Expr::Reference(r)
            }
            Expr::Return(mut r) => {
                if let Some(x) = r.expr.take() {
                    r.expr = Some(Box::new(self.expr(*x, mode, out)));
                }
                Expr::Return(r)
            }
            Expr::Break(mut b) => {
                if let Some(x) = b.expr.take() {
                    b.expr = Some(Box::new(self.expr(*x, mode, out)));
                }
                Expr::Break(b)
            }
            Expr::MethodCall(mut m) => {
                let mut ops: Vec<&mut Expr> = vec![&mut *m.receiver];
                ops.extend(m.args.iter_mut());
                self.operands(ops, mode, out);
                Expr::MethodCall(m)
            }
            Expr::Call(mut c) => {
                let mut ops: Vec<&mut Expr> = vec![&mut *c.func];
                ops.extend(c.args.iter_mut());
                self.operands(ops, mode, out);
                Expr::Call(c)
            }
            Expr::Binary(b) if is_lazy(&b.op) && self.has(&b.right) => {
                let (l, r) = (&b.left, &b.right);
                let as_if: Expr = if matches!(b.op, syn::BinOp::And(_)) {
                    syn::parse_quote!(if #l { #r } else { false })
                } else {
                    syn::parse_quote!(if #l { true } else { #r })
                };
                self.value(as_if, out)
            }
            Expr::Binary(mut b) if is_assign_op(&b.op) => {
                if self.has(&b.left) {
                    self.errors.refuse(&b.left, Refusal::InAssignedPlace);
                    return Expr::Binary(b);
                }
                *b.right = self.expr(*b.right, mode, out);
                Expr::Binary(b)
            }
            Expr::Binary(mut b) => {
                self.operands(vec![&mut *b.left, &mut *b.right], mode, out);
                Expr::Binary(b)
            }
            Expr::Assign(mut a) => {
                if self.has(&a.left) {
                    self.errors.refuse(&a.left, Refusal::InAssignedPlace);
                    return Expr::Assign(a);
                }
                *a.right = self.expr(*a.right, mode, out);
                Expr::Assign(a)
            }
            Expr::Index(mut i) => {
                self.operands(vec![&mut *i.expr, &mut *i.index], mode, out);
                Expr::Index(i)
            }
            Expr::Tuple(mut t) => {
                self.operands(t.elems.iter_mut().collect(), mode, out);
                Expr::Tuple(t)
            }
            Expr::Array(mut a) => {
                self.operands(a.elems.iter_mut().collect(), mode, out);
                Expr::Array(a)
            }
            Expr::Repeat(mut r) => {
                *r.expr = self.expr(*r.expr, mode, out);
                Expr::Repeat(r)
            }
            Expr::Struct(mut s) => {
                let mut ops: Vec<&mut Expr> = s.fields.iter_mut().map(|f| &mut f.expr).collect();
                if let Some(rest) = &mut s.rest {
                    ops.push(&mut **rest);
                }
                self.operands(ops, mode, out);
                Expr::Struct(s)
            }
            Expr::Range(mut r) => {
                let mut ops: Vec<&mut Expr> = Vec::new();
                if let Some(x) = &mut r.start {
                    ops.push(&mut **x);
                }
                if let Some(x) = &mut r.end {
                    ops.push(&mut **x);
                }
                self.operands(ops, mode, out);
                Expr::Range(r)
            }
            e @ (Expr::If(_)
            | Expr::Match(_)
            | Expr::Block(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)) => self.value(e, out),
            // refused where they are seen (closures, `async` blocks, macros, `unsafe`, …)
            other => other,
        }
    }

    /// A value-producing compound expression bound to a temporary.
    fn value(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
        let id = self.fresh(e.span());
        self.origins
            .insert(id.to_string(), Origin::Temp(short_text(&e)));
        let s: Stmt = syn::parse_quote!(let #id = #e;);
        self.stmt(s, false, out);
        syn::parse_quote!(#id)
    }

    /// Operands evaluated left to right: each one before the last that suspends is bound to a
    /// temporary unless it is pure and nothing up to that suspension can change it.
    fn operands(&mut self, mut ops: Vec<&mut Expr>, mode: Mode, out: &mut Vec<Stmt>) {
        let Some(last) = ops.iter().rposition(|o| self.has(o)) else {
            return;
        };
        for i in 0..last {
            let op = std::mem::replace(&mut *ops[i], syn::parse_quote!(()));
            let op = self.expr(op, Mode::Keep, out);
            let later: Vec<&Expr> = ops[i + 1..=last].iter().map(|o| &**o).collect();
            *ops[i] = match op {
                op if pure(&op) && !disturbed(&op, &later) => op,
                // `&value()`: the value is bound and borrowed where it was (a borrow could
                // not travel in the state, the value can)
                Expr::Reference(mut r) if !self.has(&r.expr) => {
                    let inner = std::mem::replace(&mut *r.expr, syn::parse_quote!(()));
                    *r.expr = self.temp(inner, out);
                    if r.mutability.is_some()
                        && let Some(Stmt::Local(l)) = out.last_mut()
                        && let Pat::Ident(id) = &mut l.pat
                    {
                        id.mutability = Some(Default::default());
                    }
                    Expr::Reference(r)
                }
                op => self.temp(op, out),
            };
        }
        let op = std::mem::replace(&mut *ops[last], syn::parse_quote!(()));
        *ops[last] = self.expr(op, mode, out);
    }
}

/// `if`, `match`, a loop or a block (`unsafe` too): code the lowering explodes into stages when
/// it suspends.
pub fn is_compound(e: &Expr) -> bool {
    matches!(
        e,
        Expr::If(_)
            | Expr::Match(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Block(_)
            | Expr::Unsafe(_)
    )
}

fn is_lazy(op: &syn::BinOp) -> bool {
    matches!(op, syn::BinOp::And(_) | syn::BinOp::Or(_))
}

/// `+=`, `-=`, … (the compound assignments).
pub fn is_assign_op(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// An expression with no effect that reads only what it names: evaluating it later gives the
/// same value, as long as nothing changes what it names.
pub fn pure(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Paren(p) => pure(&p.expr),
        Expr::Reference(r) => pure(&r.expr),
        Expr::Field(f) => pure(&f.base),
        Expr::Cast(c) => pure(&c.expr),
        Expr::Tuple(t) => t.elems.iter().all(pure),
        Expr::Unary(u) => pure(&u.expr),
        _ => false,
    }
}

/// Whether code in `later` may change a variable that the pure operand `op` reads by value
/// (an assignment, a `&mut` borrow, a method call or a macro mentioning it). A borrow (`&x`)
/// is never moved out of place: Rust itself refuses a change while it is held.
fn disturbed(op: &Expr, later: &[&Expr]) -> bool {
    if matches!(op, Expr::Reference(_) | Expr::Lit(_)) {
        return false;
    }
    let names = free_in_expr(op);
    if names.is_empty() {
        return false;
    }
    struct Changes<'n> {
        names: &'n Names,
        found: bool,
    }
    impl<'a> Visit<'a> for Changes<'_> {
        fn visit_expr(&mut self, e: &'a Expr) {
            let touches = |x: &Expr| !free_in_expr(x).is_disjoint(self.names);
            let hit = match e {
                Expr::Assign(a) => touches(&a.left),
                Expr::Binary(b) if is_assign_op(&b.op) => touches(&b.left),
                Expr::Reference(r) if r.mutability.is_some() => touches(&r.expr),
                Expr::MethodCall(m) => touches(&m.receiver),
                Expr::Macro(m) => touches(&Expr::Macro(m.clone())),
                _ => false,
            };
            self.found |= hit;
            syn::visit::visit_expr(self, e);
        }
    }
    let mut c = Changes {
        names: &names,
        found: false,
    };
    for e in later {
        c.visit_expr(e);
    }
    c.found
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

#[cfg(test)]
mod tests {
    use super::*;
    use quote::{ToTokens, format_ident};
    use syn::parse_quote;

    fn normal(b: Block) -> (String, Vec<String>) {
        let mut e = Errors::default();
        let cx = format_ident!("cx");
        let (out, _) = normalize(&b, &cx, &Names::new(), &mut e);
        let text = out
            .stmts
            .iter()
            .map(|s| s.to_token_stream().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        (text, e.messages())
    }

    /// A body the lowering splits as it is comes out unchanged, token for token: tools
    /// without nested suspension points expand as before.
    #[test]
    fn accepted_bodies_are_unchanged() {
        let b: Block = parse_quote!({
            let login: Login = cx.ask("who?").await?;
            let raw = fetch(&args.location).await?;
            let verdict = cx
                .sample(Sample::user(format!("{raw}")))
                .key("v")
                .await?
                .text()?;
            let mut total = 0;
            for i in 0..3 {
                let n: u32 = cx.ask(format!("n{i}")).await?;
                if n == 0 {
                    break;
                }
                total += n;
            }
            let x = match args.k {
                1 => cx.ask::<u32>("a").await?,
                _ => 0,
            };
            total = x + cx.ask::<u32>("t").await?;
            Ok(format!("{} {verdict} {total}", login.name))
        });
        let before = b
            .stmts
            .iter()
            .map(|s| s.to_token_stream().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let (after, errs) = normal(b);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(after, before);
    }

    #[test]
    fn operands_before_the_last_point_are_bound_in_order() {
        let (text, errs) = normal(parse_quote!({
            Ok(combine(
                log(),
                cx.ask::<A>("a").await?.n,
                x,
                cx.ask::<B>("b").await?.n,
            ))
        }));
        assert!(errs.is_empty(), "{errs:?}");
        let want = [
            "let __mcp_e0 = log () ;",
            "let __mcp_e1 = cx . ask :: < A > (\"a\") . await ? . n ;",
            "Ok (combine (__mcp_e0 , __mcp_e1 , x , cx . ask :: < B > (\"b\") . await ? . n ,))",
        ];
        assert_eq!(text, want.join("\n"));
    }

    #[test]
    fn lazy_operators_and_heads() {
        let (text, errs) = normal(parse_quote!({
            while ready && cx.ask::<YesNo>("more?").await?.ok {
                n += 1;
            }
        }));
        assert!(errs.is_empty(), "{errs:?}");
        // the condition tested first in a `loop`, its right side asked only when `ready`
        assert!(
            text.starts_with("loop { let __mcp_e0 = if ready {"),
            "{text}"
        );
        assert!(text.contains("if ! (__mcp_e0) { break ; }"), "{text}");
        assert!(text.contains("else { false }"), "{text}");
    }

    #[test]
    fn a_moved_operand_changed_later_is_bound_first() {
        let (text, _) = normal(parse_quote!({
            let s = f(x, {
                x += 1;
                cx.ask::<u32>("n").await?
            });
        }));
        assert!(text.starts_with("let __mcp_e0 = x ;"), "{text}");
        let (text, _) = normal(parse_quote!({
            let s = f(&x, y, cx.ask::<u32>("n").await?);
        }));
        assert_eq!(
            text,
            "let s = f (& x , y , cx . ask :: < u32 > (\"n\") . await ?) ;"
        );
    }
}
