use redis_script::redis_script;

// A missing counter's `GET` is nil, which no `i64` decodes.
#[redis_script(path = "ui/replies/missing_key_into_integer.lua", keys = 1)]
async fn read_counter(counter: &str) -> i64;

fn main() {}
