use redis_script::redis_script;

#[redis_script(path = "ui/keys/key_read_from_data.lua", keys = 1)]
async fn current_length(pointer: &str) -> i64;

fn main() {}
