use redis_script::redis_script;

#[redis_script(path = "ui/values/key_as_value.lua", keys = 3)]
async fn unlock(lock: &str, signal: &str, expiry_ms: &str, owner: &str) -> i64;

fn main() {}
