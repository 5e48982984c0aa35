use redis_script::redis_script;

#[redis_script(path = "ui/commands/wrong_arity.lua", keys = 1)]
async fn store(key: &str, value: &str) -> String;

fn main() {}
