use redis_script::redis_script;

#[redis_script(path = "ui/targets/noscript_on_older_release.lua", keys = 1, target = "redis-7.0")]
async fn pop(queue: &str) -> Option<Vec<String>>;

fn main() {}
