use redis_script::redis_script;

#[redis_script(path = "ui/server/acl_check_cmd_unknown.lua", keys = 0)]
async fn run(value: &str) -> redis_script::redis::Value;

fn main() {}
