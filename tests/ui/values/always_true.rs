use redis_script::redis_script;

#[redis_script(path = "ui/values/always_true.lua", keys = 1)]
async fn check(members: &str, member: &str) -> String;

fn main() {}
