//! The same counter increment two ways: optimistic `WATCH`/`MULTI`/`EXEC`
//! with retries ([`increment_with_watch`]) and one atomic script
//! ([`counter_increment()`], `lua/counter_increment.lua`).
//!
//! Both end at the same value under any concurrency; the difference is the
//! cost. A `WATCH` transaction is a read-modify-write over four round trips
//! (`WATCH`, `GET`, `MULTI`…`EXEC`) that must start over whenever another
//! client writes the key in between, and it needs a connection of its own
//! (`WATCH` state belongs to the connection). The script is one round trip
//! that never conflicts and can share a multiplexed connection.

use redis::aio::ConnectionLike;
use redis_script::redis_script;

/// Adds `amount` to `counter` atomically; the new value.
#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
pub async fn counter_increment(counter: &str, amount: i64) -> i64;

/// The outcome of one [`increment_with_watch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchIncrement {
    /// The counter's value after this increment.
    pub value: i64,
    /// How many times `EXEC` was aborted because another client wrote the
    /// counter after our `WATCH`, and the increment started over.
    pub retries: u64,
}

/// Adds `amount` to `counter` with optimistic locking: `WATCH` the key, read
/// it, then `MULTI`/`SET`/`EXEC`; when `EXEC` aborts (the key changed since
/// `WATCH`), start over. Returns the new value and the number of retries.
///
/// `connection` must not be used by any other task meanwhile: `WATCH` is
/// state of the connection, so a multiplexed connection shared between
/// tasks (or a cluster connection, which multiplexes per node) would mix
/// one task's `WATCH` with another's `EXEC`. Give each worker its own
/// connection; on a cluster, one to the primary that owns the key's slot.
///
/// It loops until `EXEC` succeeds: under constant contention a worker can
/// in principle starve (the script cannot).
pub async fn increment_with_watch<C>(
    connection: &mut C,
    counter: &str,
    amount: i64,
) -> redis::RedisResult<WatchIncrement>
where
    C: ConnectionLike,
{
    let mut retries = 0;
    loop {
        match try_increment(connection, counter, amount).await {
            Ok(Some(value)) => return Ok(WatchIncrement { value, retries }),
            Ok(None) => retries += 1,
            Err(error) => {
                // Leave the connection clean for its next user; the original
                // error is the one worth reporting.
                let _: redis::RedisResult<()> = redis::cmd("UNWATCH").query_async(connection).await;
                return Err(error);
            }
        }
    }
}

/// One optimistic attempt: the new value, or `None` when `EXEC` aborted.
async fn try_increment<C>(
    connection: &mut C,
    counter: &str,
    amount: i64,
) -> redis::RedisResult<Option<i64>>
where
    C: ConnectionLike,
{
    let () = redis::cmd("WATCH")
        .arg(counter)
        .query_async(connection)
        .await?;
    let current: Option<i64> = redis::cmd("GET")
        .arg(counter)
        .query_async(connection)
        .await?;
    let value = current.unwrap_or(0) + amount;
    // `EXEC` answers nil when a watched key changed: nothing was written.
    let executed: Option<(String,)> = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg(counter)
        .arg(value)
        .query_async(connection)
        .await?;
    Ok(executed.map(|_| value))
}
