use redis_script::redis_script;

#[redis_script(path = "ui/params/key_index_zero.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {}
