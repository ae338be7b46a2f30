//! Analysis of the tool body: suspension points, rejected positions, the stage graph with the
//! variables live at each stage, keys and the capability set.

pub mod lower;
pub mod reject;
pub mod susp;
pub mod vars;

use std::collections::BTreeSet;

use crate::errors::Errors;
pub use lower::{Machine, StageKind};
pub use susp::Cap;

/// Everything the expansion needs from the body.
pub struct Analysis {
    /// Stages and points.
    pub machine: Machine,
    /// Capabilities any request may need.
    pub caps: BTreeSet<Cap>,
    /// True when a suspension point sits inside a loop.
    pub loops: bool,
}

/// Analyses `body` (the tool function's block).
pub fn analyse(body: &syn::Block, cx: &syn::Ident, journal: bool, errors: &mut Errors) -> Analysis {
    reject::check_positions(body, cx, errors);
    let machine = lower::lower(body, cx, errors);
    let mut caps = BTreeSet::new();
    let mut seen: Vec<(String, proc_macro2::Span)> = Vec::new();
    for p in &machine.points {
        for (part, key) in p.susp.parts.iter().zip(&p.keys) {
            caps.insert(part.cap);
            // keys only known at run time (set on a builder made elsewhere or computed) are
            // checked by the runtime
            if journal && susp::static_key(part) {
                if p.in_loop {
                    errors.push_spanned(
                        &part.tokens,
                        format!(
                            "with `journal`, answers are kept by key, so a suspension point inside a loop needs a key that \
                             differs per iteration, or every iteration gets the first answer to \"{key}\": \
                             add `.key(format!(\"{key}_{{i}}\"))` with the iteration's index or item"
                        ),
                    );
                }
                if seen.iter().any(|(k, _)| k == key) {
                    errors.push_spanned(
                        &part.tokens,
                        format!(
                            "with `journal`, answers are kept by key, so two suspension points cannot share the key \"{key}\"; \
                             rename the binding or add `.key(\"…\")`"
                        ),
                    );
                }
                seen.push((key.clone(), part.span));
            }
        }
    }
    let loops = machine.points.iter().any(|p| p.in_loop);
    Analysis {
        machine,
        caps,
        loops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::format_ident;
    use syn::parse_quote;

    fn run(b: syn::Block) -> (Analysis, Vec<String>) {
        let mut e = Errors::default();
        let a = analyse(&b, &format_ident!("cx"), false, &mut e);
        (a, e.messages())
    }

    #[test]
    fn straight_line_liveness_and_keys() {
        let (a, errs) = run(parse_quote!({
            let greeting = String::from("hi");
            let unused = 5;
            let login: Login = cx.ask("Who?").await?;
            let raw = fetch(&args.location).await?;
            let verdict = cx
                .sample(Sample::user(format!("Rate: {raw}")))
                .key("v")
                .await?
                .text()?;
            Ok(format!("{greeting} {} {verdict}", login.name))
        }));
        assert!(errs.is_empty(), "{errs:?}");
        let m = &a.machine;
        assert_eq!(m.points.len(), 2);
        assert_eq!(m.points[0].keys, ["login"]);
        assert_eq!(m.points[1].keys, ["v"]);
        let names = |i: usize| {
            m.stages[i]
                .vars
                .iter()
                .map(|v| v.ident.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(m.stages[1].name, "S0");
        assert_eq!(names(1), ["greeting"]);
        assert_eq!(names(2), ["greeting", "login"]);
        assert_eq!(a.caps.len(), 2);
        assert_eq!(m.points[0].elicit_types.len(), 1);
    }

    #[test]
    fn loops_and_branches() {
        let (a, errs) = run(parse_quote!({
            let mut total = 0;
            for i in 0..3 {
                let n: u32 = cx.ask(format!("n{i}")).await?;
                if n == 0 {
                    break;
                }
                total += n;
            }
            Ok(total)
        }));
        assert!(errs.is_empty(), "{errs:?}");
        assert!(a.loops);
        let s0 = a.machine.stages.iter().find(|s| s.name == "S0").unwrap();
        let v: Vec<_> = s0.vars.iter().map(|v| v.ident.to_string()).collect();
        assert_eq!(v, ["total", "__mcp_iter0"]);
    }

    #[test]
    fn rejections() {
        let (_, errs) = run(parse_quote!({
            let f = || cx.ask("x").await;
            while cx.ask::<bool>("again?").await? {}
            let s = format!("{}", cx.ask::<u32>("n").await?);
            let t = g(h(), cx.ask::<u32>("n").key("t").await?);
            cx.ask::<u32>("no key").await?;
            let (a, b) = cx
                .round((Ask::<u32>::new("a"), Ask::<u32>::new("b").key("a")))
                .await?;
            Ok(())
        }));
        assert_eq!(errs.len(), 6, "{errs:#?}");
    }
}
