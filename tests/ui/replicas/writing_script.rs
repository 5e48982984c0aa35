// A script that writes, asked to run on replicas.
use redis_script::redis_script;

#[redis_script(path = "../lua/release_lock.lua", keys = 1, read_from = "prefer_replica")]
async fn release_lock(lock: &str, token: &str) -> i64;

fn main() {}
