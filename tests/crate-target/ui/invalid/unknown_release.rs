// Compiled with REDIS_SCRIPT_TARGET=redis-5.0.
use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1)]
async fn set_value(key: &str, value: &str) -> String;

fn main() {}
