use redis_script::ScriptReply;

#[derive(ScriptReply)]
union Number {
    signed: i64,
    unsigned: u64,
}

fn main() {}
