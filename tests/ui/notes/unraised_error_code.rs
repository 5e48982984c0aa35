// A warning; the build fails here only because of the deliberate type
// error below, so the warning can be seen.
use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum LockError {
    NotOwner { message: String },
    /// The script never replies with `EXPIRED`.
    Expired,
}

#[redis_script(path = "ui/notes/unraised_error_code.lua", keys = 1, errors = LockError)]
async fn release(lock: &str, token: &str) -> i64;

fn main() {
    let _: u32 = "not a number";
}
