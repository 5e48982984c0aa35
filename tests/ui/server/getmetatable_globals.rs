// The metatable of _G is read-only like _G itself.
use redis_script::redis_script;

#[redis_script(path = "ui/server/getmetatable_globals.lua", keys = 0)]
async fn run() -> redis_script::redis::Value;

fn main() {}
