//! The function kept for *direct mode*, with the state machine's keys.
//!
//! The original function is emitted as written except that each suspension point whose key is
//! derived (from the `let` binding, the tuple pattern of a `round`, or an assignment target)
//! gets one more call before its `.await`: `.__mcp_default_key("name")` (or
//! `.__mcp_default_keys(&["a", "b"])` for a `round`). At run time it sets the key only on a
//! builder that has none, so the precedence is the state machine's: a literal `.key("…")` at
//! the call site, then a key set on the builder value, then the derived key.

use proc_macro2::Span;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, ItemFn};

use crate::analyse::Analysis;
use crate::analyse::model::Point;
use crate::analyse::susp::{Kind, as_suspension};
use crate::rt::Rt;

/// `f` with the derived keys made explicit as defaults. The suspension points are found in
/// the same order as the lowering recorded them (evaluation order); if they do not line up with
/// the analysed points (which would be a bug), `f` is returned unchanged.
pub fn with_default_keys(f: &ItemFn, cx: &Ident, a: &Analysis) -> ItemFn {
    rewrite(f, cx, a).unwrap_or_else(|| f.clone())
}

/// `None` when the suspension points found do not line up with the analysed ones.
fn rewrite(f: &ItemFn, cx: &Ident, a: &Analysis) -> Option<ItemFn> {
    let mut out = f.clone();
    let mut r = Rewriter {
        cx,
        points: &a.machine.points,
        next: 0,
        ok: true,
    };
    r.visit_block_mut(&mut out.block);
    (r.ok && r.next == a.machine.points.len()).then_some(out)
}

struct Rewriter<'a> {
    cx: &'a Ident,
    points: &'a [Point],
    next: usize,
    ok: bool,
}

impl Rewriter<'_> {
    /// The call to append to `cx.method(..)…` of `point`, if any key is derived there.
    fn default_call(&self, point: &Point, span: Span) -> Option<(Ident, Expr)> {
        let s = &point.susp;
        if s.parts.iter().all(|p| p.key.is_some()) || point.keys.len() != s.parts.len() {
            return None;
        }
        if s.kind == Kind::Round {
            let keys = &point.keys;
            let arg: Expr = syn::parse_quote_spanned!(span=> &[#(#keys),*]);
            Some((Ident::new("__mcp_default_keys", span), arg))
        } else {
            let key = &point.keys[0];
            let arg: Expr = syn::parse_quote_spanned!(span=> #key);
            Some((Ident::new("__mcp_default_key", span), arg))
        }
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if !self.ok {
            return;
        }
        let Some(kind) = as_suspension(e, self.cx).map(|s| s.kind) else {
            syn::visit_mut::visit_expr_mut(self, e);
            return;
        };
        // a suspension point in another one's arguments runs first, and the lowering
        // recorded it first: the points are taken in evaluation order
        syn::visit_mut::visit_expr_mut(self, e);
        let Some(point) = self.points.get(self.next) else {
            self.ok = false;
            return;
        };
        self.next += 1;
        // the A-normal form may have moved the point's arguments into temporaries: its kind
        // is what must line up
        if point.susp.kind != kind {
            self.ok = false;
            return;
        }
        let Expr::Await(aw) = e else { return };
        let span = aw.await_token.span;
        if let Some(call) = &point.flow {
            // a flow call without `.key(..)`: name its site as the state machine does
            if call.key.is_none()
                && let Expr::Call(c) = &mut *aw.base
                && let Some(first) = c.args.first_mut()
            {
                let site = &point.keys[0];
                let cx = &*first;
                let p = Rt.at(span);
                *first = syn::parse_quote_spanned!(span=> #p::site(#cx, #site));
            }
            return;
        }
        if let Some((method, arg)) = self.default_call(point, span) {
            let base = &aw.base;
            *aw.base = syn::parse_quote_spanned!(span=> #base.#method(#arg));
        }
    }

    // like the lowering, do not look into nested items
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;
    use quote::{ToTokens, format_ident};

    fn run(f: ItemFn) -> String {
        let cx = format_ident!("cx");
        let mut e = Errors::default();
        let inputs = crate::analyse::Inputs {
            cx: &cx,
            args: Default::default(),
            params: Vec::new(),
            err: quote::quote!(ToolError),
        };
        let a = crate::analyse::analyse(&f.block, &inputs, false, &mut e);
        assert!(e.messages().is_empty(), "{:?}", e.messages());
        rewrite(&f, &cx, &a)
            .expect("the points line up")
            .block
            .to_token_stream()
            .to_string()
            .replace(" . ", ".")
            .replace(" (", "(")
            .replace(" !", "!")
    }

    #[test]
    fn derived_keys_become_defaults() {
        let out = run(syn::parse_quote! {
            async fn t(cx: &mut ToolContext, args: A) -> Result<u32, ToolError> {
                let login: Login = cx.ask("Who?").await?;
                let v = cx.sample(Sample::user("x")).key("verdict").await?.text()?;
                let w = cx.sample(summary()).with(|s| s).await?.text()?;
                if cx.ask::<bool>("go?").key("go").await? {
                    let (a, _b) = cx.round((Ask::<u32>::new("a"), Roots::new().key("r"))).await?;
                    total = cx.ask::<u32>("n").key(format!("n{a}")).await?;
                }
                for i in 0..3 {
                    let n: u32 = cx.ask(format!("n{i}")).await?;
                }
                let x = match args.k {
                    1 => { let y: u32 = cx.ask("y").await?; y }
                    _ => cx.ask::<u32>("z").key("zed").await?,
                };
                cx.checkpoint().await?;
                Ok(1)
            }
        });
        for want in [
            r#"cx.ask("Who?").__mcp_default_key("login").await"#,
            r#".key("verdict").await"#,
            r#".with(| s | s).__mcp_default_key("w").await"#,
            r#".key("go").await"#,
            r#".__mcp_default_keys(& ["a" , "r"]).await"#,
            r#".key(format!("n{a}")).__mcp_default_key("total").await"#,
            r#"cx.ask(format!("n{i}")).__mcp_default_key("n").await"#,
            r#"cx.ask("y").__mcp_default_key("y").await"#,
            r#".key("zed").await"#,
            r#"cx.checkpoint().await"#,
        ] {
            assert!(out.contains(want), "{want} not in {out}");
        }
        assert_eq!(out.matches("__mcp_default_key").count(), 6, "{out}");
    }
}
