/// Asks to confirm `what`.
#[mcp_flow]
async fn confirm(cx: &mut ToolContext, what: String) -> Result<bool, ToolError> {
    let answer: YesNo = cx.ask(format!("{what}?")).await?;
    Ok(answer.ok)
}

/// Deletes after a confirmation.
#[mcp_tool]
async fn delete(cx: &mut ToolContext, args: Items, store: State<Store>) -> Result<String, ToolError> {
    let sure = confirm(cx, format!("Delete {}", args.name)).await?;
    if sure {
        store.delete(&args.name);
    }
    Ok(format!("{sure}"))
}
