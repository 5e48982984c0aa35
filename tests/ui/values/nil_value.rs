// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/nil_value.lua", keys = 1)]
async fn bump(counter: &str) -> i64;

fn main() {
    let _: u32 = "not a number";
}
