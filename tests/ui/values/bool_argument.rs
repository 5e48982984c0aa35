use redis_script::redis_script;

#[redis_script(path = "ui/values/bool_argument.lua", keys = 1)]
async fn set_maintenance(flags: &str, enabled: bool) -> i64;

fn main() {}
