use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1, target = "redis-5.0")]
async fn set_value(key: &str, value: &str) -> String;

fn main() {}
