//! Renaming shadowing variables. Inside an `if` / `match` / loop / block that suspends, the
//! lowering turns the end of a branch, `break`, `continue` and each suspension point into a
//! jump that carries the variables used afterwards, by name. A `let x` there that shadows an
//! outer `x` still used afterwards would make the jump carry the inner `x`: such a `let` gets
//! a fresh name (`__mcp_x1`), and so does every use of it, macros' format strings included.
//! The outer binding stays intact.

use proc_macro2::{Literal, TokenStream, TokenTree};
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Pat, Stmt};

use super::{Origin, Origins};
use crate::analyse::susp::find_all;
use crate::analyse::vars::{Names, free_in_expr, free_in_stmts, pat_bindings};

/// Renames, in `body`, the shadowing `let`s inside suspending compound statements whose outer
/// variable is used afterwards. `bound` holds the names visible before the body.
pub fn rename(body: &mut Block, cx: &Ident, bound: &Names, origins: &mut Origins) {
    let mut r = Shadows {
        cx,
        scopes: vec![bound.clone()],
        next: 0,
        origins,
    };
    r.block(&mut body.stmts, 0, &Names::new());
}

struct Shadows<'c, 'o> {
    cx: &'c Ident,
    scopes: Vec<Names>,
    next: usize,
    origins: &'o mut Origins,
}

impl Shadows<'_, '_> {
    fn bound(&self, n: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(n))
    }

    /// A statement list; `depth` counts the suspending compound statements around it, `later`
    /// the names used after it (or again, in a loop).
    fn block(&mut self, stmts: &mut [Stmt], depth: usize, later: &Names) {
        self.scopes.push(Names::new());
        for i in 0..stmts.len() {
            let mut after = free_in_stmts(&stmts[i + 1..]);
            after.extend(later.iter().cloned());
            match &mut stmts[i] {
                Stmt::Local(l) => {
                    if let Some(init) = &mut l.init {
                        self.expr(&mut init.expr, depth, &after);
                        if let Some((_, d)) = &mut init.diverge {
                            self.expr(d, depth, &after);
                        }
                    }
                    let renames = self.shadowing(&l.pat, depth, later);
                    let Stmt::Local(l) = &mut stmts[i] else {
                        unreachable!()
                    };
                    for (old, new) in &renames {
                        Rename { old, new }.visit_pat_mut(&mut l.pat);
                    }
                    let names: Vec<String> = pat_bindings(&l.pat)
                        .into_iter()
                        .map(|b| b.ident.to_string())
                        .collect();
                    for (old, new) in &renames {
                        rename_in(&mut stmts[i + 1..], old, new);
                    }
                    self.scopes.last_mut().expect("scope").extend(names);
                }
                Stmt::Expr(e, _) => self.expr(e, depth, &after),
                _ => {}
            }
        }
        self.scopes.pop();
    }

    /// The blocks inside `e` (a compound statement or a `let` initializer).
    fn expr(&mut self, e: &mut Expr, depth: usize, later: &Names) {
        let inner = if find_all(&*e, self.cx).is_empty() {
            depth
        } else {
            depth + 1
        };
        match e {
            Expr::If(i) => {
                self.scopes.push(Names::new());
                if let Expr::Let(l) = &mut *i.cond {
                    let then = &mut i.then_branch;
                    self.rename_pattern(&mut l.pat, inner, later, |r| {
                        rename_in(&mut then.stmts, r.old, r.new)
                    });
                }
                self.block(&mut i.then_branch.stmts, inner, later);
                self.scopes.pop();
                if let Some((_, els)) = &mut i.else_branch {
                    self.expr(els, inner, later);
                }
            }
            Expr::Match(m) => {
                for arm in &mut m.arms {
                    self.scopes.push(Names::new());
                    let (guard, body) = (&mut arm.guard, &mut arm.body);
                    self.rename_pattern(&mut arm.pat, inner, later, |r| {
                        if let Some((_, g)) = guard {
                            r.visit_expr_mut(g);
                        }
                        r.visit_expr_mut(body);
                    });
                    self.expr(&mut arm.body, inner, later);
                    self.scopes.pop();
                }
            }
            Expr::Block(b) => self.block(&mut b.block.stmts, inner, later),
            Expr::Loop(l) => {
                let mut again = later.clone();
                again.extend(free_in_stmts(&l.body.stmts));
                self.block(&mut l.body.stmts, inner, &again);
            }
            Expr::While(w) => {
                let mut again = later.clone();
                again.extend(free_in_stmts(&w.body.stmts));
                again.extend(free_in_expr(&w.cond));
                self.scopes.push(Names::new());
                if let Expr::Let(l) = &mut *w.cond {
                    let body = &mut w.body;
                    self.rename_pattern(&mut l.pat, inner, &again, |r| {
                        rename_in(&mut body.stmts, r.old, r.new)
                    });
                }
                self.block(&mut w.body.stmts, inner, &again);
                self.scopes.pop();
            }
            Expr::ForLoop(f) => {
                let mut again = later.clone();
                again.extend(free_in_stmts(&f.body.stmts));
                self.scopes.push(Names::new());
                let body = &mut f.body;
                self.rename_pattern(&mut f.pat, inner, &again, |r| {
                    rename_in(&mut body.stmts, r.old, r.new)
                });
                self.block(&mut f.body.stmts, inner, &again);
                self.scopes.pop();
            }
            _ => {}
        }
    }

    /// The bindings of `p` to rename: inside a suspending compound statement (`depth > 0`),
    /// a name bound outside and used later (`later`), each with its fresh name.
    fn shadowing(&mut self, p: &Pat, depth: usize, later: &Names) -> Vec<(Ident, Ident)> {
        let mut renames = Vec::new();
        for b in pat_bindings(p) {
            let name = b.ident.to_string();
            if depth > 0 && self.bound(&name) && later.contains(&name) {
                let new = Ident::new(
                    &format!("__mcp_{}{}", name.trim_start_matches('_'), self.next),
                    b.ident.span(),
                );
                self.next += 1;
                self.origins
                    .insert(new.to_string(), Origin::Renamed(name.clone()));
                renames.push((b.ident, new));
            }
        }
        renames
    }

    /// Renames the shadowing bindings of the pattern `p` of an `if let`, `while let`, `for` or
    /// match arm, in the pattern and in `body` (the code that sees them).
    fn rename_pattern(
        &mut self,
        p: &mut Pat,
        depth: usize,
        later: &Names,
        mut body: impl FnMut(&mut Rename<'_>),
    ) {
        for (old, new) in self.shadowing(p, depth, later) {
            let mut r = Rename {
                old: &old,
                new: &new,
            };
            r.visit_pat_mut(p);
            body(&mut r);
        }
        self.declare(p);
    }

    fn declare(&mut self, p: &Pat) {
        let names = pat_bindings(p).into_iter().map(|b| b.ident.to_string());
        self.scopes.last_mut().expect("scope").extend(names);
    }
}

/// Renames `old` to `new` in the statements a `let old` is visible in, up to a `let` that
/// binds `old` again (whose initializer still sees it).
fn rename_in(stmts: &mut [Stmt], old: &Ident, new: &Ident) {
    let mut r = Rename { old, new };
    for s in stmts {
        match s {
            Stmt::Local(l) => {
                if let Some(init) = &mut l.init {
                    r.visit_expr_mut(&mut init.expr);
                    if let Some((_, d)) = &mut init.diverge {
                        r.visit_expr_mut(d);
                    }
                }
                if binds(&l.pat, old) {
                    return;
                }
            }
            other => r.visit_stmt_mut(other),
        }
    }
}

fn binds(p: &Pat, name: &Ident) -> bool {
    pat_bindings(p).iter().any(|b| b.ident == *name)
}

/// Renames the uses of one variable, respecting the scopes that bind the name again.
pub(super) struct Rename<'a> {
    old: &'a Ident,
    new: &'a Ident,
}

impl Rename<'_> {
    fn tokens(&self, ts: TokenStream) -> TokenStream {
        ts.into_iter()
            .map(|t| match t {
                TokenTree::Ident(i) if i == *self.old => {
                    TokenTree::Ident(Ident::new(&self.new.to_string(), i.span()))
                }
                TokenTree::Group(g) => {
                    let mut n = proc_macro2::Group::new(g.delimiter(), self.tokens(g.stream()));
                    n.set_span(g.span());
                    TokenTree::Group(n)
                }
                TokenTree::Literal(l) => TokenTree::Literal(self.literal(l)),
                other => other,
            })
            .collect()
    }

    /// `{old}` / `{old:…}` in a format string literal.
    fn literal(&self, l: Literal) -> Literal {
        let s = l.to_string();
        if !s.starts_with('"') && !s.starts_with('r') {
            return l;
        }
        let (old, new) = (self.old.to_string(), self.new.to_string());
        let renamed = s
            .replace(&format!("{{{old}}}"), &format!("{{{new}}}"))
            .replace(&format!("{{{old}:"), &format!("{{{new}:"));
        if renamed == s {
            return l;
        }
        match renamed.parse::<Literal>() {
            Ok(mut n) => {
                n.set_span(l.span());
                n
            }
            Err(_) => l,
        }
    }
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Path(p)
                if p.qself.is_none()
                    && p.path.leading_colon.is_none()
                    && p.path.segments.len() == 1
                    && p.path.segments[0].ident == *self.old =>
            {
                p.path.segments[0].ident = Ident::new(&self.new.to_string(), self.old_span(p));
            }
            Expr::Closure(c) => {
                if !c.inputs.iter().any(|p| binds(p, self.old)) {
                    self.visit_expr_mut(&mut c.body);
                }
            }
            Expr::Block(b) => rename_in(&mut b.block.stmts, self.old, self.new),
            Expr::ForLoop(f) => {
                self.visit_expr_mut(&mut f.expr);
                if !binds(&f.pat, self.old) {
                    rename_in(&mut f.body.stmts, self.old, self.new);
                }
            }
            Expr::If(i) => {
                if !self.condition(&mut i.cond) {
                    rename_in(&mut i.then_branch.stmts, self.old, self.new);
                }
                if let Some((_, els)) = &mut i.else_branch {
                    self.visit_expr_mut(els);
                }
            }
            Expr::While(w) => {
                if !self.condition(&mut w.cond) {
                    rename_in(&mut w.body.stmts, self.old, self.new);
                }
            }
            Expr::Struct(s) => {
                for f in &mut s.fields {
                    // `S { x }` keeps its field name: `S { x: __mcp_x0 }`
                    if f.colon_token.is_none()
                        && matches!(&f.expr, Expr::Path(p) if p.path.is_ident(self.old))
                    {
                        f.colon_token = Some(Default::default());
                    }
                    self.visit_expr_mut(&mut f.expr);
                }
                if let Some(r) = &mut s.rest {
                    self.visit_expr_mut(r);
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        if binds(&a.pat, self.old) {
            return;
        }
        if let Some((_, g)) = &mut a.guard {
            self.visit_expr_mut(g);
        }
        self.visit_expr_mut(&mut a.body);
    }
    fn visit_pat_ident_mut(&mut self, i: &mut syn::PatIdent) {
        if i.ident == *self.old {
            i.ident = Ident::new(&self.new.to_string(), i.ident.span());
        }
        syn::visit_mut::visit_pat_ident_mut(self, i);
    }
    fn visit_field_pat_mut(&mut self, f: &mut syn::FieldPat) {
        // `S { x }` binding `x`: `S { x: __mcp_x0 }`
        if f.colon_token.is_none() {
            f.colon_token = Some(Default::default());
        }
        syn::visit_mut::visit_field_pat_mut(self, f);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        m.tokens = self.tokens(std::mem::take(&mut m.tokens));
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Rename<'_> {
    /// Renames in an `if` / `while` condition; true when its `let` binds the name again (the
    /// body then sees the new binding).
    fn condition(&mut self, cond: &mut Expr) -> bool {
        match cond {
            Expr::Let(l) => {
                self.visit_expr_mut(&mut l.expr);
                binds(&l.pat, self.old)
            }
            c => {
                self.visit_expr_mut(c);
                false
            }
        }
    }

    fn old_span(&self, p: &syn::ExprPath) -> proc_macro2::Span {
        p.path.segments[0].ident.span()
    }
}
