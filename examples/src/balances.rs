//! Each owner's balance in the notes database (`balances` table, schema version 3): what
//! `donate` adds to and `balance` reads ([`crate::tools::donate`]).

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::notes::{Notes, NotesError, Owner};

/// The largest balance an owner may reach (far below `i64::MAX`, so sums never overflow).
pub const MAX_BALANCE: i64 = 1_000_000_000_000;

/// What [`Notes::donate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Donation {
    /// Added: the new balance.
    Added(i64),
    /// Refused: the balance would pass [`MAX_BALANCE`] (the current balance).
    OverLimit(i64),
}

impl Notes {
    /// Adds `amount` (positive; the caller checks) to `owner`'s balance, in one
    /// transaction.
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn donate(&self, owner: &Owner, amount: i64) -> Result<Donation, NotesError> {
        let owner = owner.as_str().to_owned();
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current: i64 = tx
                .query_row(
                    "SELECT balance FROM balances WHERE owner = ?1",
                    params![owner],
                    |row| row.get(0),
                )
                .optional()?
                .unwrap_or(0);
            let Some(next) = current.checked_add(amount).filter(|n| *n <= MAX_BALANCE) else {
                return Ok(Donation::OverLimit(current));
            };
            tx.execute(
                "INSERT INTO balances (owner, balance) VALUES (?1, ?2) \
                 ON CONFLICT(owner) DO UPDATE SET balance = ?2",
                params![owner, next],
            )?;
            tx.commit()?;
            Ok(Donation::Added(next))
        })
        .await
    }

    /// `owner`'s balance (0 before any donation).
    ///
    /// # Errors
    /// When SQLite fails.
    pub async fn balance(&self, owner: &Owner) -> Result<i64, NotesError> {
        let owner = owner.as_str().to_owned();
        self.run(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT balance FROM balances WHERE owner = ?1",
                    params![owner],
                    |row| row.get(0),
                )
                .optional()?
                .unwrap_or(0))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tool_runtime::Principal;

    #[tokio::test]
    async fn donations_add_up_per_owner() {
        let notes = Notes::temporary().expect("notes");
        let alice = Owner::of(&Principal::named("alice"));
        let bob = Owner::of(&Principal::named("bob"));
        assert_eq!(notes.balance(&alice).await.expect("balance"), 0);
        assert_eq!(
            notes.donate(&alice, 5).await.expect("donate"),
            Donation::Added(5)
        );
        assert_eq!(
            notes.donate(&alice, 7).await.expect("donate"),
            Donation::Added(12)
        );
        assert_eq!(
            notes.donate(&alice, MAX_BALANCE).await.expect("donate"),
            Donation::OverLimit(12)
        );
        assert_eq!(notes.balance(&alice).await.expect("balance"), 12);
        assert_eq!(notes.balance(&bob).await.expect("balance"), 0);
    }
}
