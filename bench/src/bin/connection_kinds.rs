//! A warm call through each connection kind, on both tokio runtime
//! flavors: the generated function against a hand-written `EVALSHA` on the
//! same connection.
//!
//! Run: `cargo run --release -p redis-script-bench --bin connection_kinds
//! [-- CALLS]`
//!
//! It starts a throwaway `redis-server` and a cluster of 3 primaries (the
//! tests' servers) and, on a current-thread runtime and on a multi-thread
//! runtime of 2 workers, calls `lua/release_lock.lua` one call at a time
//! through a `MultiplexedConnection`, a `ConnectionManager` and a cluster
//! connection. The two ways take turns in blocks of 500 calls, `CALLS`
//! each (20,000 unless given) after 2,000 of warm-up, so that a drift of
//! the machine touches both alike.

use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script::redis_script;
use redis_script_test::{RedisCluster, RedisServer};

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const LOCK: &str = "bench:{lock}";
const TOKEN: &str = "token-that-does-not-hold-it";
const BLOCK: usize = 500;
const WARM_UP: usize = 2_000;

/// The latencies of one way on one connection.
#[derive(Default)]
struct Latencies(Vec<Duration>);

impl Latencies {
    fn percentile(&self, percent: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted
            .get(rank.saturating_sub(1).min(sorted.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    }
}

async fn generated<C: ConnectionLike + Send>(connection: &mut C) -> Result<(), BoxError> {
    let released = release_lock(connection, LOCK, TOKEN).await?;
    assert_eq!(released, 0);
    Ok(())
}

async fn hand_written<C: ConnectionLike + Send>(connection: &mut C) -> Result<(), BoxError> {
    let released: i64 = redis::cmd("EVALSHA")
        .arg(release_lock::SCRIPT.sha1())
        .arg(1)
        .arg(LOCK)
        .arg(TOKEN)
        .query_async(connection)
        .await?;
    assert_eq!(released, 0);
    Ok(())
}

/// `calls` calls each way, in alternating blocks: (generated, hand-written).
async fn measure<C: ConnectionLike + Send>(
    connection: &mut C,
    calls: usize,
) -> Result<(Latencies, Latencies), BoxError> {
    for _ in 0..WARM_UP {
        generated(connection).await?;
        hand_written(connection).await?;
    }
    let (mut ours, mut theirs) = (Latencies::default(), Latencies::default());
    for block in 0..calls.div_ceil(BLOCK) * 2 {
        for _ in 0..BLOCK {
            let start = Instant::now();
            if block % 2 == 0 {
                generated(connection).await?;
                ours.0.push(start.elapsed());
            } else {
                hand_written(connection).await?;
                theirs.0.push(start.elapsed());
            }
        }
    }
    Ok((ours, theirs))
}

struct Row {
    runtime: &'static str,
    kind: &'static str,
    ours: Latencies,
    theirs: Latencies,
}

async fn every_kind(
    runtime: &'static str,
    server: &RedisServer,
    cluster: &RedisCluster,
    calls: usize,
) -> Result<Vec<Row>, BoxError> {
    let client = redis::Client::open(server.url())?;
    let mut rows = Vec::new();
    let mut multiplexed = client.get_multiplexed_async_connection().await?;
    let (ours, theirs) = measure(&mut multiplexed, calls).await?;
    rows.push(Row {
        runtime,
        kind: "`MultiplexedConnection`",
        ours,
        theirs,
    });
    let mut manager = redis::aio::ConnectionManager::new(client).await?;
    let (ours, theirs) = measure(&mut manager, calls).await?;
    rows.push(Row {
        runtime,
        kind: "`ConnectionManager`",
        ours,
        theirs,
    });
    let mut clustered = cluster.connection().await;
    let (ours, theirs) = measure(&mut clustered, calls).await?;
    rows.push(Row {
        runtime,
        kind: "cluster connection (3 primaries)",
        ours,
        theirs,
    });
    Ok(rows)
}

fn main() -> Result<(), BoxError> {
    let calls: usize = match std::env::args().nth(1) {
        Some(text) => text.parse()?,
        None => 20_000,
    };
    let server = RedisServer::start();
    let cluster = RedisCluster::start(3, 0);
    let mut rows = Vec::new();
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rows.extend(current_thread.block_on(every_kind("current-thread", &server, &cluster, calls))?);
    let multi_thread = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rows.extend(multi_thread.block_on(every_kind("multi-thread", &server, &cluster, calls))?);

    println!("### A warm call per connection kind ({calls} calls each way, one in flight)\n");
    println!(
        "| runtime | connection | generated p50 µs | hand-written p50 µs | p50 ratio | generated p99 µs | hand-written p99 µs | p99 ratio |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for row in rows {
        let micros = |latency: Duration| latency.as_secs_f64() * 1e6;
        let (p50, p50_theirs) = (
            micros(row.ours.percentile(50.0)),
            micros(row.theirs.percentile(50.0)),
        );
        let (p99, p99_theirs) = (
            micros(row.ours.percentile(99.0)),
            micros(row.theirs.percentile(99.0)),
        );
        println!(
            "| {} | {} | {p50:.1} | {p50_theirs:.1} | {:.2}× | {p99:.1} | {p99_theirs:.1} | {:.2}× |",
            row.runtime,
            row.kind,
            p50 / p50_theirs,
            p99 / p99_theirs,
        );
    }
    Ok(())
}
