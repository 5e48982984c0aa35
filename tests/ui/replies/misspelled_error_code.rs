use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum LockError {
    NotOwner { message: String },
}

#[redis_script(path = "ui/replies/misspelled_error_code.lua", keys = 1, errors = LockError)]
async fn release(lock: &str, token: &str) -> i64;

fn main() {}
