// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen. Every server of the target has
// DELIFEQ, which does what the script does.
use redis_script::redis_script;

#[redis_script(path = "ui/values/single_command.lua", keys = 1, target = "valkey-9.1")]
async fn release_lock(lock: &str, token: &str) -> i64;

fn main() {
    let _: u32 = "not a number";
}
