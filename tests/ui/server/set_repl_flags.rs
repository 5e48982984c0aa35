use redis_script::redis_script;

#[redis_script(path = "ui/server/set_repl_flags.lua", keys = 0)]
async fn run(value: &str) -> redis_script::redis::Value;

fn main() {}
