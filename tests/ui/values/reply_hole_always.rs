use redis_script::redis_script;

#[redis_script(path = "ui/values/reply_hole_always.lua", keys = 1)]
async fn read(first: &str) -> Vec<String>;

fn main() {}
