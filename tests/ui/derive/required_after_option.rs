use redis_script::ScriptReply;

#[derive(Debug, ScriptReply)]
struct Window {
    count: u64,
    note: Option<String>,
    reset_at: u64,
}

#[derive(Debug, ScriptReply)]
enum Decision {
    Denied(u64, Option<u64>, String),
}

fn main() {}
