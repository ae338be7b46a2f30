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
//! The pieces: [`stmts`] (statement lists, compound statements and their heads, `while`,
//! `let … else`), [`exprs`] (operands, lazy operators, value-producing compounds), [`shadow`]
//! (renaming).
//!
//! A statement the lowering already accepts is left exactly as written, so a tool without
//! nested suspensions expands as before. The temporaries and renamed variables are recorded
//! in [`Origins`]: a temporary's request key is derived from its method and ordinal (see
//! [`super::lower`]), a renamed variable's from its name as written, and messages name them as
//! written.

mod exprs;
mod shadow;
mod stmts;
#[cfg(test)]
mod tests;

pub use exprs::{is_assign_op, is_compound, pure};

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Block, Expr, Ident, Stmt};

use super::susp::{find_all, short_text};
use super::vars::Names;
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
}
