// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/server/xread_block_default_target.lua", keys = 1)]
async fn run(stream: &str, last_id: &str) -> redis_script::redis::Value;

fn main() {
    let _: u32 = "not a number";
}
