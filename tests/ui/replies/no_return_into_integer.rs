use redis_script::redis_script;

// Without a `return` on every path, the script can reply nil.
#[redis_script(path = "ui/replies/no_return_into_integer.lua", keys = 1)]
async fn add(counter: &str, step: i64) -> i64;

fn main() {}
