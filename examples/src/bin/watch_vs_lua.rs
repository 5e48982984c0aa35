//! The same counter increment with `WATCH`/`MULTI`/`EXEC` retries and with a
//! Lua script: 10 workers × 100 increments each, on the same key.
//!
//! Run: `cargo run -p redis-script-examples --bin watch_vs_lua`
//! (uses `REDIS_URL` when set, else a throwaway `redis-server`).

use std::time::{Duration, Instant};

use redis_script_examples::workflows::counter::{counter_increment, increment_with_watch};
use redis_script_test::RedisServer;

const WORKERS: u64 = 10;
const INCREMENTS: u64 = 100;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // WATCH needs one connection per worker, so this program opens its own.
    let (client, _server) = match std::env::var("REDIS_URL") {
        Ok(url) => {
            println!("using Redis at {url} (REDIS_URL)");
            (redis::Client::open(url)?, None)
        }
        Err(_) => {
            let server = RedisServer::start();
            println!(
                "REDIS_URL is not set: started a throwaway redis-server at {} (stopped on exit)",
                server.addr()
            );
            (server.client(), Some(server))
        }
    };
    let mut connection = client.get_multiplexed_async_connection().await?;
    let (watched, scripted) = ("counter:{demo}:watch", "counter:{demo}:lua");
    let () = redis::cmd("DEL")
        .arg(watched)
        .arg(scripted)
        .query_async(&mut connection)
        .await?;

    println!(
        "WATCH/MULTI/EXEC: {WORKERS} workers × {INCREMENTS} increments of {watched}, one connection each"
    );
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let mut own = client.get_multiplexed_async_connection().await?;
        workers.push(tokio::spawn(async move {
            let mut retries = 0;
            for _ in 0..INCREMENTS {
                retries += increment_with_watch(&mut own, watched, 1).await?.retries;
            }
            Ok::<u64, redis::RedisError>(retries)
        }));
    }
    let mut retries = 0;
    for worker in workers {
        retries += worker.await??;
    }
    let watch_elapsed = started.elapsed();
    let value: i64 = redis::cmd("GET")
        .arg(watched)
        .query_async(&mut connection)
        .await?;
    println!(
        "  final value {value}, {retries} WATCH retries (aborted EXECs), {}",
        timing(watch_elapsed)
    );

    println!(
        "Lua script: {WORKERS} workers × {INCREMENTS} increments of {scripted}, one shared multiplexed connection"
    );
    let started = Instant::now();
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let mut shared = connection.clone();
            tokio::spawn(async move {
                for _ in 0..INCREMENTS {
                    counter_increment(&mut shared, scripted, 1).await?;
                }
                Ok::<(), redis_script::Error>(())
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    let lua_elapsed = started.elapsed();
    let value: i64 = redis::cmd("GET")
        .arg(scripted)
        .query_async(&mut connection)
        .await?;
    println!("  final value {value}, 0 retries, {}", timing(lua_elapsed));
    println!(
        "WATCH/MULTI/EXEC took {:.1}× the time of the script (one run, not a benchmark)",
        watch_elapsed.as_secs_f64() / lua_elapsed.as_secs_f64()
    );
    Ok(())
}

fn timing(elapsed: Duration) -> String {
    let increments = (WORKERS * INCREMENTS) as f64;
    format!(
        "{:.1} ms wall time ({:.0} increments/s)",
        elapsed.as_secs_f64() * 1e3,
        increments / elapsed.as_secs_f64()
    )
}
