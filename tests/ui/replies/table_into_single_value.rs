use redis_script::redis_script;

#[redis_script(path = "ui/replies/table_into_single_value.lua", keys = 1)]
async fn count(counter: &str) -> i64;

fn main() {}
