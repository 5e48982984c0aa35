use redis_script::redis_script;

#[redis_script(path = "ui/syntax/bitwise_and.lua", keys = 1)]
async fn masked(flags: &str, mask: u32) -> i64;

fn main() {}
