use redis_script::redis_script;

#[redis_script(path = "ui/targets/command_not_on_target.lua", keys = 1, target = "redis-7.2")]
async fn expire_field(session: &str, field: &str) -> Vec<i64>;

fn main() {}
