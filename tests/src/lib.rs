//! Scripts of the project's `lua/` library declared once, with typed
//! signatures, for the integration tests.

use redis_script::redis_script;

/// Deletes the lock only if `token` still owns it; 1 when deleted.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
pub async fn release_lock(lock: &str, token: &str) -> i64;

/// Moves `amount` from `source` to `destination`; the new balances.
#[redis_script(path = "../lua/transfer.lua", keys = 2)]
pub async fn transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// Generic parameters are kept: any reply type that decodes.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
pub async fn release_lock_as<T: redis::FromRedisValue>(lock: &str, token: &str) -> T;

/// A `where` clause is kept too, on the function and on its `call`.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
pub async fn release_lock_where<T>(lock: &str, token: &str) -> T
where
    T: redis::FromRedisValue + Default;

pub mod faults;

/// The integer at `key` (`None` when it is missing): what a test reads back
/// after its script calls.
pub async fn get<C: redis::aio::ConnectionLike>(connection: &mut C, key: &str) -> Option<i64> {
    redis::cmd("GET")
        .arg(key)
        .query_async(connection)
        .await
        .expect("GET")
}

/// What `tests/lua/replies/decision.lua` returns: every kind of tagged
/// variant `#[derive(ScriptReply)]` decodes.
#[derive(Debug, PartialEq, redis_script::ScriptReply)]
pub enum Decision {
    Allowed {
        count: u64,
    },
    Denied {
        count: u64,
        retry_ms: u64,
    },
    TooMany(u64, Option<u64>),
    Busy,
    #[reply(tag = "OK")]
    Idle,
}
