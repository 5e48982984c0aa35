//! Idempotent requests: the first of duplicate requests claims the key and
//! runs the side effect once; duplicates see "busy" or replay its response.
//!
//! Run: `cargo run -p redis-script-examples --bin idempotency`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::time::Duration;

use redis_script_examples::workflows::idempotency::{Claim, claim, complete};
use redis_script_examples::{connect, owner_token};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;
    let key = format!("idem:{{payment-{}}}", &owner_token()[..8]);
    let lease = Duration::from_secs(30);
    let keep = Duration::from_secs(600);
    let (first, duplicate) = (owner_token(), owner_token());

    let claimed = claim(connection, &key, &first, lease).await?;
    println!("request A claims {key}: {claimed:?} (A runs the side effect)");

    let seen = claim(connection, &key, &duplicate, lease).await?;
    println!("duplicate B while A runs: {seen:?} (answer 409 / retry later)");

    let again = claim(connection, &key, &first, lease).await?;
    println!("A claims again (a retry after a timeout): {again:?}");

    let refused = complete(connection, &key, &duplicate, 500, b"oops", keep).await;
    println!(
        "B tries to complete A's request: {}",
        refused.err().map_or("accepted?!".into(), |e| e.to_string())
    );

    println!("A charges the card (the side effect), then completes with 201");
    complete(
        connection,
        &key,
        &first,
        201,
        b"{\"payment\":\"p-1\"}",
        keep,
    )
    .await?;
    complete(
        connection,
        &key,
        &first,
        201,
        b"{\"payment\":\"p-1\"}",
        keep,
    )
    .await?;
    println!("A completes again (a retry): OK, the first response is kept");

    match claim(connection, &key, &duplicate, lease).await? {
        Claim::Replay { status, body } => println!(
            "duplicate B after completion: replay {status} {}",
            String::from_utf8_lossy(&body)
        ),
        other => println!("duplicate B after completion: unexpected {other:?}"),
    }

    let () = redis::cmd("DEL").arg(&key).query_async(connection).await?;
    println!("deleted {key}");
    Ok(())
}
