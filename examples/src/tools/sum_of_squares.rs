//! `sum_of_squares`, the SEP-2322 load-shedding scenario: a long computation that, after
//! each chunk of work, checkpoints — answers `input_required` with a `requestState` only (no
//! `inputRequests`) — so that the client retries at once and whichever replica takes the
//! retry (any server sharing the state key) continues where the previous one stopped.

use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most chunks (and so checkpoints + 1) one call may take.
pub const MAX_CHUNKS: u64 = 16;

/// Arguments of `sum_of_squares`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SumArgs {
    /// Sum the squares of 1..=n (at most 1 000 000).
    pub n: u64,
    /// Numbers per chunk; the server checkpoints after each chunk but the last.
    pub chunk: u64,
}

/// The result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SumOfSquares {
    /// The `n` asked for.
    pub n: u64,
    /// 1² + 2² + … + n².
    pub total: u64,
    /// How many times the computation checkpointed (and could move to another replica).
    pub checkpoints: u32,
}

/// Sum the squares of 1..=n in chunks, checkpointing between chunks (load shedding).
#[mcp_tool(max_rounds = 16, read_only)]
pub async fn sum_of_squares(
    cx: &mut ToolContext,
    args: SumArgs,
) -> Result<SumOfSquares, ToolError> {
    if args.n > 1_000_000 {
        return Err(ToolError::InvalidArguments {
            field: "n".into(),
            message: "at most 1000000".into(),
        });
    }
    if args.chunk == 0 || args.n.div_ceil(args.chunk) > MAX_CHUNKS {
        return Err(ToolError::InvalidArguments {
            field: "chunk".into(),
            message: format!("at least 1 and at least n/{MAX_CHUNKS}"),
        });
    }
    let mut total: u64 = 0;
    let mut next: u64 = 1;
    let mut checkpoints: u32 = 0;
    while next <= args.n {
        let end = args.n.min(next + args.chunk - 1);
        total += (next..=end).map(|i| i * i).sum::<u64>();
        next = end + 1;
        if next <= args.n {
            checkpoints += 1;
            cx.checkpoint().await?;
        }
    }
    Ok(SumOfSquares {
        n: args.n,
        total,
        checkpoints,
    })
}
