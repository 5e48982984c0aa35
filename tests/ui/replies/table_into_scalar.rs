use redis_script::{ScriptReply, redis_script};

#[derive(Debug, ScriptReply)]
struct Page {
    length: u64,
    first: String,
}

#[redis_script(path = "ui/replies/table_into_scalar.lua", keys = 1)]
async fn page(queue: &str) -> Page;

fn main() {}
