use redis_script::redis_script;

#[redis_script(path = "ui/ok.lua", keys = 1)]
async fn set_value(key: &str, value: &str) -> String;

// A connection of another redis-rs version is reported the same way: it
// does not implement this crate's redis-rs `ConnectionLike`.
struct OtherVersionConnection;

async fn caller(connection: &mut OtherVersionConnection) {
    let _ = set_value(connection, "k", "v").await;
}

fn main() {
    let _ = caller;
}
