//! Idempotent requests over `lua/idempotency_claim.lua` and
//! `lua/idempotency_complete.lua`.
//!
//! Before running a side effect (charging a card, creating an order), a
//! handler [`claim`]s the request's idempotency key with a random claimant
//! token:
//!
//! * [`Claim::Claimed`]: run the side effect, then [`complete`] with the
//!   response;
//! * [`Claim::Replay`]: it already ran; answer with the stored response;
//! * [`Claim::Busy`]: another claimant is running it; answer "in progress"
//!   (HTTP 409) or ask again later.
//!
//! The claim is a lease: a claimant that crashes before completing lets the
//! record expire after `lease`, and a later duplicate may run the side
//! effect. Choose a lease longer than the side effect can take.
//!
//! ```no_run
//! # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use redis_script_examples::workflows::idempotency::{self, Claim};
//!
//! let key = "idem:{order-7f3a}";
//! let claimant = redis_script_examples::owner_token();
//! match idempotency::claim(connection, key, &claimant, Duration::from_secs(30)).await? {
//!     Claim::Claimed => {
//!         // ... run the side effect ...
//!         idempotency::complete(connection, key, &claimant, 201, b"order 7f3a", Duration::from_secs(86_400)).await?;
//!     }
//!     Claim::Replay { status, body } => println!("already done: {status} {body:?}"),
//!     Claim::Busy { retry_ms } => println!("in progress, ask again in {retry_ms} ms"),
//! }
//! # Ok(()) }
//! ```

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::{Error, Failure, ScriptError, ScriptReply, redis_script};

use super::lock::ttl_millis;

/// What `lua/idempotency_claim.lua` answers.
#[derive(Debug, Clone, PartialEq, Eq, ScriptReply)]
pub enum Claim {
    /// `'CLAIMED'`: the caller runs the side effect and then completes.
    Claimed,
    /// `{'REPLAY', status, body}`: the request was completed; here is its
    /// stored response.
    Replay {
        /// The stored status.
        status: u16,
        /// The stored body.
        body: Vec<u8>,
    },
    /// `{'BUSY', ttl_ms}`: another claimant is running the request.
    Busy {
        /// The remaining lease of that claimant in milliseconds: by then it
        /// completed, or its claim expired.
        retry_ms: i64,
    },
}

/// Why `lua/idempotency_complete.lua` refused to store a response.
#[derive(Debug, Clone, PartialEq, Eq, ScriptError)]
pub enum CompleteError {
    /// `NOT_CLAIMED`: no record: the claim's lease ran out (a duplicate may
    /// now run the side effect too) or it never existed.
    NotClaimed {
        /// Redis's explanation.
        message: String,
    },
    /// `NOT_OWNER`: another claimant holds or completed the record (this
    /// claim expired and was taken over).
    NotOwner {
        /// Redis's explanation.
        message: String,
    },
}

/// Claims `record` for `claimant` for `lease_ms`. Prefer [`claim`].
#[redis_script(path = "../lua/idempotency_claim.lua", keys = 1, returns = Claim)]
pub async fn idempotency_claim(record: &str, claimant: &str, lease_ms: u64) -> Claim;

/// Stores the response of `claimant`'s request. Prefer [`complete`].
#[redis_script(
    path = "../lua/idempotency_complete.lua",
    keys = 1,
    errors = CompleteError
)]
pub async fn idempotency_complete(
    record: &str,
    claimant: &str,
    status: u16,
    body: &[u8],
    keep_ms: u64,
) -> ();

/// Claims the idempotency key `key` for `claimant` (a random token unique
/// to this attempt) for `lease`. Safe to retry with the same claimant.
pub async fn claim<C>(
    connection: &mut C,
    key: &str,
    claimant: &str,
    lease: Duration,
) -> Result<Claim, Error>
where
    C: ConnectionLike + Send,
{
    idempotency_claim(connection, key, claimant, ttl_millis(lease)).await
}

/// Stores the response of the request `claimant` claimed at `key`, replayed
/// to duplicates for `keep`. Only the claimant completes, and only while
/// its claim is live; safe to retry with the same claimant.
pub async fn complete<C>(
    connection: &mut C,
    key: &str,
    claimant: &str,
    status: u16,
    body: &[u8],
    keep: Duration,
) -> Result<(), Failure<CompleteError>>
where
    C: ConnectionLike + Send,
{
    idempotency_complete(connection, key, claimant, status, body, ttl_millis(keep)).await
}
