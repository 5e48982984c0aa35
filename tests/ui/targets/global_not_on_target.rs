use redis_script::redis_script;

#[redis_script(path = "ui/targets/global_not_on_target.lua", keys = 1, target = "redis-7.2")]
async fn read(key: &str) -> Option<String>;

fn main() {}
