//! Unit tests of the A-normal form.

use super::*;
use quote::{ToTokens, format_ident};
use syn::parse_quote;

fn normal(b: Block) -> (String, Vec<String>) {
    let mut e = Errors::default();
    let cx = format_ident!("cx");
    let (out, _) = normalize(&b, &cx, &Names::new(), &mut e);
    let text = out
        .stmts
        .iter()
        .map(|s| s.to_token_stream().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (text, e.messages())
}

/// A body the lowering splits as it is comes out unchanged, token for token: tools
/// without nested suspension points expand as before.
#[test]
fn accepted_bodies_are_unchanged() {
    let b: Block = parse_quote!({
        let login: Login = cx.ask("who?").await?;
        let raw = fetch(&args.location).await?;
        let verdict = cx
            .sample(Sample::user(format!("{raw}")))
            .key("v")
            .await?
            .text()?;
        let mut total = 0;
        for i in 0..3 {
            let n: u32 = cx.ask(format!("n{i}")).await?;
            if n == 0 {
                break;
            }
            total += n;
        }
        let x = match args.k {
            1 => cx.ask::<u32>("a").await?,
            _ => 0,
        };
        total = x + cx.ask::<u32>("t").await?;
        Ok(format!("{} {verdict} {total}", login.name))
    });
    let before = b
        .stmts
        .iter()
        .map(|s| s.to_token_stream().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let (after, errs) = normal(b);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(after, before);
}

#[test]
fn operands_before_the_last_point_are_bound_in_order() {
    let (text, errs) = normal(parse_quote!({
        Ok(combine(
            log(),
            cx.ask::<A>("a").await?.n,
            x,
            cx.ask::<B>("b").await?.n,
        ))
    }));
    assert!(errs.is_empty(), "{errs:?}");
    let want = [
        "let __mcp_e0 = log () ;",
        "let __mcp_e1 = cx . ask :: < A > (\"a\") . await ? . n ;",
        "Ok (combine (__mcp_e0 , __mcp_e1 , x , cx . ask :: < B > (\"b\") . await ? . n ,))",
    ];
    assert_eq!(text, want.join("\n"));
}

#[test]
fn lazy_operators_and_heads() {
    let (text, errs) = normal(parse_quote!({
        while ready && cx.ask::<YesNo>("more?").await?.ok {
            n += 1;
        }
    }));
    assert!(errs.is_empty(), "{errs:?}");
    // the condition tested first in a `loop`, its right side asked only when `ready`
    assert!(
        text.starts_with("loop { let __mcp_e0 = if ready {"),
        "{text}"
    );
    assert!(text.contains("if ! (__mcp_e0) { break ; }"), "{text}");
    assert!(text.contains("else { false }"), "{text}");
}

#[test]
fn a_moved_operand_changed_later_is_bound_first() {
    let (text, _) = normal(parse_quote!({
        let s = f(x, {
            x += 1;
            cx.ask::<u32>("n").await?
        });
    }));
    assert!(text.starts_with("let __mcp_e0 = x ;"), "{text}");
    let (text, _) = normal(parse_quote!({
        let s = f(&x, y, cx.ask::<u32>("n").await?);
    }));
    assert_eq!(
        text,
        "let s = f (& x , y , cx . ask :: < u32 > (\"n\") . await ?) ;"
    );
}
