use redis_script::redis_script;

#[redis_script(path = "ui/commands/arity_through_alias.lua", keys = 1)]
async fn bump(counter: &str, step: i64) -> i64;

fn main() {}
