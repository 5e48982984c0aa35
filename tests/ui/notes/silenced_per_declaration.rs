// `#[allow(deprecated)]` on a declaration silences its warnings (the
// analysis note about `loadstring` and the unraised `Expired` code); the
// declaration without it still warns. The build fails only because of the
// deliberate type error below, so the output shows which warnings remain.
use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum LockError {
    NotOwner { message: String },
    Expired,
}

#[allow(deprecated)]
#[redis_script(path = "ui/notes/loadstring.lua", keys = 1)]
async fn run_rule(rule: &str, input: &str) -> Option<String>;

#[allow(deprecated)]
#[redis_script(path = "ui/notes/unraised_error_code.lua", keys = 1, errors = LockError)]
async fn release(lock: &str, token: &str) -> i64;

#[redis_script(path = "ui/notes/loadstring.lua", keys = 1)]
async fn run_rule_loudly(rule: &str, input: &str) -> Option<String>;

fn main() {
    let _: u32 = "not a number";
}
