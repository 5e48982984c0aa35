use redis_script::redis_script;

#[redis_script(path = "ui/replies/string_into_number.lua", keys = 1)]
async fn count_job(counter: &str) -> i64;

fn main() {}
