//! Typed, compile-time-checked Redis Lua scripts.
//!
//! Declare a script with [`macro@redis_script`] on a bodyless `async fn`
//! signature; the macro reads and checks the `.lua` file at compile time and
//! generates a typed function that runs it with `EVALSHA`, falling back to
//! `EVAL` on `NOSCRIPT`, after checking that all keys share one Redis
//! Cluster hash slot.
//!
//! ```ignore
//! use redis_script::redis_script;
//!
//! /// Deletes the lock only if `token` still owns it. Returns 1 if deleted.
//! #[redis_script(path = "lua/release_lock.lua", keys = 1)]
//! pub async fn release_lock(lock: &str, token: &str) -> i64;
//!
//! let released = release_lock(&mut conn, "lock:{order-7}", &token).await?;
//! ```
//!
//! The generated items for `release_lock` are:
//! - `async fn release_lock(conn: &mut C, lock: &str, token: &str) -> Result<i64, redis_script::Error>`
//!   for any async redis-rs connection `C` (`MultiplexedConnection`,
//!   `ConnectionManager`, the async cluster connection, pooled connections);
//! - `release_lock::SCRIPT`, the embedded [`Script`] (source, SHA1, flags);
//! - `release_lock::call(lock, token)`, a prepared [`Call`] to invoke later.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

mod batch;
mod call;
mod error;
mod preload;
mod reply;
mod script;
mod slot;

pub use batch::{Batch, Handle, Replies};
pub use call::Call;
pub use error::{Error, KeySlot};
pub use preload::preload;
#[cfg(feature = "cluster")]
pub use preload::preload_cluster;
pub use redis_script_macros::redis_script;
pub use script::Script;
pub use slot::{SLOT_COUNT, key_slot};

/// Items used by the code `#[redis_script]` generates. Not a public API:
/// it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::call::Keys;
    pub use redis;
}
