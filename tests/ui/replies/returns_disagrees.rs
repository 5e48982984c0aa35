use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1, returns = String)]
async fn set_value(key: &str, value: &str) -> i64;

fn main() {}
