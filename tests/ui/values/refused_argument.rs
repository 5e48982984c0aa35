use redis_script::redis_script;

#[redis_script(path = "ui/values/refused_argument.lua", keys = 1)]
async fn mark(profile: &str, field: &str) -> i64;

fn main() {}
