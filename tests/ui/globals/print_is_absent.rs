use redis_script::redis_script;

#[redis_script(path = "ui/globals/print_is_absent.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {}
