use redis_script::redis_script;

// `SET … NX` replies nil or the status `OK`: the `Option` takes the nil,
// not the status.
#[redis_script(path = "ui/replies/status_or_nil_into_option.lua", keys = 1)]
async fn acquire(lock: &str, owner: &str, ttl_ms: u64) -> Option<i64>;

fn main() {}
