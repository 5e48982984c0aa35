//! Rate limiters: a fixed window (`lua/rate_limit_fixed.lua`) and a sliding
//! window (`lua/rate_limit_sliding.lua`), both answering a tagged
//! [`Decision`].
//!
//! ```no_run
//! # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
//! use redis_script_examples::workflows::rate_limit::{Decision, rate_limit_fixed};
//!
//! match rate_limit_fixed(connection, "rl:{tenant-7}:api", 100, 60_000).await? {
//!     Decision::Allowed { count, remaining } => println!("request {count}, {remaining} left"),
//!     Decision::Denied { retry_after_ms, .. } => println!("429, retry in {retry_after_ms} ms"),
//! }
//! # Ok(())
//! # }
//! ```

use redis_script::{ScriptReply, redis_script};

/// A rate limiter's answer to one request.
///
/// Decoded from `{'ALLOWED', count, remaining}` or
/// `{'DENIED', count, retry_after_ms}`; the build checks that every tagged
/// `return` of the scripts matches a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ScriptReply)]
pub enum Decision {
    /// The request is admitted.
    Allowed {
        /// Admissions in the current window, this one included.
        count: u64,
        /// Admissions still available in the current window.
        remaining: u64,
    },
    /// The request is refused: the window is full.
    Denied {
        /// Admissions in the current window (the limit).
        count: u64,
        /// How long until a request can be admitted again.
        retry_after_ms: u64,
    },
}

impl Decision {
    /// Whether the request was admitted.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Self::Allowed { .. })
    }
}

/// Fixed window: admits at most `limit` requests per `window_ms`, counted
/// in `counter` (INCR, with PEXPIRE on the window's first admission).
#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
pub async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;

/// Sliding window: admits at most `limit` requests in any `window_ms`,
/// logging admissions in the sorted set `log` under `request_id` (unique
/// per request: see [`request_id`]; reuse it only to retry the same request).
#[redis_script(path = "../lua/rate_limit_sliding.lua", keys = 1)]
pub async fn rate_limit_sliding(
    log: &str,
    limit: u64,
    window_ms: u64,
    request_id: &str,
) -> Decision;

/// A fresh random request id for [`rate_limit_sliding()`] (128 random bits).
pub fn request_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}
