use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", key = 1)]
async fn set_value(key: &str, value: &str) -> String;

fn main() {}
