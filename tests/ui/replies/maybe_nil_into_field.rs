use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
struct Visit {
    count: u64,
    settings: String,
}

#[redis_script(path = "ui/replies/maybe_nil_into_field.lua", keys = 2)]
async fn visit(profile: &str, settings: &str) -> Visit;

fn main() {}
