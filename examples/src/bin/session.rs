//! Session touch: the session hash and the user's session index updated in
//! one atomic script, with keys that share a `{hash tag}`.
//!
//! Run: `cargo run -p redis-script-examples --bin session`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::collections::BTreeMap;
use std::time::Duration;

use redis_script::Error;
use redis_script::cluster::key_slot;
use redis_script_examples::connect;
use redis_script_examples::workflows::session::{index_key, session_key, session_touch, touch};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let user = "alice";
    let index = index_key(user);
    let () = redis::cmd("DEL")
        .arg(&index)
        .arg(session_key(user, "laptop"))
        .arg(session_key(user, "phone"))
        .arg(session_key(user, "kiosk"))
        .query_async(connection)
        .await?;

    for (session, client) in [
        ("laptop", "firefox"),
        ("phone", "ios-app"),
        ("laptop", "firefox"),
    ] {
        let touched = touch(connection, user, session, 30_000, client).await?;
        println!(
            "touch {} (ttl 30 s): touches {}, {} live sessions, expires at {} ms",
            session_key(user, session),
            touched.touches,
            touched.sessions,
            touched.expires_at_ms
        );
    }

    let hash: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(session_key(user, "laptop"))
        .query_async(connection)
        .await?;
    println!("HGETALL {}: {hash:?}", session_key(user, "laptop"));
    let entries: Vec<(String, u64)> = redis::cmd("ZRANGE")
        .arg(&index)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(connection)
        .await?;
    println!("ZRANGE {index} WITHSCORES: {entries:?}");
    for (session, score) in &entries {
        let expire_time: i64 = redis::cmd("PEXPIRETIME")
            .arg(session_key(user, session))
            .query_async(connection)
            .await?;
        println!("  {session}: index score {score} = PEXPIRETIME of its hash {expire_time}");
    }

    let kiosk = touch(connection, user, "kiosk", 200, "kiosk").await?;
    println!(
        "touch kiosk with a 200 ms ttl: {} live sessions",
        kiosk.sessions
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let touched = touch(connection, user, "phone", 30_000, "ios-app").await?;
    println!(
        "300 ms later, touch phone: {} live sessions (the expired kiosk entry was pruned)",
        touched.sessions
    );

    let (untagged_session, untagged_index) = ("session:alice:laptop", "user-sessions:alice");
    println!(
        "without hash tags, {untagged_session} is in slot {} and {untagged_index} in slot {}",
        key_slot(untagged_session.as_bytes()),
        key_slot(untagged_index.as_bytes())
    );
    match session_touch(
        connection,
        untagged_session,
        untagged_index,
        "laptop",
        30_000,
        "firefox",
    )
    .await
    {
        Err(error @ Error::CrossSlot { .. }) => {
            println!("touch with those keys: refused before sending: {error}");
        }
        other => println!("touch with those keys: unexpected {other:?}"),
    }
    Ok(())
}
