// The callback must be a function.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/callback_not_a_function.lua")]
mod limits {
    #[function(keys = 0)]
    async fn limit() -> i64;
}

fn main() {}
