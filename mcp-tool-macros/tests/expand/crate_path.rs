/// Asks for a name, through a framework that re-exports the runtime as `my_framework::mcp`.
#[mcp_flow(crate = "::my_framework::mcp")]
async fn ask_name(cx: &mut ToolContext) -> Result<String, ToolError> {
    let who: Who = cx.ask("Your name?").await?;
    Ok(who.name)
}

/// Greets, with application state, through the same re-export.
#[mcp_tool(crate = "::my_framework::mcp", max_rounds = 2)]
async fn greet(cx: &mut ToolContext, args: Greeting, names: State<Names>) -> Result<String, ToolError> {
    let name = ask_name(cx).await?;
    names.remember(&name);
    Ok(format!("{}, {name}!", args.greeting))
}
