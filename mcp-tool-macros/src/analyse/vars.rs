//! Names: the bindings a pattern introduces and the free variables a piece of code mentions
//! (respecting the scopes it opens itself). Mentions inside macro calls are over-approximated:
//! every identifier token and every `{name}` in a string literal counts.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::BTreeSet;
use syn::visit::Visit;
use syn::{Expr, Ident, Pat, Stmt};

/// A set of variable names.
pub type Names = BTreeSet<String>;

/// A binding introduced by a pattern.
#[derive(Clone, Debug)]
pub struct Binding {
    /// The identifier (with the user's span).
    pub ident: Ident,
    /// `mut x`.
    pub mutable: bool,
    /// `ref x` / `ref mut x`.
    #[allow(dead_code)]
    pub by_ref: bool,
}

/// The bindings of a pattern, in order.
pub fn pat_bindings(p: &Pat) -> Vec<Binding> {
    struct B(Vec<Binding>);
    impl<'a> Visit<'a> for B {
        fn visit_pat_ident(&mut self, pi: &'a syn::PatIdent) {
            // `None`, `Foo` in a pattern parse as identifiers too; an uppercase first letter
            // is (by convention) a constant or a unit variant, not a binding.
            let name = pi.ident.to_string();
            if !name.starts_with(|c: char| c.is_uppercase()) {
                self.0.push(Binding {
                    ident: pi.ident.clone(),
                    mutable: pi.mutability.is_some(),
                    by_ref: pi.by_ref.is_some(),
                });
            }
            syn::visit::visit_pat_ident(self, pi);
        }
    }
    let mut b = B(Vec::new());
    b.visit_pat(p);
    b.0
}

/// Names a `let` statement binds (empty for other statements).
pub fn stmt_defs(s: &Stmt) -> Vec<Binding> {
    match s {
        Stmt::Local(l) => pat_bindings(&l.pat),
        _ => Vec::new(),
    }
}

/// Free variables of an expression.
pub fn free_in_expr(e: &Expr) -> Names {
    let mut f = Fv::default();
    f.visit_expr(e);
    f.out
}

/// Free variables of a statement (for a `let`, of its initializer and `else` block).
pub fn free_in_stmt(s: &Stmt) -> Names {
    let mut f = Fv::default();
    match s {
        Stmt::Local(l) => {
            if let Some(init) = &l.init {
                f.visit_expr(&init.expr);
                if let Some((_, d)) = &init.diverge {
                    f.visit_expr(d);
                }
            }
        }
        other => f.visit_stmt(other),
    }
    f.out
}

/// Free variables of a statement sequence (later statements see earlier `let`s).
pub fn free_in_stmts(stmts: &[Stmt]) -> Names {
    let mut f = Fv::default();
    f.scopes.push(Names::new());
    f.stmts(stmts);
    f.out
}

#[derive(Default)]
struct Fv {
    scopes: Vec<Names>,
    out: Names,
}

impl Fv {
    fn bound(&self, n: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(n))
    }
    fn mention(&mut self, n: String) {
        if !self.bound(&n) {
            self.out.insert(n);
        }
    }
    fn bind(&mut self, p: &Pat) {
        let names: Vec<String> = pat_bindings(p)
            .into_iter()
            .map(|b| b.ident.to_string())
            .collect();
        if self.scopes.is_empty() {
            self.scopes.push(Names::new());
        }
        let top = self.scopes.last_mut().expect("a scope");
        top.extend(names);
    }
    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Local(l) => {
                    if let Some(init) = &l.init {
                        self.visit_expr(&init.expr);
                        if let Some((_, d)) = &init.diverge {
                            self.visit_expr(d);
                        }
                    }
                    self.visit_pat_exprs(&l.pat);
                    self.bind(&l.pat);
                }
                other => self.visit_stmt(other),
            }
        }
    }
    /// Patterns can mention constants and paths (`x @ 1..=N`), rarely variables; skip them.
    fn visit_pat_exprs(&mut self, _p: &Pat) {}
    fn tokens(&mut self, ts: &TokenStream) {
        for t in ts.clone() {
            match t {
                TokenTree::Ident(i) => self.mention(i.to_string()),
                TokenTree::Group(g) => self.tokens(&g.stream()),
                TokenTree::Literal(l) => {
                    let s = l.to_string();
                    if s.starts_with('"') || s.starts_with('r') {
                        for n in format_captures(&s) {
                            self.mention(n);
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }
}

/// `{name}` / `{name:?}` captures in a format string literal (as written, quotes included).
pub fn format_captures(lit: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = lit.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '{' {
            if chars.get(i + 1) == Some(&'{') {
                i += 2;
                continue;
            }
            let mut j = i + 1;
            let mut name = String::new();
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                name.push(chars[j]);
                j += 1;
            }
            if !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && matches!(chars.get(j), Some('}') | Some(':'))
            {
                out.push(name);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

impl<'a> Visit<'a> for Fv {
    fn visit_expr_path(&mut self, p: &'a syn::ExprPath) {
        if p.qself.is_none() && p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
            self.mention(p.path.segments[0].ident.to_string());
        }
    }
    fn visit_block(&mut self, b: &'a syn::Block) {
        self.scopes.push(Names::new());
        self.stmts(&b.stmts);
        self.scopes.pop();
    }
    fn visit_expr_closure(&mut self, c: &'a syn::ExprClosure) {
        self.scopes.push(Names::new());
        for p in &c.inputs {
            self.bind(p);
        }
        self.visit_expr(&c.body);
        self.scopes.pop();
    }
    fn visit_arm(&mut self, a: &'a syn::Arm) {
        self.scopes.push(Names::new());
        self.bind(&a.pat);
        if let Some((_, g)) = &a.guard {
            self.visit_expr(g);
        }
        self.visit_expr(&a.body);
        self.scopes.pop();
    }
    fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.scopes.push(Names::new());
        self.bind(&f.pat);
        self.visit_block(&f.body);
        self.scopes.pop();
    }
    fn visit_expr_if(&mut self, i: &'a syn::ExprIf) {
        self.scopes.push(Names::new());
        self.visit_expr(&i.cond);
        self.visit_block(&i.then_branch);
        self.scopes.pop();
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
    }
    fn visit_expr_while(&mut self, w: &'a syn::ExprWhile) {
        self.scopes.push(Names::new());
        self.visit_expr(&w.cond);
        self.visit_block(&w.body);
        self.scopes.pop();
    }
    fn visit_expr_let(&mut self, l: &'a syn::ExprLet) {
        self.visit_expr(&l.expr);
        self.bind(&l.pat);
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        self.tokens(&m.tokens);
    }
    fn visit_item(&mut self, _: &'a syn::Item) {}
    fn visit_pat(&mut self, _: &'a Pat) {}
    fn visit_type(&mut self, _: &'a syn::Type) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn free_variables() {
        let b: syn::Block = parse_quote!({
            let a = b + 1;
            let c = |x| x + a + d;
            match e {
                Some(f) => f + g,
                None => 0,
            };
            for h in i {
                h;
            }
            println!("{j} {k:?} {{l}}", m);
            a
        });
        let fv = free_in_stmts(&b.stmts);
        let v: Vec<_> = fv.iter().map(String::as_str).collect();
        assert_eq!(v, ["b", "d", "e", "g", "i", "j", "k", "m"]);
    }
}
