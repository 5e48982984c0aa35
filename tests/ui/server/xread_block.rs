use redis_script::redis_script;

#[redis_script(path = "ui/server/xread_block.lua", keys = 1, target = "redis-7.0")]
async fn run(stream: &str, last_id: &str) -> redis_script::redis::Value;

fn main() {}
