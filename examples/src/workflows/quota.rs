//! The fixed-window limiter as a Redis function library
//! (`lua/quota_lib.lua`): deployed once, called by name with `FCALL`,
//! answering the same tagged [`Decision`] as the script version.
//!
//! ```no_run
//! # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
//! use redis_script::OnConflict;
//! use redis_script_examples::workflows::quota::quota_lib;
//! use redis_script_examples::workflows::rate_limit::Decision;
//!
//! quota_lib::LIBRARY.deploy(connection, OnConflict::Refuse).await?;
//! match quota_lib::fixed_window_allow(connection, "quota:{tenant-7}:api", 100, 60_000).await? {
//!     Decision::Allowed { remaining, .. } => println!("admitted, {remaining} left"),
//!     Decision::Denied { retry_after_ms, .. } => println!("429, retry in {retry_after_ms} ms"),
//! }
//! # Ok(())
//! # }
//! ```

use redis_script::redis_library;

pub use super::rate_limit::Decision;

/// The typed functions of `lua/quota_lib.lua`.
#[redis_library(path = "../lua/quota_lib.lua")]
pub mod quota_lib {
    /// Admits at most `limit` requests per `window_ms`, counted in `counter`
    /// (INCR, with PEXPIRE on the window's first admission).
    #[function(keys = 1)]
    pub async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> Decision;

    /// The admissions of the current window, without counting one (`None`
    /// before the first).
    #[function(keys = 1)]
    pub async fn quota_peek(counter: &str) -> Option<u64>;
}
