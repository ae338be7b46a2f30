//! Borrows of a tool's arguments across suspension points.
//!
//! The arguments arrive again in every round (checked against the digest sealed in the
//! state), so a borrow of them need not be stored: it is bound again from the arguments in
//! every stage that needs it. Only expressions that merely *reach into* the arguments are
//! evaluated again — paths, fields, indexing, references, and std accessors such as
//! `iter()`, `as_str()`, `enumerate()` — never code with effects. A `for` loop over such an
//! expression keeps only its position in the state, and binds its item again after a
//! suspension point. The same holds for a borrow of a local declared without `mut` and
//! kept in the state (the `for` lowering passes such locals as roots too).

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

/// Whether the `let` visibly binds one owned value (no borrow, no lifetime), so that the
/// variable can be kept in the state only to make a request again: a single identifier
/// bound by value, with a type annotation free of references and lifetimes, or without one
/// and an initializer that makes an owned value (`format!`, `vec!`, `String::from`,
/// `.to_string()`, `.to_owned()`, `.to_vec()`, a number or a boolean). Anything else may
/// hold a borrow (whose type a probe cannot tell apart from an owned one): such a variable is
/// never kept for this, and a request reading it is kept whole.
pub fn visibly_owned(l: &syn::Local) -> bool {
    let (pat, ty) = match &l.pat {
        syn::Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
        p => (p, None),
    };
    let syn::Pat::Ident(id) = pat else {
        return false;
    };
    if id.by_ref.is_some() || id.subpat.is_some() {
        return false;
    }
    let Some(init) = &l.init else {
        return false;
    };
    if init.diverge.is_some() {
        return false;
    }
    match ty {
        Some(t) => owned_type(t),
        None => owned_expr(&init.expr),
    }
}

/// A type written without references, lifetimes, pointers or trait objects (`String`,
/// `Vec<Item>`, `Option<(u32, Login)>`; not `&str`, `Cow<'_, str>`, `Box<dyn Error>`).
fn owned_type(t: &syn::Type) -> bool {
    use quote::ToTokens;
    struct Owned(bool);
    impl<'ast> syn::visit::Visit<'ast> for Owned {
        fn visit_type_reference(&mut self, _: &'ast syn::TypeReference) {
            self.0 = false;
        }
        fn visit_type_ptr(&mut self, _: &'ast syn::TypePtr) {
            self.0 = false;
        }
        fn visit_type_trait_object(&mut self, _: &'ast syn::TypeTraitObject) {
            self.0 = false;
        }
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = false;
        }
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.0 = false;
        }
        fn visit_lifetime(&mut self, _: &'ast syn::Lifetime) {
            self.0 = false;
        }
    }
    let mut v = Owned(true);
    syn::visit::Visit::visit_type(&mut v, t);
    // `Cow` borrows with an elided lifetime
    v.0 && !t.to_token_stream().to_string().contains("Cow")
}

/// An expression whose value is visibly owned (see [`visibly_owned`]).
fn owned_expr(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => owned_expr(&p.expr),
        Expr::Macro(m) => m
            .mac
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "format" || s.ident == "vec"),
        Expr::MethodCall(m) => {
            matches!(
                m.method.to_string().as_str(),
                "to_string" | "to_owned" | "to_vec" | "into_owned"
            ) && m.turbofish.is_none()
        }
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                matches!(
                    segs.iter().map(String::as_str).collect::<Vec<_>>()[..],
                    ["String", "from" | "new" | "with_capacity"]
                )
            }
            _ => false,
        },
        Expr::Lit(l) => matches!(
            l.lit,
            syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_) | syn::Lit::Char(_)
        ),
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
    fn what_is_visibly_owned() {
        let owned = |s: syn::Stmt| match s {
            syn::Stmt::Local(l) => visibly_owned(&l),
            _ => panic!("a let"),
        };
        for yes in [
            parse_quote!(let raw = format!("x{y}");),
            parse_quote!(let raw: String = fetch(&args.city);),
            parse_quote!(let mut v: Vec<(u32, Login)> = load();),
            parse_quote!(let s = name.to_string();),
            parse_quote!(let s = String::from("x");),
            parse_quote!(let n = 3;),
        ] {
            assert!(owned(yes));
        }
        for no in [
            parse_quote!(let raw = fetch(&args.city);),
            parse_quote!(let s: &str = "x";),
            parse_quote!(let s = "x";),
            parse_quote!(let c: Cow<str> = x.into();),
            parse_quote!(let c: Wrapper<'_> = x;),
            parse_quote!(let e: Box<dyn Error> = x;),
            parse_quote!(let (a, b) = (format!("a"), format!("b"));),
            parse_quote!(let ref r = format!("x");),
            parse_quote!(let v: Vec<_> = it.collect();),
            parse_quote!(let x;),
            parse_quote!(let Some(x) = y.clone() else { return };),
        ] {
            assert!(!owned(no));
        }
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
