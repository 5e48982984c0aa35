use redis_script::redis_script;

#[redis_script(path = "ui/keys/key_built_from_argv.lua", keys = 1)]
async fn take(lock: &str, owner: &str) -> i64;

fn main() {}
