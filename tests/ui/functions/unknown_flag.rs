// A misspelled function flag, which FUNCTION LOAD refuses.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/unknown_flag.lua")]
mod counters {
    #[function(keys = 1)]
    async fn peek(counter: &str) -> Option<i64>;
}

fn main() {}
