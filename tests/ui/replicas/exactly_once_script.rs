// An `exactly_once` script, which records its calls, asked to run on replicas.
use redis_script::redis_script;

#[redis_script(path = "../lua/transfer.lua", keys = 2, exactly_once, read_from = "replica_only")]
async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);

fn main() {}
