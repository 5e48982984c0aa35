use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { remaining: i64 },
    Denied { retry_after_seconds: u64 },
}

#[redis_script(path = "ui/replies/text_into_integer.lua", keys = 1)]
async fn take(bucket: &str) -> Decision;

fn main() {}
