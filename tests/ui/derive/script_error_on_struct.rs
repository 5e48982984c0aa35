use redis_script::ScriptError;

#[derive(Debug, ScriptError)]
struct Conflict {
    expected: u64,
    found: u64,
}

fn main() {}
