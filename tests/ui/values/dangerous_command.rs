// A warning: the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/values/dangerous_command.lua", keys = 1)]
async fn ranking(ranking: &str) -> Vec<String>;

fn main() {
    let _: u32 = "not a number";
}
