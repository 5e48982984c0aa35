// `path` belongs to the library, not to one function.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/quota.lua")]
mod quota {
    #[function(path = "ui/functions/quota.lua", keys = 1)]
    async fn fixed_window_allow(counter: &str, limit: u64, window_seconds: u64) -> Vec<i64>;

    #[function(keys = 1)]
    async fn quota_peek(counter: &str) -> Option<i64>;
}

fn main() {}
