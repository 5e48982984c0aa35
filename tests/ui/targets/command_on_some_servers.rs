// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen. No target is set.
use redis_script::redis_script;

#[redis_script(path = "ui/targets/command_on_some_servers.lua", keys = 1)]
async fn touch_session(session: &str) -> Vec<Option<String>>;

fn main() {
    let _: u32 = "not a number";
}
