use redis_script::ScriptReply;

#[derive(Debug, ScriptReply)]
#[reply(tag = "WINDOW")]
struct Window<'a> {
    #[reply(tag = "COUNT")]
    count: u64,
    label: &'a str,
}

#[derive(Debug, ScriptReply)]
struct Done;

fn main() {}
