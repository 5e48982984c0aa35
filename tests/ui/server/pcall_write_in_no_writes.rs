// A redis.pcall of a write under no-writes returns the refusal: a warning, the script runs.
// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/server/pcall_write_in_no_writes.lua", keys = 1)]
async fn run(probe: &str) -> redis_script::redis::Value;

fn main() {
    let _: u32 = "not a number";
}
