//! A lock with owner tokens and fencing tokens: acquire (`SET NX PX` and a
//! fencing counter in one script), extend and release only by the owner.
//!
//! Run: `cargo run -p redis-script-examples --bin lock`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::time::Duration;

use redis_script::redis_script;
use redis_script_examples::workflows::lock::Lock;
use redis_script_examples::{connect, owner_token};

/// Deletes `lock` only if it still holds `token`; 1 when deleted, else 0.
#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let key = "lock:{invoice-42}";
    let ttl = Duration::from_secs(30);

    let Some(lock) = Lock::acquire(connection, key, ttl).await? else {
        return Err(format!("{key} is held by someone else").into());
    };
    println!(
        "acquire {key} as {}…: acquired, fencing token {}",
        &lock.token[..8],
        lock.fencing
    );

    let busy = Lock::acquire(connection, key, ttl).await?;
    println!(
        "acquire by another owner: {}",
        if busy.is_some() { "acquired?!" } else { "busy" }
    );

    let intruder = Lock {
        token: owner_token(),
        ..lock.clone()
    };
    println!(
        "extend by another token {}…: {} (refused: it is not the owner)",
        &intruder.token[..8],
        intruder.extend(connection, ttl).await?
    );
    let released = release_lock(connection, key, &intruder.token).await?;
    println!("release by another token: {released} (refused: it is not the owner)");

    println!(
        "extend by the owner to 60 s: {}",
        lock.extend(connection, Duration::from_secs(60)).await?
    );
    println!(
        "release by the owner: {} (deleted)",
        lock.release(connection).await?
    );
    println!(
        "release again: {} (nothing left to release; safe to retry)",
        lock.release(connection).await?
    );

    let short = Lock::acquire(connection, key, Duration::from_millis(100))
        .await?
        .ok_or("busy")?;
    println!(
        "acquire with a 100 ms TTL: fencing token {} (greater than {})",
        short.fencing, lock.fencing
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    let next = Lock::acquire(connection, key, ttl).await?.ok_or("busy")?;
    println!(
        "after it expired another owner acquires: fencing token {}",
        next.fencing
    );
    println!(
        "the expired owner's release: {} (refused: the lock is someone else's now)",
        short.release(connection).await?
    );
    println!(
        "writes carrying fencing token {} must now be refused by the protected resource",
        short.fencing
    );
    println!(
        "the new owner releases: {}",
        next.release(connection).await?
    );

    println!(
        "script {} sha1 {} ran with EVALSHA; the first call fell back to EVAL once",
        release_lock::SCRIPT.path(),
        release_lock::SCRIPT.sha1()
    );
    Ok(())
}
