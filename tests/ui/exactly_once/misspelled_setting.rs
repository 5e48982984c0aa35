// A misspelled `exactly_once` setting.
use redis_script::redis_script;

#[redis_script(path = "../lua/transfer.lua", keys = 2, exactly_once(ttl_seconds = 60))]
async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);

fn main() {}
