use redis_script::redis_script;

#[redis_script(path = "ui/globals/misspelled_redis.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {}
