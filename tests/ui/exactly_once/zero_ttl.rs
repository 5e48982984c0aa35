// A record that would expire at once.
use redis_script::redis_script;

#[redis_script(path = "../lua/transfer.lua", keys = 2, exactly_once(ttl_secs = 0))]
async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);

fn main() {}
