// A read policy that does not exist.
use redis_script::redis_script;

#[redis_script(path = "../lua/versioned_get.lua", keys = 1, read_from = "replica")]
async fn versioned_get(document: &str) -> Option<(u64, String)>;

fn main() {}
