// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/unbounded_unpack.lua", keys = 2)]
async fn mark_active(active: &str, stalling: &str) -> i64;

fn main() {
    let _: u32 = "not a number";
}
