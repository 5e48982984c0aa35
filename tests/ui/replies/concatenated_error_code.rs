use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum VersionError {
    VersionConflict { expected: u64, found: u64 },
}

#[redis_script(path = "ui/replies/concatenated_error_code.lua", keys = 1, errors = VersionError)]
async fn set_versioned(document: &str, expected: u64, body: &str) -> u64;

fn main() {}
