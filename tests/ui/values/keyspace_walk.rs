// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/keyspace_walk.lua", keys = 0, dynamic_keys)]
async fn expire_sessions(pattern: &str) -> i64;

fn main() {
    let _: u32 = "not a number";
}
