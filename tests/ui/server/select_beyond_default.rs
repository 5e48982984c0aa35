// A server has 16 databases unless configured otherwise.
// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/server/select_beyond_default.lua", keys = 0)]
async fn run() -> redis_script::redis::Value;

fn main() {
    let _: u32 = "not a number";
}
