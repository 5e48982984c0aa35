// A caller id for a script that does not record its calls.
use redis_script::redis_script;

#[redis_script(path = "../lua/transfer.lua", keys = 2)]
async fn transfer(from: &str, to: &str, amount: i64) -> (i64, i64);

fn main() {
    let _call = transfer::call_with_id("order-7", "{a}:from", "{a}:to", 5);
}
