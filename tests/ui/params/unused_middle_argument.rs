use redis_script::redis_script;

#[redis_script(path = "ui/params/unused_middle_argument.lua", keys = 1)]
async fn extend(lock: &str, token: &str, ttl_ms: u64, reason: &str) -> i64;

fn main() {}
