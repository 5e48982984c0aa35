// `exactly_once` on a script that declares `no-writes`: its record could
// not be stored.
use redis_script::redis_script;

#[redis_script(path = "ui/exactly_once/no_writes.lua", keys = 1, exactly_once)]
async fn peek(counter: &str) -> Option<i64>;

fn main() {}
