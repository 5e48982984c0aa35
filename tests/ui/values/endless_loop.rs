use redis_script::redis_script;

#[redis_script(path = "ui/values/endless_loop.lua", keys = 1)]
async fn drain(queue: &str) -> i64;

fn main() {}
