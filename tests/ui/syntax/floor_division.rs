use redis_script::redis_script;

#[redis_script(path = "ui/syntax/floor_division.lua", keys = 1)]
async fn halve(counter: &str, divisor: u32) -> i64;

fn main() {}
