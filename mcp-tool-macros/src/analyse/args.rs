//! Borrows of a tool's arguments across suspension points.
//!
//! The arguments arrive again in every round (checked against the digest sealed in the
//! state), so a borrow of them need not be stored: it is bound again from the arguments in
//! every stage that needs it. Only expressions that merely *reach into* the arguments are
//! evaluated again — paths, fields, indexing, references, and std accessors such as
//! `iter()`, `as_str()`, `enumerate()` — never code with effects. A `for` loop over such an
//! expression keeps only its position in the state, and binds its item again after a
//! suspension point.

use syn::Expr;

use super::vars::{Names, free_in_expr};

/// Accessors evaluated again: they only borrow or reshape a view of their receiver.
const ACCESSORS: &[&str] = &[
    "iter",
    "enumerate",
    "rev",
    "as_str",
    "as_slice",
    "as_ref",
    "as_deref",
    "as_bytes",
    "chars",
    "char_indices",
    "bytes",
    "lines",
    "keys",
    "values",
    "split_whitespace",
    "trim",
    "get",
    "first",
    "last",
    "skip",
    "take",
    "step_by",
];

/// Whether `e` only reaches into the arguments (`args` names them, `derived` names borrows
/// of them already bound), so it can be evaluated again in a later round.
pub fn reaches_into(e: &Expr, args: &Names, derived: &Names) -> bool {
    if args.is_empty() {
        return false;
    }
    let free = free_in_expr(e);
    !free.is_empty() && free.iter().all(|n| args.contains(n) || derived.contains(n)) && shape(e)
}

fn shape(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none(),
        Expr::Lit(_) => true,
        Expr::Field(f) => shape(&f.base),
        Expr::Index(i) => shape(&i.expr) && shape(&i.index),
        Expr::Reference(r) => r.mutability.is_none() && shape(&r.expr),
        Expr::Paren(p) => shape(&p.expr),
        Expr::Group(g) => shape(&g.expr),
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)) && shape(&u.expr),
        Expr::Range(r) => {
            r.start.as_deref().is_none_or(shape) && r.end.as_deref().is_none_or(shape)
        }
        Expr::MethodCall(m) => {
            m.turbofish.is_none()
                && ACCESSORS.contains(&m.method.to_string().as_str())
                && shape(&m.receiver)
                && m.args.iter().all(shape)
        }
        _ => false,
    }
}

/// Whether `e` visibly makes a borrow (so its value cannot be stored): a reference, a string
/// literal (`&'static str`), or a borrowing accessor at the end.
pub fn looks_borrowed(e: &Expr) -> bool {
    match e {
        Expr::Reference(_) => true,
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Str(_) | syn::Lit::ByteStr(_)),
        Expr::Paren(p) => looks_borrowed(&p.expr),
        Expr::MethodCall(m) => {
            let n = m.method.to_string();
            n != "len" && ACCESSORS.contains(&n.as_str())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn names(v: &[&str]) -> Names {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn what_reaches_into_the_arguments() {
        let args = names(&["args"]);
        let none = Names::new();
        for e in [
            parse_quote!(&args.items),
            parse_quote!(args.items.iter().enumerate()),
            parse_quote!(args.name.as_str()),
            parse_quote!(&args.items[1..]),
            parse_quote!(args.map.get("k")),
        ] {
            assert!(reaches_into(&e, &args, &none), "{}", quote::quote!(#e));
        }
        for e in [
            parse_quote!(args.items.clone()),
            parse_quote!(compute(&args.items)),
            parse_quote!(&other.items),
            parse_quote!(args.items.iter().map(|x| x)),
            parse_quote!(&mut args.items),
        ] {
            assert!(!reaches_into(&e, &args, &none), "{}", quote::quote!(#e));
        }
        assert!(reaches_into(
            &parse_quote!(&name[..2]),
            &args,
            &names(&["name"])
        ));
        assert!(looks_borrowed(&parse_quote!(&args.items)));
        assert!(looks_borrowed(&parse_quote!(args.name.as_str())));
        assert!(!looks_borrowed(&parse_quote!(args.count)));
    }
}
