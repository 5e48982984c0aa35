use redis_script::ScriptReply;

struct Instant(u64);

#[derive(ScriptReply)]
struct Window {
    count: u64,
    reset_at: Instant,
}

fn main() {}
