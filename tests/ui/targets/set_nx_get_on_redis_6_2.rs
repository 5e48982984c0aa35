use redis_script::redis_script;

// Redis 6.2 takes `NX` and `GET` each alone, not together (from 7.0 it
// does): a queue library shipped this call to users of 6.x.
#[redis_script(path = "ui/targets/set_nx_get_on_redis_6_2.lua", keys = 1, target = "redis-6.2")]
async fn claim(dedup_key: &str, job: &str, ttl_ms: u64) -> Option<String>;

fn main() {}
