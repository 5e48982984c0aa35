// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/unbounded_read.lua", keys = 2)]
async fn release_due(due: &str, jobs: &str, now: i64) -> i64;

fn main() {
    let _: u32 = "not a number";
}
