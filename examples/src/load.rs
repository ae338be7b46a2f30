//! What the load tools (`soak`, `loadgen`) share: the mix of multi-round calls of the
//! example tools they drive, and the check of how a call ended.

use mcp_tool_client::{CallOutcome, DriverError};
use serde_json::{Value, json};

/// One flow: a tool, its arguments, and the number of requests a successful call takes.
#[derive(Debug, Clone)]
pub struct Flow {
    /// The tool called.
    pub tool: &'static str,
    /// Its arguments.
    pub args: Value,
    /// Requests of a complete call (first call + retries with answers).
    pub rounds: u32,
}

/// The mixed flows of the example server (`serve`): sampling, elicitation, two questions in
/// one round, load-shedding checkpoints, roots, a loop of confirmations.
pub fn example_flows() -> Vec<Flow> {
    vec![
        Flow {
            tool: "summarize_repo",
            args: json!({"audience": "developer"}),
            rounds: 3,
        },
        Flow {
            tool: "summarize_repo",
            args: json!({"audience": "ops", "critique": true}),
            rounds: 4,
        },
        Flow {
            tool: "get_weather",
            args: json!({"location": "Oslo"}),
            rounds: 2,
        },
        Flow {
            tool: "link_accounts",
            args: json!({}),
            rounds: 3,
        },
        Flow {
            tool: "sum_of_squares",
            args: json!({"n": 400, "chunk": 100}),
            rounds: 4,
        },
        Flow {
            tool: "list_roots",
            args: json!({}),
            rounds: 2,
        },
        Flow {
            tool: "prune_branches",
            args: json!({"branches": ["old-1", "old-2", "old-3"]}),
            rounds: 4,
        },
    ]
}

/// `Ok(rounds)` when `outcome` is the successful end of `flow` (no `isError`, the expected
/// number of requests); otherwise a one-line description of what happened instead.
pub fn check_outcome(
    flow: &Flow,
    outcome: Result<CallOutcome, DriverError>,
) -> Result<u32, String> {
    match outcome {
        Ok(out) if !out.is_error() && out.rounds == flow.rounds => Ok(out.rounds),
        Ok(out) => Err(format!(
            "{}: unexpected outcome ({} rounds, error {}): {}",
            flow.tool,
            out.rounds,
            out.is_error(),
            out.text()
        )),
        Err(e) => Err(format!("{}: {e}", flow.tool)),
    }
}

/// Whether `url` is a loopback `http://` URL (the load tools refuse anything else).
pub fn is_loopback_url(url: &str) -> bool {
    let host = url
        .strip_prefix("http://")
        .and_then(|r| r.split(['/', ':']).next())
        .unwrap_or("");
    host == "127.0.0.1" || host == "localhost" || host == "["
}

/// The `q`-quantile (0..=1) of sorted `values` (nearest rank); 0 when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.99), 99.0);
        assert_eq!(quantile(&v, 1.0), 100.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(quantile(&[3.0], 0.99), 3.0);
    }

    #[test]
    fn only_loopback_urls() {
        assert!(is_loopback_url("http://127.0.0.1:8080/mcp"));
        assert!(is_loopback_url("http://localhost/mcp"));
        assert!(!is_loopback_url("http://10.0.0.1:8080/mcp"));
        assert!(!is_loopback_url("https://127.0.0.1/mcp"));
    }
}
