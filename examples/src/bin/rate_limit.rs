//! Rate limiting with a fixed window and a sliding window, both answering a
//! tagged `Decision`.
//!
//! Run: `cargo run -p redis-script-examples --bin rate_limit`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::time::Duration;

use redis_script_examples::connect;
use redis_script_examples::workflows::rate_limit::{
    Decision, rate_limit_fixed, rate_limit_sliding, request_id,
};

fn describe(decision: Decision) -> String {
    match decision {
        Decision::Allowed { count, remaining } => {
            format!("ALLOWED ({count} admitted in the window, {remaining} left)")
        }
        Decision::Denied {
            count,
            retry_after_ms,
        } => format!("DENIED ({count} already admitted, retry after {retry_after_ms} ms)"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut demo = connect().await?;
    let connection = &mut demo.connection;

    // Fixed window: 5 requests per 1.5 s.
    let fixed = "rl:{demo-tenant}:fixed";
    let () = redis::cmd("DEL").arg(fixed).query_async(connection).await?;
    println!("fixed window {fixed}: limit 5 per 1500 ms, 7 requests");
    let mut retry_after = 0;
    for request in 1..=7 {
        let decision = rate_limit_fixed(connection, fixed, 5, 1_500).await?;
        println!("  request {request}: {}", describe(decision));
        if let Decision::Denied { retry_after_ms, .. } = decision {
            retry_after = retry_after_ms;
        }
    }
    println!("  waiting {retry_after} ms for the window to end");
    tokio::time::sleep(Duration::from_millis(retry_after + 10)).await;
    let decision = rate_limit_fixed(connection, fixed, 5, 1_500).await?;
    println!("  next window, request 1: {}", describe(decision));

    // Sliding window: 3 requests in any 1 s.
    let sliding = "rl:{demo-tenant}:sliding";
    let () = redis::cmd("DEL")
        .arg(sliding)
        .query_async(connection)
        .await?;
    println!("sliding window {sliding}: limit 3 in any 1000 ms, 4 requests 200 ms apart");
    let mut retry_after = 0;
    let mut first_id = String::new();
    for request in 1..=4 {
        let id = request_id();
        let decision = rate_limit_sliding(connection, sliding, 3, 1_000, &id).await?;
        println!(
            "  request {request} (id {}…): {}",
            &id[..8],
            describe(decision)
        );
        if request == 1 {
            first_id = id;
        }
        if let Decision::Denied { retry_after_ms, .. } = decision {
            retry_after = retry_after_ms;
        } else {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let decision = rate_limit_sliding(connection, sliding, 3, 1_000, &first_id).await?;
    println!(
        "  retry of request 1 with its id {}…: {} (no second admission)",
        &first_id[..8],
        describe(decision)
    );
    println!("  waiting {retry_after} ms for the oldest admission to leave the window");
    tokio::time::sleep(Duration::from_millis(retry_after + 10)).await;
    let decision = rate_limit_sliding(connection, sliding, 3, 1_000, &request_id()).await?;
    println!("  request 5: {}", describe(decision));

    // A burst: 1000 concurrent requests against a limit of 100.
    let burst = "rl:{demo-tenant}:burst";
    let () = redis::cmd("DEL").arg(burst).query_async(connection).await?;
    println!("burst on {burst}: 1000 concurrent requests, limit 100 per 60 s (fixed window)");
    let tasks: Vec<_> = (0..1_000)
        .map(|_| {
            let mut connection = connection.clone();
            tokio::spawn(async move { rate_limit_fixed(&mut connection, burst, 100, 60_000).await })
        })
        .collect();
    let mut allowed = 0;
    for task in tasks {
        if task.await??.is_allowed() {
            allowed += 1;
        }
    }
    println!("  {allowed} allowed, {} denied", 1_000 - allowed);
    Ok(())
}
