// A registered function no declaration covers is a warning; `deny` makes it
// fail here so the warning's text is recorded.
#![deny(deprecated)]
use redis_script::redis_library;

#[redis_library(path = "ui/functions/quota.lua")]
mod quota {
    #[function(keys = 1)]
    async fn fixed_window_allow(counter: &str, limit: u64, window_seconds: u64) -> Vec<i64>;
}

fn main() {}
