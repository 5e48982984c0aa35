use redis_script::{ScriptError, redis_script};

#[derive(Debug, ScriptError)]
enum VersionError {
    Conflict { expected: u64, found: u64 },
}

#[redis_script(path = "ui/replies/undeclared_error_code.lua", keys = 1, errors = VersionError)]
async fn write_version(document: &str, expected: u64, body: &str) -> u64;

fn main() {}
