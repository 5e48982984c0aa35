use redis_script::redis_script;

#[redis_script(path = "ui/commands/noscript_command.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {}
