use redis_script::redis_script;

#[redis_script(path = "ui/values/fractional_argument_literal.lua", keys = 1)]
async fn store(session: &str, value: &str) -> i64;

fn main() {}
