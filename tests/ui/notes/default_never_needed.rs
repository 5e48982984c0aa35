// A default given to a number that is never nil (as redis-py's lock
// extension does after `PTTL`) is a warning, not an error; the build fails
// here only because of the deliberate type error below.
use redis_script::redis_script;

#[redis_script(path = "ui/notes/default_never_needed.lua", keys = 1)]
async fn extend_lock(lock: &str, token: &str, milliseconds: i64) -> i64;

fn main() {
    let _: u32 = "not a number";
}
