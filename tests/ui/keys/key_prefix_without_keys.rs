use redis_script::redis_script;

#[redis_script(path = "ui/keys/key_prefix_without_keys.lua", keys = 0)]
async fn remove(#[key_prefix] queue: &str, id: &str) -> i64;

fn main() {}
