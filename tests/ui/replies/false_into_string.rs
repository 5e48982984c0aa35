use redis_script::redis_script;

// `return false` reaches the client as nil, which no `String` decodes.
#[redis_script(path = "ui/replies/false_into_string.lua", keys = 1)]
async fn lock_meta(lock: &str, token: &str) -> String;

fn main() {}
