// A function reading the EVAL-only `KEYS` global instead of its callback's
// first parameter.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/keys_global.lua")]
mod peeks {
    #[function(keys = 1)]
    async fn peek(counter: &str) -> Option<i64>;
}

fn main() {}
