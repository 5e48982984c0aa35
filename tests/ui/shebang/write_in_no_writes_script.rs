use redis_script::redis_script;

#[redis_script(path = "ui/shebang/write_in_no_writes_script.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {}
