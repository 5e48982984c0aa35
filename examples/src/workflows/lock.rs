//! A lock with owner tokens and fencing tokens, over `lua/lock_acquire.lua`,
//! `lua/lock_extend.lua` and `lua/release_lock.lua`.
//!
//! * **Acquire** is `SET key token NX PX ttl` plus an `INCR` of the lock's
//!   fencing counter, in one script so that every acquisition gets its own
//!   strictly increasing fencing token. (Without fencing, a plain
//!   `SET NX PX` command is the right tool.)
//! * **Release** and **extend** compare the stored token with the caller's
//!   first: only the owner releases or extends; a lock that expired and was
//!   taken by someone else is left alone.
//! * **Fencing**: pass [`Lock::fencing`] along with every write the lock
//!   protects, and have the protected resource refuse writes carrying a
//!   smaller token than one it already saw. That stops a holder whose lock
//!   expired while it was paused (GC, swap, network) from clobbering the
//!   next holder's work.
//!
//! The lock key must carry a `{hash tag}` (`lock:{invoice-42}`): its fencing
//! counter `<key>:fencing` must hash to the same Cluster slot. A key
//! without one fails with [`Error::CrossSlot`] before anything is sent.
//!
//! ```no_run
//! # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
//! use std::time::Duration;
//! use redis_script_examples::workflows::lock::Lock;
//!
//! if let Some(lock) = Lock::acquire(connection, "lock:{invoice-42}", Duration::from_secs(10)).await? {
//!     println!("holding it with fencing token {}", lock.fencing);
//!     lock.extend(connection, Duration::from_secs(10)).await?;
//!     lock.release(connection).await?;
//! }
//! # Ok(()) }
//! ```

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::{Error, ScriptReply, redis_script};

/// What `lua/lock_acquire.lua` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ScriptReply)]
pub enum Acquire {
    /// `{'ACQUIRED', fencing}`: the caller's token holds the lock.
    Acquired {
        /// The fencing token of this acquisition, greater than every one
        /// handed out before for this lock.
        fencing: u64,
    },
    /// `{'BUSY', ttl_ms}`: another token holds the lock.
    Busy {
        /// The holder's remaining time to live in milliseconds (-1: the
        /// lock key has no expiry).
        ttl_ms: i64,
    },
}

/// Takes `lock` for `token` for `ttl_ms` unless another token holds it,
/// and increments its fencing counter `fencing`. Prefer [`Lock::acquire`].
#[redis_script(path = "../lua/lock_acquire.lua", keys = 2, returns = Acquire)]
pub async fn lock_acquire(lock: &str, fencing: &str, token: &str, ttl_ms: u64) -> Acquire;

/// Sets `lock`'s time to live to `ttl_ms` if `token` holds it; `true` when
/// extended. Prefer [`Lock::extend`].
#[redis_script(path = "../lua/lock_extend.lua", keys = 1)]
pub async fn lock_extend(lock: &str, token: &str, ttl_ms: u64) -> bool;

/// Deletes `lock` if `token` holds it; `true` when deleted. Prefer
/// [`Lock::release`].
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
pub async fn lock_release(lock: &str, token: &str) -> bool;

/// The fencing counter key of a lock key: `<key>:fencing`.
pub fn fencing_key(key: &str) -> String {
    format!("{key}:fencing")
}

/// A lock's time to live in whole milliseconds, at least 1.
pub(crate) fn ttl_millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A held lock: the key, the owner token that holds it, and the fencing
/// token of this acquisition.
///
/// Holding a `Lock` value does not mean the lock is still held: it expires
/// after its TTL unless [`extended`](Lock::extend). Dropping it does not
/// release it (there is no async drop); call [`release`](Lock::release).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// The lock key, e.g. `lock:{invoice-42}`.
    pub key: String,
    /// The random owner token stored in the lock key.
    pub token: String,
    /// The fencing token of this acquisition (strictly increasing per key).
    pub fencing: u64,
}

impl Lock {
    /// Tries once to take the lock at `key` for `ttl` with a fresh random
    /// owner token. `None` when another owner holds it.
    pub async fn acquire<C>(
        connection: &mut C,
        key: &str,
        ttl: Duration,
    ) -> Result<Option<Lock>, Error>
    where
        C: ConnectionLike + Send,
    {
        Self::acquire_with_token(connection, key, &crate::owner_token(), ttl).await
    }

    /// Like [`acquire`](Self::acquire) with a given owner token. Calling it
    /// again with the same token while it holds the lock renews the TTL and
    /// returns the same fencing token, so it is safe to retry after a
    /// connection error.
    pub async fn acquire_with_token<C>(
        connection: &mut C,
        key: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Option<Lock>, Error>
    where
        C: ConnectionLike + Send,
    {
        match lock_acquire(connection, key, &fencing_key(key), token, ttl_millis(ttl)).await? {
            Acquire::Acquired { fencing } => Ok(Some(Lock {
                key: key.to_owned(),
                token: token.to_owned(),
                fencing,
            })),
            Acquire::Busy { .. } => Ok(None),
        }
    }

    /// Sets the lock's time to live to `ttl` from now, if this owner still
    /// holds it. `false` when it does not (it expired, maybe taken by
    /// another owner): stop working under it.
    pub async fn extend<C>(&self, connection: &mut C, ttl: Duration) -> Result<bool, Error>
    where
        C: ConnectionLike + Send,
    {
        lock_extend(connection, &self.key, &self.token, ttl_millis(ttl)).await
    }

    /// Releases the lock if this owner still holds it. `false` when it did
    /// not (it expired, maybe taken by another owner, which keeps it).
    pub async fn release<C>(&self, connection: &mut C) -> Result<bool, Error>
    where
        C: ConnectionLike + Send,
    {
        lock_release(connection, &self.key, &self.token).await
    }
}
