use redis_script::{ScriptReply, redis_script};

// `HGETALL` replies field names and values in turn; a struct decodes by
// position.
#[derive(Debug, ScriptReply)]
struct Profile {
    name: String,
    email: String,
}

#[redis_script(path = "ui/replies/field_value_reply.lua", keys = 1)]
async fn profile(user: &str) -> Profile;

fn main() {}
