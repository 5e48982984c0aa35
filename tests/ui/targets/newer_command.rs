use redis_script::redis_script;

#[redis_script(path = "ui/targets/newer_command.lua", keys = 1, target = "redis-7.4,valkey-8.1")]
async fn read_and_expire(hash: &str, field: &str) -> Vec<Option<String>>;

fn main() {}
