use redis_script::redis_script;

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

async fn release(client: &mut redis::Client) {
    // A client is not a connection: it opens them.
    let _ = release_lock(client, "lock", "token").await;
}

fn main() {}
