use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64 },
    Denied { count: u64, retry_ms: u64 },
}

#[redis_script(path = "ui/replies/misspelled_tag.lua", keys = 1)]
async fn admit(counter: &str, limit: u32) -> Decision;

fn main() {}
