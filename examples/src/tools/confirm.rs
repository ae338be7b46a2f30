//! `confirm`: a yes/no question as a sub-flow (`#[mcp_flow]`), shared by the tools that
//! change notes (`delete_notes` asks it once per note inside a loop, `edit_note` once).
//!
//! Called as `let ok = confirm(cx, question).await?;` its one request is sent under the key
//! `<site>/answer`, where the site is the binding's name (`ok/answer`) or the name given on
//! the call: `confirm(cx, q).key(format!("delete_{id}"))` asks `delete_7/answer`.

use mcp_tool_runtime::{Elicitation, ToolContext, ToolError, mcp_flow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The form of a confirmation: one boolean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Confirmation {
    /// Go ahead?
    pub confirm: bool,
}

/// Asks `question` (a form with one boolean). Yes only when the user accepts the form with
/// `confirm: true`; "no", a decline and a cancel are all no: the caller leaves things as they
/// are.
#[mcp_flow]
pub async fn confirm(cx: &mut ToolContext, question: String) -> Result<bool, ToolError> {
    let answer = cx.elicit::<Confirmation>(question).await?;
    Ok(matches!(
        answer,
        Elicitation::Accept(Confirmation { confirm: true })
    ))
}
