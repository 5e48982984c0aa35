// `exactly_once` on a script that writes nothing: sending it again is
// already harmless.
use redis_script::redis_script;

#[redis_script(path = "../lua/versioned_get.lua", keys = 1, exactly_once)]
async fn versioned_get(document: &str) -> Option<(u64, String)>;

fn main() {}
