//! `prune_branches`: a loop of confirmations — one form elicitation per branch, inside a
//! `for` loop, each in its own round. The decisions taken so far live in the sealed state.
//! Nothing is really deleted: this is a demonstration of control flow around suspension
//! points.

use mcp_tool_runtime::{ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most branches per call (one round each).
pub const MAX_BRANCHES: usize = 5;

/// Arguments of `prune_branches`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PruneArgs {
    /// Branch names to consider (at most 5).
    pub branches: Vec<String>,
}

/// The `confirm` form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Confirm {
    /// Delete this branch?
    pub delete: bool,
}

/// What was decided.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct PruneReport {
    /// Branches the user agreed to delete.
    pub deleted: Vec<String>,
    /// Branches the user kept.
    pub kept: Vec<String>,
}

/// Ask, branch by branch, whether to delete it (a dry run: nothing is deleted).
#[mcp_tool(max_rounds = 5)]
pub async fn prune_branches(
    cx: &mut ToolContext,
    args: PruneArgs,
) -> Result<PruneReport, ToolError> {
    if args.branches.is_empty()
        || args.branches.len() > MAX_BRANCHES
        || args
            .branches
            .iter()
            .any(|b| b.is_empty() || b.len() > 100 || b.chars().any(char::is_control))
    {
        return Err(ToolError::InvalidArguments {
            field: "branches".into(),
            message: format!("1 to {MAX_BRANCHES} names of 1 to 100 printable characters"),
        });
    }
    let mut deleted = Vec::new();
    let mut kept = Vec::new();
    for branch in args.branches {
        let confirm = cx
            .ask::<Confirm>(format!("Delete branch `{branch}`?"))
            .await?;
        if confirm.delete {
            deleted.push(branch);
        } else {
            kept.push(branch);
        }
    }
    Ok(PruneReport { deleted, kept })
}
