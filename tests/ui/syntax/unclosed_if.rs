use redis_script::redis_script;

#[redis_script(path = "ui/syntax/unclosed_if.lua", keys = 1)]
async fn increment_below(counter: &str, limit: u64) -> i64;

fn main() {}
