use redis_script::redis_script;

#[redis_script(path = "ui/params/dynamic_keys_without_slice.lua", keys = 1)]
async fn delete_all(key: &str) -> i64;

fn main() {}
