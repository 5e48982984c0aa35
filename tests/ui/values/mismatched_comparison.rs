use redis_script::redis_script;

#[redis_script(path = "ui/values/mismatched_comparison.lua", keys = 1)]
async fn hit(counter: &str, limit: u64) -> i64;

fn main() {}
