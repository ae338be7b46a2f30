/// The answer type taken from a struct pattern (issue 19, item 7), its binding kept.
#[mcp_tool]
async fn greet(cx: &mut ToolContext, args: Args) -> Result<String, ToolError> {
    let NameForm { name } = cx.ask("who?").key("who").await?;
    let Num { n } = cx.ask(format!("how many, {name}?")).await?;
    Ok(format!("{name} x{}", n + args.k))
}
