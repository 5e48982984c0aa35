// A function library given to `#[redis_script]`: one error naming the form
// to use instead.
use redis_script::redis_script;

#[redis_script(path = "ui/functions/quota.lua", keys = 1)]
async fn fixed_window_allow(counter: &str, limit: u64, window_seconds: u64) -> Vec<i64>;

fn main() {}
