use redis_script::ScriptError;

#[derive(Debug, ScriptError)]
enum VersionError {
    Conflict { expected: u64, found: u64 },
    #[error_code("CONFLICT")]
    Clash,
}

fn main() {}
