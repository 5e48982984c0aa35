// A record prefix with a hash tag of its own, which would move records
// away from the call's slot.
use redis_script::redis_script;

#[redis_script(path = "../lua/transfer.lua", keys = 2, exactly_once(prefix = "app:{once}:"))]
async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);

fn main() {}
