use redis_script::redis_script;

// One key and two arguments, declared as two keys: the script reads
// `ARGV[2]`, and the second key parameter is really the first argument.
#[redis_script(path = "ui/params/keys_count_too_high.lua", keys = 2)]
async fn acquire(lock: &str, token: &str, ttl_ms: u64) -> Option<String>;

fn main() {}
