use redis_script::redis_script;

#[redis_script(path = "ui/file/does_not_exist.lua", keys = 1)]
async fn set_value(key: &str, value: &str) -> String;

// The declared function still exists, so this call does not add errors.
async fn caller(connection: &mut redis::aio::MultiplexedConnection) {
    let _ = set_value(connection, "k", "v").await;
}

fn main() {}
