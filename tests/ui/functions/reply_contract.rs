// A function's replies are checked against its declared reply type, like a
// script's: `fixed_window_allow` replies `{0|1, count}`, two elements.
use redis_script::{ScriptReply, redis_library};

#[derive(Debug, ScriptReply)]
pub struct Window {
    pub allowed: i64,
    pub count: i64,
    pub remaining: i64,
}

#[redis_library(path = "ui/functions/quota.lua")]
mod quota {
    #[function(keys = 1)]
    async fn fixed_window_allow(counter: &str, limit: u64, window_seconds: u64) -> Window;

    #[function(keys = 1)]
    async fn quota_peek(counter: &str) -> Option<i64>;
}

fn main() {}
