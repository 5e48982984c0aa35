use redis_script::redis_script;

#[redis_script(path = "ui/errors/noscript_error_code.lua", keys = 1)]
async fn cached(entry: &str) -> Option<String>;

fn main() {}
