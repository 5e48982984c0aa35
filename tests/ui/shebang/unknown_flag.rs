use redis_script::redis_script;

#[redis_script(path = "ui/shebang/unknown_flag.lua", keys = 1)]
async fn read(counter: &str) -> Option<i64>;

fn main() {}
