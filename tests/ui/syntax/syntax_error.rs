use redis_script::redis_script;

#[redis_script(path = "ui/syntax/syntax_error.lua", keys = 1)]
async fn read_counter(key: &str) -> i64;

fn main() {}
