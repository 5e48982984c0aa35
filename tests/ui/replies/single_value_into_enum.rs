use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64 },
    Denied,
}

#[redis_script(path = "ui/replies/single_value_into_enum.lua", keys = 1)]
async fn admit(counter: &str, limit: u32) -> Decision;

fn main() {}
