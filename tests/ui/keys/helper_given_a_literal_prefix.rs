use redis_script::redis_script;

#[redis_script(path = "ui/keys/helper_given_a_literal_prefix.lua", keys = 1)]
async fn remove_job(queue: &str, id: &str) -> i64;

fn main() {}
