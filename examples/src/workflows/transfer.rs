//! Transfers between two balances that run exactly once per payment:
//! `lua/transfer.lua` is not idempotent (sent twice, it moves the amount
//! twice), so it is declared `exactly_once`. Each call carries an id; a
//! call sent again with the same id (the runtime's own retries after a
//! timeout, a client that re-sends, or a second request with the same
//! payment id) gets the first transfer's reply and moves nothing.

use redis::aio::ConnectionLike;
use redis_script::{CallId, Failure, ScriptError, redis_script};

/// Why a transfer was refused; it moved nothing.
#[derive(Debug, Clone, PartialEq, Eq, ScriptError)]
pub enum TransferError {
    /// `INSUFFICIENT <balance>`: the source holds less than the amount.
    Insufficient(i64),
    /// `BADAMOUNT …`: the amount is not a positive integer.
    #[error_code("BADAMOUNT")]
    BadAmount {
        /// The script's explanation.
        message: String,
    },
}

/// Moves `amount` from `source` to `destination` atomically; the new
/// balances. Both keys must share a `{hash tag}`.
#[redis_script(
    path = "../lua/transfer.lua",
    keys = 2,
    errors = TransferError,
    exactly_once(ttl_secs = 86_400)
)]
pub async fn transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// The balance key of `account` in `ledger`: accounts of one ledger share
/// its hash tag, so any two can be used in one transfer.
pub fn balance_key(ledger: &str, account: &str) -> String {
    format!("balance:{{{ledger}}}:{account}")
}

/// Transfers once per `payment_id`: a retried request with the same
/// payment id (within a day, the record's TTL) gets the same balances back
/// and moves nothing.
pub async fn pay<C: ConnectionLike + ?Sized>(
    connection: &mut C,
    payment_id: &str,
    source: &str,
    destination: &str,
    amount: i64,
) -> Result<(i64, i64), Failure<TransferError>> {
    transfer::call_with_id(CallId::new(payment_id), source, destination, amount)
        .invoke(connection)
        .await
}
