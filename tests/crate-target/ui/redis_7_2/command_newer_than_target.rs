// Compiled with REDIS_SCRIPT_TARGET=redis-7.2: HEXPIRE is newer.
use redis_script::redis_script;

#[redis_script(path = "ui/redis_7_2/hash_field_expiry.lua", keys = 1)]
async fn expire_field(hash: &str, field: &str, seconds: u64) -> Vec<i64>;

// A script's own `target` overrides the crate's.
#[redis_script(path = "ui/redis_7_2/hash_field_expiry.lua", keys = 1, target = "redis-7.4")]
async fn expire_field_on_7_4(hash: &str, field: &str, seconds: u64) -> Vec<i64>;

fn main() {}
