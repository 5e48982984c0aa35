// The error code a one-word `redis.error_reply` really sends is `ERR`: a
// warning explains it, and the contract check (with `errors = DocumentError`)
// reports the code the client would see. The build fails on that check.
use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum DocumentError {
    Gone,
}

#[redis_script(path = "ui/notes/one_word_error_reply.lua", keys = 1, errors = DocumentError)]
async fn read(document: &str) -> Option<String>;

fn main() {}
