use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { remaining: u64 },
    Denied { remaining: u64, retry_after_seconds: u64 },
}

#[redis_script(path = "ui/replies/float_into_integer.lua", keys = 1)]
async fn take_token(bucket: &str, capacity: u64) -> Decision;

fn main() {}
