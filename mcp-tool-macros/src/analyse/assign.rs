//! Definite assignment of variables declared without an initializer (`let verdict;`), so
//! that deferred initialisation works across suspension points: a stage carries such a
//! variable only where it is surely assigned, and declares it again (`let verdict;`) where
//! it is not assigned yet.
//!
//! The analysis is syntactic and conservative, like the compiler's own: an `if` assigns when
//! both branches do, a `match` when every arm does, a branch that diverges (`return`,
//! `break`, `continue`, `panic!`) counts as assigning.

use syn::visit::Visit;
use syn::{Expr, Stmt};

/// What a piece of code does to a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Does not assign it.
    No,
    /// Assigns it on some paths.
    Maybe,
    /// Assigns it on every path that continues.
    Definite,
}

/// The state of a deferred variable at a point of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Not assigned on any path.
    Unassigned,
    /// Assigned on some paths only.
    Maybe,
    /// Assigned on every path.
    Assigned,
}

impl State {
    /// The state after code with `effect` ran.
    pub fn then(self, effect: Effect) -> State {
        match (self, effect) {
            (State::Assigned, _) | (_, Effect::Definite) => State::Assigned,
            (_, Effect::Maybe) | (State::Maybe, Effect::No) => State::Maybe,
            (State::Unassigned, Effect::No) => State::Unassigned,
        }
    }
}

fn meet(a: Effect, b: Effect) -> Effect {
    match (a, b) {
        (Effect::Definite, Effect::Definite) => Effect::Definite,
        (Effect::No, Effect::No) => Effect::No,
        _ => Effect::Maybe,
    }
}

fn seq(a: Effect, b: Effect) -> Effect {
    match (a, b) {
        (Effect::Definite, _) | (_, Effect::Definite) => Effect::Definite,
        (Effect::Maybe, _) | (_, Effect::Maybe) => Effect::Maybe,
        _ => Effect::No,
    }
}

/// What statement `s` does to variable `name`.
pub fn stmt_effect(s: &Stmt, name: &str) -> Effect {
    match s {
        Stmt::Local(l) => l
            .init
            .as_ref()
            .map(|i| expr_effect(&i.expr, name))
            .unwrap_or(Effect::No),
        Stmt::Expr(e, _) => expr_effect(e, name),
        Stmt::Macro(m) if diverging_macro(&m.mac) => Effect::Definite,
        _ => Effect::No,
    }
}

/// What a statement list does to `name` (a diverging statement ends it: what follows is not
/// reached).
pub fn block_effect(stmts: &[Stmt], name: &str) -> Effect {
    let mut out = Effect::No;
    for s in stmts {
        out = seq(out, stmt_effect(s, name));
        if out == Effect::Definite || diverges(s) {
            return Effect::Definite;
        }
    }
    out
}

/// What expression `e` does to `name`.
pub fn expr_effect(e: &Expr, name: &str) -> Effect {
    match e {
        Expr::Assign(a) if is_name(&a.left, name) => Effect::Definite,
        Expr::Block(b) => block_effect(&b.block.stmts, name),
        Expr::Unsafe(b) => block_effect(&b.block.stmts, name),
        Expr::Paren(p) => expr_effect(&p.expr, name),
        Expr::If(i) => {
            let then = block_effect(&i.then_branch.stmts, name);
            let els = match &i.else_branch {
                Some((_, e)) => expr_effect(e, name),
                None => Effect::No,
            };
            seq(expr_effect(&i.cond, name), meet(then, els))
        }
        Expr::Match(m) => {
            let arms = m
                .arms
                .iter()
                .map(|a| arm_effect(&a.body, name))
                .reduce(meet)
                .unwrap_or(Effect::Definite);
            seq(expr_effect(&m.expr, name), arms)
        }
        Expr::Loop(l) => {
            // the body runs at least once, up to its first `break`
            let mut out = Effect::No;
            for s in &l.body.stmts {
                if has_break(s) {
                    break;
                }
                out = seq(out, stmt_effect(s, name));
                if out == Effect::Definite {
                    return Effect::Definite;
                }
            }
            if block_effect(&l.body.stmts, name) == Effect::No {
                Effect::No
            } else {
                Effect::Maybe
            }
        }
        Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => Effect::Definite,
        Expr::Closure(_) | Expr::Async(_) => Effect::No,
        Expr::Macro(m) if diverging_macro(&m.mac) => Effect::Definite,
        other => {
            if assigns_anywhere(other, name) {
                Effect::Maybe
            } else {
                Effect::No
            }
        }
    }
}

fn arm_effect(body: &Expr, name: &str) -> Effect {
    expr_effect(body, name)
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident(name))
}

fn diverging_macro(m: &syn::Macro) -> bool {
    m.path.get_ident().is_some_and(|i| {
        ["panic", "unreachable", "todo", "unimplemented"].contains(&i.to_string().as_str())
    })
}

/// Whether `s` never continues (`return …;`, `break;`, `continue;`, `panic!(…);`).
pub fn diverges(s: &Stmt) -> bool {
    match s {
        Stmt::Expr(Expr::Return(_) | Expr::Break(_) | Expr::Continue(_), _) => true,
        Stmt::Expr(Expr::Macro(m), _) => diverging_macro(&m.mac),
        Stmt::Macro(m) => diverging_macro(&m.mac),
        _ => false,
    }
}

fn has_break(s: &Stmt) -> bool {
    struct F(bool);
    impl<'a> Visit<'a> for F {
        fn visit_expr_break(&mut self, _: &'a syn::ExprBreak) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = F(false);
    f.visit_stmt(s);
    f.0
}

/// Whether `name = …` appears anywhere in `e` (outside closures and items).
pub fn assigns_anywhere(e: &Expr, name: &str) -> bool {
    struct F<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'a> Visit<'a> for F<'_> {
        fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
            if is_name(&a.left, self.name) {
                self.found = true;
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = F { name, found: false };
    f.visit_expr(e);
    f.found
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn eff(b: syn::Block) -> Effect {
        block_effect(&b.stmts, "v")
    }

    #[test]
    fn effects() {
        assert_eq!(
            eff(parse_quote!({
                v = 1;
            })),
            Effect::Definite
        );
        assert_eq!(
            eff(parse_quote!({
                if c {
                    v = 1;
                } else {
                    v = 2;
                }
            })),
            Effect::Definite
        );
        assert_eq!(
            eff(parse_quote!({
                if c {
                    v = 1;
                }
            })),
            Effect::Maybe
        );
        assert_eq!(
            eff(parse_quote!({
                if c {
                    v = 1;
                } else {
                    return 3;
                }
            })),
            Effect::Definite
        );
        assert_eq!(
            eff(parse_quote!({
                match x {
                    1 => v = 1,
                    _ => {
                        v = 2;
                    }
                }
            })),
            Effect::Definite
        );
        assert_eq!(
            eff(parse_quote!({
                match x {
                    1 => v = 1,
                    _ => {}
                }
            })),
            Effect::Maybe
        );
        assert_eq!(
            eff(parse_quote!({
                for i in x {
                    v = i;
                }
            })),
            Effect::Maybe
        );
        assert_eq!(
            eff(parse_quote!({
                f(w);
            })),
            Effect::No
        );
        assert_eq!(
            eff(parse_quote!({
                let c = || v = 1;
            })),
            Effect::No
        );
        assert_eq!(
            eff(parse_quote!({
                loop {
                    v = 1;
                    break;
                }
            })),
            Effect::Definite
        );
        assert_eq!(
            eff(parse_quote!({
                loop {
                    if c {
                        break;
                    }
                    v = 1;
                }
            })),
            Effect::Maybe
        );
        assert_eq!(State::Unassigned.then(Effect::Maybe), State::Maybe);
        assert_eq!(State::Maybe.then(Effect::Definite), State::Assigned);
    }
}
