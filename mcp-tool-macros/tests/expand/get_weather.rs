/// Weather for a location, after a GitHub login.
#[mcp_tool(max_rounds = 3)]
async fn get_weather(cx: &mut ToolContext, args: WeatherArgs) -> Result<Forecast, ToolError> {
    let github_login: GitHubLogin = cx.ask("Please provide your GitHub username").await?;
    let raw = fetch_forecast(&args.location).await?;
    let verdict = cx.sample(Sample::user(format!("Rate: {raw}")).max_tokens(100)).key("verdict").await?.text()?;
    Ok(Forecast { user: github_login.name, verdict })
}
