use redis_script::ScriptError;

#[derive(Debug, ScriptError)]
enum TransferError {
    #[error_code("insufficient")]
    Insufficient,
    #[error_code("NOSCRIPT")]
    Missing,
    Moved,
    _Hidden,
    #[error_code("FROZEN")]
    Frozen,
}

fn main() {}
