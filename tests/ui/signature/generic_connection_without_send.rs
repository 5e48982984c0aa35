use redis::aio::ConnectionLike;
use redis_script::redis_script;

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

// A helper generic over its connection passes it on as `dyn AsyncConnection
// + Send`: the type must be known to be `Send`.
async fn release<C: ConnectionLike>(connection: &mut C) {
    let _ = release_lock(connection, "lock", "token").await;
}

fn main() {
    let _ = release::<redis::aio::MultiplexedConnection>;
}
