use redis_script::redis_script;

#[redis_script(path = "ui/values/constant_equality.lua", keys = 1)]
async fn acquire(lock: &str, owner: &str) -> i64;

fn main() {}
