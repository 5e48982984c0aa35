// A bodyless function in the module without `#[function(…)]`.
use redis_script::redis_library;

#[redis_library(path = "ui/functions/quota.lua")]
mod quota {
    #[function(keys = 1)]
    async fn fixed_window_allow(counter: &str, limit: u64, window_seconds: u64) -> Vec<i64>;

    async fn quota_peek(counter: &str) -> Option<i64>;
}

fn main() {}
