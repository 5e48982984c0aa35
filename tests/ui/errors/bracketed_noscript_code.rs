use redis_script::redis_script;

#[redis_script(path = "ui/errors/bracketed_noscript_code.lua", keys = 1)]
async fn count(counter: &str) -> i64;

fn main() {}
