use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1)]
fn set_value(key: &str, value: &str) -> String;

fn main() {}
