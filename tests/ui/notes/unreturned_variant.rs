// A variant the script never produces is a warning; the build fails here
// only because of the deliberate type error below, so it can be seen.
use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64 },
    Denied { count: u64 },
    Throttled { count: u64 },
}

#[redis_script(path = "ui/notes/unreturned_variant.lua", keys = 1)]
async fn admit(counter: &str, limit: u32) -> Decision;

fn main() {
    let _: u32 = "not a number";
}
