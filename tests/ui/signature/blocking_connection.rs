use redis_script::redis_script;

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

async fn release(connection: &mut redis::Connection) {
    // A blocking connection takes the prepared call's `invoke_blocking`.
    let _ = release_lock(connection, "lock", "token").await;
}

fn main() {}
