// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/returned_metatable.lua", keys = 1)]
async fn job_state(job: &str) -> String;

fn main() {
    let _: u32 = "not a number";
}
