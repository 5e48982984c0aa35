use redis_script::redis_script;

#[redis_script(path = "ui/server/error_reply_arity.lua", keys = 0)]
async fn run(value: &str) -> redis_script::redis::Value;

fn main() {}
