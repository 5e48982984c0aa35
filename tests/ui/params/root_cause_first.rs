// Two keys, declared as one: `KEYS[2]` is out of range, and the last
// parameter (which the script would read as `ARGV[2]`) is never read. Only
// the root cause is reported.
use redis_script::redis_script;

#[redis_script(path = "ui/params/root_cause_first.lua", keys = 1)]
async fn move_some(source: &str, destination: &str, count: i64) -> i64;

fn main() {}
