use redis_script::ScriptReply;

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64 },
    #[reply(tag = "ALLOWED")]
    Granted { count: u64 },
}

fn main() {}
