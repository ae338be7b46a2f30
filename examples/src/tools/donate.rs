//! `donate` and `balance`: a single-use tool (`#[mcp_tool(once)]`) and its read-only
//! witness.
//!
//! `donate { amount }` asks for a confirmation (a form with one boolean, the shared
//! [`confirm`] flow), then adds `amount` to the caller's balance in the notes database. The
//! effect is in the **second** round, the one that presents the state of the first: that
//! state carries a single-use id, the server claims it in its ledger before the round runs,
//! and a replay of that round (a client that lost the response and sends it again, or an
//! attacker who copied it) gets the stored response, byte for byte, instead of a second
//! donation. Without `once`, every replay within the state's TTL would donate again.
//!
//! `balance {}` returns the caller's total as `{ "balance": N }`.

use mcp_tool_runtime::{State, ToolContext, ToolError, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::confirm::confirm;
use crate::balances::Donation;
use crate::notes::{Notes, Owner};

/// The largest single donation.
pub const MAX_AMOUNT: i64 = 1_000_000;

/// Arguments of `donate`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DonateArgs {
    /// How much to donate: 1 to 1000000.
    pub amount: i64,
}

/// Arguments of `balance` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct BalanceArgs {}

/// What `donate` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DonateReport {
    /// Whether the amount was added (no: the user said no, declined or cancelled).
    pub donated: bool,
    /// The caller's balance afterwards.
    pub balance: i64,
}

/// The caller's balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Balance {
    /// The total of the caller's donations.
    pub balance: i64,
}

/// Donate an amount to your balance, after a confirmation. Single use: replaying the
/// confirmed round returns the same answer and never donates twice.
#[mcp_tool(once, max_rounds = 1)]
pub async fn donate(
    cx: &mut ToolContext,
    args: DonateArgs,
    notes: State<Notes>,
) -> Result<DonateReport, ToolError> {
    if !(1..=MAX_AMOUNT).contains(&args.amount) {
        return Err(ToolError::InvalidArguments {
            field: "amount".into(),
            message: format!("must be between 1 and {MAX_AMOUNT}"),
        });
    }
    let amount = args.amount;
    let question = format!("Donate {amount} to your balance?");
    let yes = confirm(cx, question).await?;
    let owner = Owner::of(cx.principal());
    if !yes {
        let balance = notes.balance(&owner).await?;
        return Ok(DonateReport {
            donated: false,
            balance,
        });
    }
    match notes.donate(&owner, amount).await? {
        Donation::Added(balance) => {
            tracing::info!(amount, "donated");
            Ok(DonateReport {
                donated: true,
                balance,
            })
        }
        Donation::OverLimit(_) => Err(ToolError::InvalidArguments {
            field: "amount".into(),
            message: "the balance would exceed its limit".into(),
        }),
    }
}

/// Your balance: the total of your donations.
#[mcp_tool(max_rounds = 1, read_only)]
pub async fn balance(
    cx: &mut ToolContext,
    _args: BalanceArgs,
    notes: State<Notes>,
) -> Result<Balance, ToolError> {
    let balance = notes.balance(&Owner::of(cx.principal())).await?;
    Ok(Balance { balance })
}
