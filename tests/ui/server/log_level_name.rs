use redis_script::redis_script;

#[redis_script(path = "ui/server/log_level_name.lua", keys = 0)]
async fn run(value: &str) -> redis_script::redis::Value;

fn main() {}
