//! The fixed-window limiter as a Redis function library: deploy it (and
//! see a redeploy change nothing), call it, read its counter with a
//! read-only function, and watch a call reload it after `FUNCTION FLUSH`.
//!
//! Run: `cargo run -p redis-script-examples --bin quota`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use redis_script::OnConflict;
use redis_script_examples::connect;
use redis_script_examples::workflows::quota::{Decision, quota_lib};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let library = &quota_lib::LIBRARY;
    println!(
        "library `{}` from {} (SHA1 {}), functions: {}",
        library.name(),
        library.path(),
        library.sha1(),
        library.functions().join(", ")
    );
    let first = library.deploy(connection, OnConflict::Refuse).await?;
    let again = library.deploy(connection, OnConflict::Refuse).await?;
    println!(
        "deploy: {:?}; deploy again: {:?}",
        first.deployed, again.deployed
    );

    let counter = "quota:{demo-tenant}:api";
    let () = redis::cmd("DEL")
        .arg(counter)
        .query_async(connection)
        .await?;
    println!("{counter}: limit 3 per 10 s, 5 requests");
    for request in 1..=5 {
        let decision = quota_lib::fixed_window_allow(connection, counter, 3, 10_000).await?;
        let shown = match decision {
            Decision::Allowed { count, remaining } => {
                format!("ALLOWED ({count} admitted, {remaining} left)")
            }
            Decision::Denied { retry_after_ms, .. } => {
                format!("DENIED (retry after {retry_after_ms} ms)")
            }
        };
        println!("  request {request}: {shown}");
    }
    let admitted = quota_lib::quota_peek(connection, counter).await?;
    println!("quota_peek (FCALL_RO): {admitted:?} admitted in this window");

    let () = redis::cmd("FUNCTION")
        .arg("FLUSH")
        .query_async(connection)
        .await?;
    println!("FUNCTION FLUSH: the server has no library now");
    let admitted = quota_lib::quota_peek(connection, counter).await?;
    println!("quota_peek again: {admitted:?} (the call loaded the library and ran)");
    Ok(())
}
