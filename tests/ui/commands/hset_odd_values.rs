use redis_script::redis_script;

// `email` has no value: HSET takes field value pairs.
#[redis_script(path = "ui/commands/hset_odd_values.lua", keys = 1, allow_unused)]
async fn save_profile(profile: &str, name: &str, email: &str) -> i64;

fn main() {}
