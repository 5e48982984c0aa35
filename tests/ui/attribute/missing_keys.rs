use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua")]
async fn set_value(key: &str, value: &str) -> String;

fn main() {}
