use redis_script::redis_script;

#[redis_script(path = "../lua/enqueue_job.lua", keys = 1)]
async fn enqueue(#[key_prefix] queue: &str, id: &str, payload: &str) -> i64;

fn main() {}
