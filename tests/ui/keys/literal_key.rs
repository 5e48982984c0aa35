use redis_script::redis_script;

#[redis_script(path = "ui/keys/literal_key.lua", keys = 1)]
async fn submit(item: &str, score: u64) -> i64;

fn main() {}
