use redis_script::ScriptError;

#[derive(Debug, ScriptError)]
enum LockError {
    #[error_code("NOT OWNER")]
    NotOwner,
    #[error_code = "EXPIRED"]
    Expired,
    #[error_code(GONE)]
    Gone,
}

fn main() {}
