//! Expressions in A-normal form: operands bound to temporaries in evaluation order, lazy
//! operators as `if`, value-producing compounds as `let` initializers.

use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

use super::{Anf, Mode, Origin};
use crate::analyse::refusal::Refusal;
use crate::analyse::susp::{as_suspension, short_text};
use crate::analyse::vars::{Names, free_in_expr};

impl Anf<'_, '_> {
    /// `e` with what must run before its last suspension point bound into `out`; in `Hoist`
    /// mode no suspension point stays.
    pub(super) fn expr(&mut self, e: Expr, mode: Mode, out: &mut Vec<Stmt>) -> Expr {
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
    pub(super) fn value(&mut self, e: Expr, out: &mut Vec<Stmt>) -> Expr {
        let id = self.fresh(e.span());
        self.origins
            .insert(id.to_string(), Origin::Temp(short_text(&e)));
        let s: Stmt = syn::parse_quote!(let #id = #e;);
        self.stmt(s, false, out);
        syn::parse_quote!(#id)
    }

    /// Operands evaluated left to right: each one before the last that suspends is bound to a
    /// temporary unless it is pure and nothing up to that suspension can change it.
    pub(super) fn operands(&mut self, mut ops: Vec<&mut Expr>, mode: Mode, out: &mut Vec<Stmt>) {
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
