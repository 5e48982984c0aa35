// A note of the analysis is a warning; the build fails here only because
// of the deliberate type error below, so the warning can be seen.
use redis_script::redis_script;

#[redis_script(path = "ui/notes/loadstring.lua", keys = 1)]
async fn run_rule(rule: &str, input: &str) -> Option<String>;

fn main() {
    let _: u32 = "not a number";
}
