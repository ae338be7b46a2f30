#[mcp_tool(journal)]
async fn plan(cx: &mut ToolContext) -> Result<CallToolResult, ToolError> {
    let (city, dirs) = cx.round((Ask::<City>::new("Which city?"), Roots::new())).await?;
    cx.checkpoint().await?;
    let label = match cx.elicit::<Label>("Label?").key("label").await? {
        Elicitation::Accept(l) => l.text,
        _ => city.name.clone(),
    };
    Ok(CallToolResult::text(format!("{label}: {} roots", dirs.len())))
}
