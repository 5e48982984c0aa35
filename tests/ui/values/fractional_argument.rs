// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/fractional_argument.lua", keys = 1)]
async fn shorten(session: &str, ttl: u64) -> i64;

fn main() {
    let _: u32 = "not a number";
}
