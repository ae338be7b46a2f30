//! `slow_job`: a long-running tool that runs as a task (the Tasks extension, SEP-2663) when
//! the client declares the extension. `serve` registers it next to the other examples, so
//! that a task can be started, polled with `tasks/get`, and found again after a restart
//! of the server (with a durable `--store`).

use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `slow_job`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SlowJobArgs {
    /// How long to work, in seconds (0 to 600).
    pub seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    pub label: Option<String>,
}

/// Works for `seconds` seconds, then answers `Finished {label} after {seconds}s`. A task
/// when the client declares the tasks extension (poll it with `tasks/get`, stop it with
/// `tasks/cancel`); a plain call otherwise.
#[mcp_tool(read_only, task = "optional")]
pub async fn slow_job(_cx: &mut ToolContext, args: SlowJobArgs) -> Result<String, ToolError> {
    if !args.seconds.is_finite() || !(0.0..=600.0).contains(&args.seconds) {
        return Err(ToolError::InvalidArguments {
            field: "seconds".into(),
            message: "between 0 and 600".into(),
        });
    }
    tokio::time::sleep(std::time::Duration::from_secs_f64(args.seconds)).await;
    Ok(format!(
        "Finished {} after {}s",
        args.label.as_deref().unwrap_or("job"),
        args.seconds
    ))
}
