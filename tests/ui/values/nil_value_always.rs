use redis_script::redis_script;

#[redis_script(path = "ui/values/nil_value_always.lua", keys = 0)]
async fn bump(step: u64) -> i64;

fn main() {}
