/// Deletes branches after confirmation, one by one.
#[mcp_tool(destructive, ttl = "5m")]
async fn prune(cx: &mut ToolContext, args: PruneArgs) -> Result<String, ToolError> {
    let mut deleted = Vec::new();
    for branch in args.branches {
        let confirm: Confirm = cx.ask(format!("Delete {branch}?")).await?;
        if !confirm.yes {
            continue;
        }
        deleted.push(branch);
    }
    if deleted.is_empty() {
        return Ok("nothing deleted".to_string());
    }
    Ok(deleted.join(", "))
}
