/// Iterating a kept local by reference with a suspension inside the loop (issue 19, item 7):
/// the loop keeps its position and `kids`, and binds `(i, k)` again after the suspension.
#[mcp_tool]
async fn kept_loop(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let who: NameForm = cx.ask("which?").await?;
    let kids: Vec<String> = who.name.split(',').map(str::to_owned).collect();
    let mut out = Vec::new();
    for (i, k) in kids.iter().enumerate() {
        let num: Num = cx.ask(format!("how many for {k}?")).key(format!("n_{i}")).await?;
        out.push(format!("{k}={}", num.n + args.k));
    }
    Ok(out.join(","))
}
