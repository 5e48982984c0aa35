// Redis compiles only source text: loadstring of string.dump's result is nil.
use redis_script::redis_script;

#[redis_script(path = "ui/server/loadstring_bytecode.lua", keys = 0)]
async fn run() -> redis_script::redis::Value;

fn main() {}
