use redis_script::{ScriptReply, redis_script};

// `r` is nil when the branch that sets it does not run; the reply then
// stops there and arrives with one element.
#[derive(Debug, ScriptReply)]
struct Usage {
    used: u64,
    ttl_ms: i64,
    limit: u64,
}

#[redis_script(path = "ui/replies/nil_on_one_branch.lua", keys = 1)]
async fn usage(counter: &str, limit: u64) -> Usage;

fn main() {}
