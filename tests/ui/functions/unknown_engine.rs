// FUNCTION LOAD knows only the Lua engine.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/unknown_engine.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
