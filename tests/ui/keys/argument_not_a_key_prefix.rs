use redis_script::redis_script;

// The script appends to `prefix`, which is not declared `#[key_prefix]`.
#[redis_script(path = "ui/keys/argument_not_a_key_prefix.lua", keys = 1)]
async fn add_job(counter: &str, prefix: &str, id: &str) -> i64;

fn main() {}
