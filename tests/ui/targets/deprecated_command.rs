// A deprecated command is a warning; the build fails here only because of
// the deliberate type error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/targets/deprecated_command.lua", keys = 1)]
async fn swap(key: &str, value: &str) -> Option<String>;

fn main() {
    let _: u32 = "not a number";
}
