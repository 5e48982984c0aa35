use redis_script::redis_script;

#[redis_script(path = "ui/values/bit_width.lua", keys = 1)]
async fn is_admin(permissions: &str) -> i64;

fn main() {}
