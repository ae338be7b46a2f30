//! Analysis of a tool or flow body, from its syntax to the [`Analysis`] the expansion reads:
//! the position check ([`positions`]), the lowering into stages ([`lower`], which yields the
//! [`model`]), the `journal` checks ([`journal`]) and the capability set. Every refusal is
//! in [`refusal`]; [`susp`] recognises suspension points, [`vars`], [`assign`] and [`args`]
//! answer what the lowering asks about names.
//!
//! What it yields is data about the body (stages, the variables each carries, points, keys,
//! capabilities), except for the code of each stage, which stays tokens: the author's
//! statements rewritten, with the plumbing spliced in where they suspend, jump or return (see
//! [`model::Stage::code`]). The runtime's path and the shape of that plumbing come from
//! [`crate::rt`]; nothing here spells the runtime's path.

pub mod anf;
pub mod args;
pub mod assign;
pub mod journal;
pub mod lower;
pub mod model;
pub mod positions;
pub mod refusal;
pub mod susp;
pub mod vars;

use std::collections::BTreeSet;

use crate::errors::Errors;
pub use lower::{Inputs, Machine, StageKind};
pub use susp::Cap;

/// Separates a flow's call site from the flow's own keys (`login/github_login`); the
/// runtime's `context::SITE_SEPARATOR`.
pub const KEY_SEPARATOR: char = '/';

/// Everything the expansion needs from the body.
pub struct Analysis {
    /// Stages and points.
    pub machine: Machine,
    /// Capabilities any request may need.
    pub caps: BTreeSet<Cap>,
    /// True when a suspension point sits inside a loop.
    pub loops: bool,
}

/// Analyses `body` (the tool or flow function's block).
pub fn analyse(
    body: &syn::Block,
    inputs: &Inputs<'_>,
    journal: bool,
    errors: &mut Errors,
) -> Analysis {
    let cx = inputs.cx;
    positions::check(body, cx, errors);
    let mut bound = inputs.args.clone();
    bound.extend(inputs.params.iter().map(|b| b.ident.to_string()));
    let (body, origins) = anf::normalize(body, cx, &bound, errors);
    let machine = lower::lower(&body, inputs, &origins, errors);
    check_ordinal_keys(&machine.points, errors);
    if journal {
        journal::check(&machine.points, errors);
    }
    let caps: BTreeSet<Cap> = machine
        .points
        .iter()
        .flat_map(|p| p.susp.parts.iter().map(|part| part.cap))
        .collect();
    let loops = machine.points.iter().any(|p| p.in_loop);
    Analysis {
        machine,
        caps,
        loops,
    }
}

/// Refuses a key written or taken from a binding that equals a key derived from a method and
/// its ordinal (`ask_2`): one of the two requests would get the other's answer.
fn check_ordinal_keys(points: &[model::Point], errors: &mut Errors) {
    for p in points.iter().filter(|p| p.ordinal) {
        let key = &p.keys[0];
        for q in points.iter().filter(|q| !q.ordinal) {
            for (part, k) in q.susp.parts.iter().zip(&q.keys) {
                if k == key {
                    errors.refuse(&part.tokens, refusal::Refusal::OrdinalKeyTaken { key });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::format_ident;
    use syn::parse_quote;

    fn run(b: syn::Block) -> (Analysis, Vec<String>) {
        let mut e = Errors::default();
        let cx = format_ident!("cx");
        let inputs = Inputs {
            cx: &cx,
            args: ["args".to_string()].into_iter().collect(),
            params: Vec::new(),
            err: quote::quote!(ToolError),
        };
        let a = analyse(&b, &inputs, false, &mut e);
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
        // a `while` condition, an effect before a suspension and a point without a name
        // are lowered; a closure, a macro's arguments and a repeated key in a round are not
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(errs[0].contains("inside a closure"), "{errs:#?}");
        assert!(errs[1].contains("inside `format!(…)`"), "{errs:#?}");
        assert!(errs[2].contains("two requests of one round"), "{errs:#?}");
    }

    #[test]
    fn nested_points_get_temporaries_and_ordinal_keys() {
        let (a, errs) = run(parse_quote!({
            let log = make_log();
            let n = combine(
                log.next(),
                cx.ask::<u32>("a").await? + cx.ask::<u32>("b").await?,
            );
            while cx.ask::<bool>("again?").await? && n > 0 {}
            if cx.sample(Sample::user("s")).await?.text()? == "y" {
                return Ok(n);
            }
            let ask_9 = cx.ask::<u32>("c").await?;
            Ok(ask_9)
        }));
        assert!(errs.is_empty(), "{errs:#?}");
        let keys: Vec<_> = a.machine.points.iter().map(|p| p.keys[0].clone()).collect();
        assert_eq!(keys, ["ask_1", "n", "ask_3", "sample_1", "ask_9"]);
        // the first answer and the hoisted `log.next()` travel across the second request
        let s1 = a.machine.stages.iter().find(|s| s.name == "S1").unwrap();
        let v: Vec<_> = s1.vars.iter().map(|v| v.ident.to_string()).collect();
        assert_eq!(v, ["__mcp_e0", "__mcp_e1"]);
    }

    #[test]
    fn an_ordinal_key_cannot_be_taken() {
        let (_, errs) = run(parse_quote!({
            let ask_2 = cx.ask::<u32>("a").await?;
            Ok(ask_2 + cx.ask::<u32>("b").await?)
        }));
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert!(errs[0].contains("\"ask_2\" is also the key"), "{errs:#?}");
    }
}
