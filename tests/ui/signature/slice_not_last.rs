use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 2)]
async fn set_value(keys: &[&str], last: &str, value: &str) -> String;

fn main() {}
