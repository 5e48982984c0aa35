use redis_script::ScriptReply;

#[derive(Debug, ScriptReply)]
enum Decision {
    #[reply(tga = "ALLOWED")]
    Allowed { count: u64 },
    #[reply(rename = "NO")]
    Denied { count: u64, retry_ms: u64 },
}

fn main() {}
