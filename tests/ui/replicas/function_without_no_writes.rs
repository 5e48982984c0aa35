// A library function registered without `no-writes`, asked to run on replicas.
use redis_script::redis_library;

#[redis_library(path = "../lua/quota_lib.lua")]
mod quota_lib {
    #[function(keys = 1, read_from = "prefer_replica")]
    async fn fixed_window_allow(counter: &str, limit: u64, window_ms: u64) -> redis::Value;

    #[function(keys = 1)]
    async fn quota_peek(counter: &str) -> Option<u64>;
}

fn main() {}
