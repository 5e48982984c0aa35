//! Safe lock release: only the owner's token deletes the lock.
//!
//! Run: `cargo run -p redis-script-examples --bin lock`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use redis_script::redis_script;
use redis_script_examples::{connect, owner_token};

/// Deletes `lock` only if it still holds `token`; 1 when deleted, else 0.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let lock = "lock:{invoice-42}";
    let owner = owner_token();
    let intruder = owner_token();

    let acquired: Option<String> = redis::cmd("SET")
        .arg(lock)
        .arg(&owner)
        .arg("NX")
        .arg("PX")
        .arg(30_000)
        .query_async(connection)
        .await?;
    println!(
        "acquire {lock} as {}…: {}",
        &owner[..8],
        if acquired.is_some() {
            "acquired"
        } else {
            "busy"
        }
    );

    let released = release_lock(connection, lock, &intruder).await?;
    println!(
        "release by another token {}…: {released} (refused: it is not the owner)",
        &intruder[..8]
    );

    let released = release_lock(connection, lock, &owner).await?;
    println!("release by the owner: {released} (deleted)");

    let released = release_lock(connection, lock, &owner).await?;
    println!("release again: {released} (nothing left to release; safe to retry)");

    println!(
        "script {} sha1 {} ran with EVALSHA; the first call fell back to EVAL once",
        release_lock::SCRIPT.path(),
        release_lock::SCRIPT.sha1()
    );
    Ok(())
}
