//! Opt-in retries of calls the server refused before running them.

use std::time::Duration;

/// Sends a call again, with back-off, when the server refused it before
/// running the script with a refusal that passes: `LOADING` (a restarting
/// server reading its data), `BUSY` (another script running too long),
/// `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`, `MOVED`, `ASK`, `READONLY` (a
/// cluster moving slots or failing over), `NOREPLICAS`.
///
/// A refused call did not run ([`Error::Refused`](crate::Error::Refused)),
/// so sending it again is safe for scripts that write too. Other errors are
/// never retried by this policy.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// use std::time::Duration;
/// use redis_script::{RetryRefusals, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let released = release_lock::call("lock:{a}", "token-1")
///     .retry_refusals(RetryRefusals::new(5).with_delays(Duration::from_millis(20), Duration::from_secs(1)))
///     .invoke(connection)
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryRefusals {
    attempts: u32,
    first_delay: Duration,
    max_delay: Duration,
}

impl RetryRefusals {
    /// At most `retries` more sends after the first, waiting 10 ms before
    /// the first retry and doubling the wait up to 500 ms.
    pub const fn new(retries: u32) -> Self {
        Self {
            attempts: retries,
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(500),
        }
    }

    /// Waits `first` before the first retry, doubling up to `max`.
    pub const fn with_delays(mut self, first: Duration, max: Duration) -> Self {
        self.first_delay = first;
        self.max_delay = max;
        self
    }

    /// How many retries at most.
    pub const fn retries(&self) -> u32 {
        self.attempts
    }

    /// The wait before retry number `retry` (0-based).
    pub(crate) fn delay(&self, retry: u32) -> Duration {
        backoff(self.first_delay, self.max_delay, retry)
    }
}

/// The wait before retry number `retry` (0-based): `first`, doubling up to
/// `max`.
pub(crate) fn backoff(first: Duration, max: Duration, retry: u32) -> Duration {
    let factor = 1u32.checked_shl(retry.min(16)).unwrap_or(u32::MAX);
    first.saturating_mul(factor).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_maximum() {
        let policy =
            RetryRefusals::new(8).with_delays(Duration::from_millis(10), Duration::from_millis(50));
        let delays: Vec<u128> = (0..5)
            .map(|retry| policy.delay(retry).as_millis())
            .collect();
        assert_eq!(delays, [10, 20, 40, 50, 50]);
        assert_eq!(policy.delay(1000), Duration::from_millis(50));
    }
}
