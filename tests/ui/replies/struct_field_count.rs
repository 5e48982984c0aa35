use redis_script::{ScriptReply, redis_script};

/// Decoded from `{count, ttl_ms}`.
#[derive(Debug, ScriptReply)]
struct FixedWindow {
    count: u64,
    ttl_ms: i64,
}

#[redis_script(path = "ui/replies/struct_field_count.lua", keys = 1)]
async fn touch_window(counter: &str, window_ms: u64) -> FixedWindow;

fn main() {}
