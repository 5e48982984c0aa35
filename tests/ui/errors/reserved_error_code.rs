use redis_script::redis_script;

#[redis_script(path = "ui/errors/reserved_error_code.lua", keys = 1)]
async fn enqueue(queue: &str) -> u64;

fn main() {}
