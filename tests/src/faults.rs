//! Scripts of the fault-injection tests (`tests/integration/faults.rs`):
//! each records its executions in a log hash, so a test can compare what
//! ran on the server with what every caller was told.

use redis_script::redis_script;

/// Logs one execution of `id` in `log`; the total executions after it.
#[redis_script(path = "lua/faults/log_call.lua", keys = 2)]
pub async fn log_call(counter: &str, log: &str, id: &str) -> i64;

/// Logs one execution of `id`, then returns `error` as its error reply.
#[redis_script(path = "lua/faults/write_then_error.lua", keys = 2)]
pub async fn write_then_error(counter: &str, log: &str, id: &str, error: &str) -> i64;

/// Logs one execution of `id`, then returns a literal, server-worded BUSY.
#[redis_script(path = "lua/faults/write_then_busy.lua", keys = 2)]
pub async fn write_then_busy(counter: &str, log: &str, id: &str) -> i64;

/// [`log_call`] with a `#!lua` shebang and no flags.
#[redis_script(path = "lua/faults/shebang_log_call.lua", keys = 2)]
pub async fn shebang_log_call(counter: &str, log: &str, id: &str) -> i64;

/// How many times `id` ran; a read-only script.
#[redis_script(path = "lua/faults/read_log.lua", keys = 1)]
pub async fn read_log(log: &str, id: &str) -> Option<i64>;

/// [`log_call`], declared `exactly_once`: counts one execution of request
/// `id` and keeps the first execution's reply in `first`.
#[redis_script(
    path = "lua/exactly_once/log_call_once.lua",
    keys = 3,
    exactly_once(retries = 10)
)]
pub async fn log_call_once(counter: &str, log: &str, first: &str, id: &str) -> i64;

/// Appends `id` to the list `order`; the list's length after it.
#[redis_script(path = "lua/faults/append_id.lua", keys = 1)]
pub async fn append_id(order: &str, id: &str) -> i64;

/// [`append_id`] with another body, so another SHA1.
#[redis_script(path = "lua/faults/append_id_again.lua", keys = 1)]
pub async fn append_id_again(order: &str, id: &str) -> i64;
