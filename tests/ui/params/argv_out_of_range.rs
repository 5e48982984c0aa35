use redis_script::redis_script;

#[redis_script(path = "ui/params/argv_out_of_range.lua", keys = 1)]
async fn acquire(lock: &str, token: &str) -> Option<String>;

fn main() {}
