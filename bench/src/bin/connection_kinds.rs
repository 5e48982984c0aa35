//! A warm call through each connection kind, on both tokio runtime
//! flavors: the generated function against a hand-written `EVALSHA` on the
//! same connection, with and without a deadline.
//!
//! Run: `cargo run --release -p redis-script-bench --bin connection_kinds
//! [-- CALLS]`, or `-- --only generated|hand-written [CALLS]` for one way
//! alone (to count it with `bench/count-instructions`), `-- --pairs
//! [CALLS]` for the pairs below alone, the deadline alone (the
//! hand-written call in `timeout`, against itself) and a calibration (the
//! hand-written call after 128 lines of code more, against itself: what a
//! line of code costs a call here), or `-- --cold [CALLS]` for the pairs
//! with cold caches (the client reads 4 MiB before each call).
//!
//! It starts a throwaway `redis-server` and a cluster of 3 primaries (the
//! tests' servers) and, on a current-thread runtime and on a multi-thread
//! runtime of 2 workers, calls `lua/release_lock.lua` one call at a time
//! through a `MultiplexedConnection`, a `ConnectionManager` and a cluster
//! connection, and the hand-written call inside `tokio::time::timeout` (the
//! deadline's part alone). The ways take turns call by call, each round
//! starting one way further on, `CALLS` each (20,000 unless given) after
//! 2,000 of warm-up, so that a drift of the machine and the order of the
//! calls touch all alike. The hand-written call is measured twice, as two
//! ways: the ratio of the two is this machine's noise floor, against which
//! the generated call's ratio is read. A second table has each script's
//! (`release_lock`, `transfer`) generated and hand-written call alone,
//! alternating 1:1, and the hand-written call against itself as the
//! control, five times `CALLS` each. A row without a client library (the
//! same `EVALSHA` bytes on a bare tokio `TcpStream`) shows what the runtime
//! and the socket cost alone.

use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script::redis_script;
use redis_script_test::{RedisCluster, RedisServer};

#[redis_script(path = "../lua/release_lock.lua", keys = 1)]
async fn release_lock(lock: &str, token: &str) -> i64;

#[redis_script(path = "../lua/transfer.lua", keys = 2)]
async fn transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const LOCK: &str = "bench:{lock}";
const TOKEN: &str = "token-that-does-not-hold-it";
/// The ways, in the order a round starts from: generated, hand-written,
/// hand-written again (the control), hand-written in `timeout`.
const WAYS: usize = 4;
const WARM_UP: usize = 2_000;
/// The accounts `transfer` moves 1 between, in one hash slot.
const SOURCE: &str = "bench:{account}:source";
const DESTINATION: &str = "bench:{account}:destination";
/// The pairs' calls are cut in this many blocks.
const BLOCKS: usize = 10;
/// Each pair takes this many times `CALLS`: the p99 of fewer calls moves
/// more than the 2% under test.
const PAIR_CALLS_FACTOR: usize = 5;

/// The latencies of one way on one connection.
#[derive(Default)]
struct Latencies(Vec<Duration>);

impl Latencies {
    /// Room for `calls` latencies, taken before timing: a vector that grows
    /// while calls are timed copies itself, which cools the caches for the
    /// next call, the other way's, and puts that call in its tail.
    fn with_capacity(calls: usize) -> Self {
        Self(Vec::with_capacity(calls))
    }

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

/// The hand-written call inside `tokio::time::timeout`, as the generated
/// call's deadline (10 s) wraps it: the deadline's part alone.
async fn hand_written_in_timeout<C: ConnectionLike + Send>(
    connection: &mut C,
) -> Result<(), BoxError> {
    tokio::time::timeout(Duration::from_secs(10), hand_written(connection)).await?
}

/// `calls` calls each way, taking turns call by call, each round
/// starting one way further on.
async fn measure<C: ConnectionLike + Send>(
    connection: &mut C,
    calls: usize,
) -> Result<[Latencies; WAYS], BoxError> {
    for _ in 0..WARM_UP {
        generated(connection).await?;
        hand_written(connection).await?;
        hand_written_in_timeout(connection).await?;
    }
    let mut ways: [Latencies; WAYS] = std::array::from_fn(|_| Latencies::with_capacity(calls));
    for round in 0..calls {
        for turn in 0..WAYS {
            let way = (round + turn) % WAYS;
            let start = Instant::now();
            match way {
                0 => generated(connection).await?,
                1 | 2 => hand_written(connection).await?,
                _ => hand_written_in_timeout(connection).await?,
            }
            ways[way].0.push(start.elapsed());
        }
    }
    Ok(ways)
}

/// A call alone against the hand-written `EVALSHA`, alternating 1:1.
#[derive(Clone, Copy)]
enum Pair {
    /// `release_lock`: generated against hand-written.
    ReleaseLock,
    /// `transfer`: generated against hand-written.
    Transfer,
    /// `release_lock` hand-written against itself: the noise floor.
    Control,
    /// `release_lock` hand-written in `tokio::time::timeout`, against
    /// hand-written: the deadline's timer alone.
    Deadline,
    /// `release_lock` hand-written after [`run_calibration_lines`], against
    /// hand-written: what a line of code more costs a call on this machine.
    Calibration,
}

/// Runs 128 jumps, each to the start of the next 64-byte line: 128 lines
/// of code more for the instruction cache to bring in, and almost no
/// instructions.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[allow(unsafe_code)]
fn run_calibration_lines() {
    // SAFETY: each jump lands on the label right after it; nothing is read
    // or written, no register or flag changes.
    unsafe {
        std::arch::asm!(
            ".rept 128",
            "jmp 2f",
            ".p2align 6",
            "2:",
            ".endr",
            options(nomem, nostack, preserves_flags)
        );
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn run_calibration_lines() {}

impl Pair {
    const ALL: [Pair; 3] = [Pair::ReleaseLock, Pair::Transfer, Pair::Control];

    fn name(self) -> &'static str {
        match self {
            Pair::ReleaseLock => "release_lock: generated / hand-written",
            Pair::Transfer => "transfer: generated / hand-written",
            Pair::Control => "control: hand-written / hand-written",
            Pair::Deadline => "deadline: hand-written in `timeout` / hand-written",
            Pair::Calibration => {
                "calibration: hand-written after 128 lines of code more / hand-written"
            }
        }
    }

    /// Way 0 is the call under test, way 1 the hand-written `EVALSHA`.
    async fn call<C: ConnectionLike + Send>(
        self,
        way: usize,
        connection: &mut C,
    ) -> Result<(), BoxError> {
        match (self, way) {
            (Pair::ReleaseLock, 0) => generated(connection).await,
            (Pair::Transfer, 0) => {
                transfer(connection, SOURCE, DESTINATION, 1).await?;
                Ok(())
            }
            (Pair::Transfer, _) => {
                let _: (i64, i64) = redis::cmd("EVALSHA")
                    .arg(transfer::SCRIPT.sha1())
                    .arg(2)
                    .arg(SOURCE)
                    .arg(DESTINATION)
                    .arg(1)
                    .query_async(connection)
                    .await?;
                Ok(())
            }
            (Pair::Deadline, 0) => hand_written_in_timeout(connection).await,
            (Pair::Calibration, 0) => {
                run_calibration_lines();
                hand_written(connection).await
            }
            (Pair::ReleaseLock | Pair::Control | Pair::Deadline | Pair::Calibration, _) => {
                hand_written(connection).await
            }
        }
    }
}

/// One pair's two ways, alternating 1:1 with each round starting with
/// the other, so that neither way's code runs colder (three of the four
/// ways in [`measure`] run the hand-written code). The calls are cut in
/// [`BLOCKS`] consecutive blocks, each block's percentiles compared on
/// their own: a drift of the machine between blocks then moves both ways
/// alike, and the spread of the block ratios shows how far one ratio can
/// be trusted.
///
/// With `cold`, the client reads that buffer through before each call,
/// untimed: the call then starts with the caches a server on the same
/// core would have left it.
async fn measure_pair<C: ConnectionLike + Send>(
    pair: Pair,
    connection: &mut C,
    calls: usize,
    cold: Option<&[u8]>,
) -> Result<Vec<[Latencies; 2]>, BoxError> {
    for _ in 0..WARM_UP {
        pair.call(0, connection).await?;
        pair.call(1, connection).await?;
    }
    let per_block = calls.div_ceil(BLOCKS);
    let mut blocks = Vec::with_capacity(BLOCKS);
    for _ in 0..BLOCKS {
        let mut ways: [Latencies; 2] = std::array::from_fn(|_| Latencies::with_capacity(per_block));
        for round in 0..per_block {
            for turn in 0..2 {
                let way = (round + turn) % 2;
                if let Some(buffer) = cold {
                    read_through(buffer);
                }
                let start = Instant::now();
                pair.call(way, connection).await?;
                ways[way].0.push(start.elapsed());
            }
        }
        blocks.push(ways);
    }
    Ok(blocks)
}

/// A `MultiplexedConnection` to `client`'s server, whose `transfer` source
/// holds enough for every transfer of a run.
async fn funded_connection(
    client: &redis::Client,
) -> Result<redis::aio::MultiplexedConnection, BoxError> {
    let mut connection = client.get_multiplexed_async_connection().await?;
    redis::cmd("SET")
        .arg(SOURCE)
        .arg(i64::MAX / 2)
        .exec_async(&mut connection)
        .await?;
    Ok(connection)
}

/// Bytes `--cold` reads before each call: eight times the L2 cache of a
/// core of the machine measured (512 KiB), so that the call finds little of
/// its code and data there.
const COLD_BYTES: usize = 4 << 20;

/// Reads one byte of each cache line of `buffer`.
fn read_through(buffer: &[u8]) {
    let mut sum = 0u8;
    for line in buffer.chunks(64) {
        sum = sum.wrapping_add(line[0]);
    }
    std::hint::black_box(sum);
}

/// `--pairs [CALLS]` and `--cold [CALLS]`: the pairs alone on a
/// `MultiplexedConnection`, on both runtime flavors, without the table of
/// connection kinds. With `cold`, each call comes after the client read
/// [`COLD_BYTES`]: what each way costs when its code and data must come
/// back into the caches, as in a call of the tail.
fn pairs_alone(calls: usize, cold: bool) -> Result<(), BoxError> {
    let server = RedisServer::start();
    let buffer: Option<Vec<u8>> = cold.then(|| (0..COLD_BYTES).map(|byte| byte as u8).collect());
    let buffer = buffer.as_deref();
    let mut pairs = Vec::new();
    for (runtime, mut builder) in [
        (
            "current-thread",
            tokio::runtime::Builder::new_current_thread(),
        ),
        ("multi-thread", {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(2);
            builder
        }),
    ] {
        builder.enable_all().build()?.block_on(async {
            let mut connection = funded_connection(&redis::Client::open(server.url())?).await?;
            // The deadline alone and the calibration, with warm caches
            // only, after the pairs.
            let parts = if cold {
                &[][..]
            } else {
                &[Pair::Deadline, Pair::Calibration][..]
            };
            for &pair in Pair::ALL.iter().chain(parts) {
                pairs.push(PairRow {
                    runtime,
                    pair,
                    blocks: measure_pair(pair, &mut connection, calls, buffer).await?,
                });
            }
            Ok::<(), BoxError>(())
        })?;
    }
    if cold {
        println!(
            "### Alone with cold caches, alternating 1:1 on a `MultiplexedConnection` ({calls} calls each way, {BLOCKS} blocks, {} MiB read before each call)\n",
            COLD_BYTES >> 20
        );
    } else {
        println!(
            "### Alone, alternating 1:1 on a `MultiplexedConnection` ({calls} calls each way, {BLOCKS} blocks)\n"
        );
    }
    print_pairs(&pairs);
    Ok(())
}

/// The same `EVALSHA` written and its reply read on a bare tokio
/// `TcpStream`, with no client library: what the runtime and the socket
/// cost alone.
async fn raw_round_trips(port: u16, calls: usize) -> Result<Latencies, BoxError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let request = redis::cmd("EVALSHA")
        .arg(release_lock::SCRIPT.sha1())
        .arg(1)
        .arg(LOCK)
        .arg(TOKEN)
        .get_packed_command();
    let mut reply = [0u8; 64];
    let mut latencies = Latencies::with_capacity(calls);
    for call in 0..WARM_UP + calls {
        let start = Instant::now();
        stream.write_all(&request).await?;
        let mut read = 0;
        // `:0\r\n`: the lock is not held by this token.
        while !reply[..read].ends_with(b"\r\n") {
            let more = stream.read(&mut reply[read..]).await?;
            if more == 0 || read + more == reply.len() {
                return Err("the server closed the connection or answered too much".into());
            }
            read += more;
        }
        if &reply[..read] != b":0\r\n" {
            return Err(format!(
                "unexpected reply {:?}",
                String::from_utf8_lossy(&reply[..read])
            )
            .into());
        }
        if call >= WARM_UP {
            latencies.0.push(start.elapsed());
        }
    }
    Ok(latencies)
}

struct Row {
    runtime: &'static str,
    kind: &'static str,
    /// Generated, hand-written, hand-written again, hand-written in
    /// `timeout`.
    ways: [Latencies; WAYS],
}

async fn every_kind(
    runtime: &'static str,
    server: &RedisServer,
    cluster: &RedisCluster,
    calls: usize,
) -> Result<(Vec<Row>, Vec<PairRow>), BoxError> {
    let client = redis::Client::open(server.url())?;
    let mut rows = Vec::new();
    let mut multiplexed = funded_connection(&client).await?;
    let ways = measure(&mut multiplexed, calls).await?;
    let mut pairs = Vec::new();
    for pair in Pair::ALL {
        pairs.push(PairRow {
            runtime,
            pair,
            blocks: measure_pair(pair, &mut multiplexed, calls * PAIR_CALLS_FACTOR, None).await?,
        });
    }
    // After the generated call's first use, which loaded the script.
    let raw = raw_round_trips(server.port(), calls).await?;
    rows.push(Row {
        runtime,
        kind: "bare tokio `TcpStream`, no client library",
        ways: [
            Latencies::default(),
            raw,
            Latencies::default(),
            Latencies::default(),
        ],
    });
    rows.push(Row {
        runtime,
        kind: "`MultiplexedConnection`",
        ways,
    });
    let mut manager = redis::aio::ConnectionManager::new(client).await?;
    rows.push(Row {
        runtime,
        kind: "`ConnectionManager`",
        ways: measure(&mut manager, calls).await?,
    });
    let mut clustered = cluster.connection().await;
    rows.push(Row {
        runtime,
        kind: "cluster connection (3 primaries)",
        ways: measure(&mut clustered, calls).await?,
    });
    Ok((rows, pairs))
}

struct PairRow {
    runtime: &'static str,
    pair: Pair,
    blocks: Vec<[Latencies; 2]>,
}

impl PairRow {
    /// Both ways over all blocks.
    fn whole(&self) -> [Latencies; 2] {
        let mut whole: [Latencies; 2] = Default::default();
        for block in &self.blocks {
            for (way, latencies) in block.iter().enumerate() {
                whole[way].0.extend_from_slice(&latencies.0);
            }
        }
        whole
    }

    /// Way 0 over way 1 at `percent`: over all calls, then the median,
    /// lowest and highest of the blocks' ratios.
    fn ratios(&self, percent: f64) -> (f64, f64, f64, f64) {
        let ratio = |ways: &[Latencies; 2]| {
            ways[0].percentile(percent).as_secs_f64() / ways[1].percentile(percent).as_secs_f64()
        };
        let mut per_block: Vec<f64> = self.blocks.iter().map(ratio).collect();
        per_block.sort_by(f64::total_cmp);
        let median = per_block
            .get(per_block.len() / 2)
            .copied()
            .unwrap_or(f64::NAN);
        let lowest = per_block.first().copied().unwrap_or(f64::NAN);
        let highest = per_block.last().copied().unwrap_or(f64::NAN);
        (ratio(&self.whole()), median, lowest, highest)
    }
}

/// `--only generated|hand-written [CALLS]`: one way alone on a
/// current-thread runtime and a `MultiplexedConnection`, and nothing
/// else, so that `perf stat` counts what each way costs per call.
fn only(way: &str, calls: usize) -> Result<(), BoxError> {
    let way = match way {
        "generated" => 0,
        "hand-written" => 1,
        other => return Err(format!("--only generated or hand-written, not {other}").into()),
    };
    let server = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = redis::Client::open(server.url())?;
        let mut connection = client.get_multiplexed_async_connection().await?;
        // Loads the script.
        generated(&mut connection).await?;
        for _ in 0..calls {
            Pair::ReleaseLock.call(way, &mut connection).await?;
        }
        Ok::<(), BoxError>(())
    })?;
    println!("{calls} calls");
    Ok(())
}

fn main() -> Result<(), BoxError> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, way, rest @ ..] = arguments.as_slice()
        && flag == "--only"
    {
        let calls = rest.first().map_or(Ok(100_000), |text| text.parse())?;
        return only(way, calls);
    }
    if let [flag, rest @ ..] = arguments.as_slice()
        && (flag == "--pairs" || flag == "--cold")
    {
        let calls = rest.first().map_or(Ok(20_000), |text| text.parse())?;
        return pairs_alone(calls, flag == "--cold");
    }
    let calls: usize = match arguments.first() {
        Some(text) => text.parse()?,
        None => 20_000,
    };
    let server = RedisServer::start();
    let cluster = RedisCluster::start(3, 0);
    let mut rows = Vec::new();
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut pairs = Vec::new();
    let (current_rows, current_pairs) =
        current_thread.block_on(every_kind("current-thread", &server, &cluster, calls))?;
    rows.extend(current_rows);
    pairs.extend(current_pairs);
    let multi_thread = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (multi_rows, multi_pairs) =
        multi_thread.block_on(every_kind("multi-thread", &server, &cluster, calls))?;
    rows.extend(multi_rows);
    pairs.extend(multi_pairs);

    println!("### A warm call per connection kind ({calls} calls each way, one in flight)\n");
    println!(
        "| runtime | connection | p50 µs: generated / hand-written / again / in `timeout` | p50: generated, control | p99 µs: generated / hand-written / again / in `timeout` | p99: generated, control |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    let micros = |latency: Duration| latency.as_secs_f64() * 1e6;
    for row in rows {
        let at = |percent: f64| {
            row.ways
                .each_ref()
                .map(|way| micros(way.percentile(percent)))
        };
        let (p50, p99) = (at(50.0), at(99.0));
        // The bare round trip has the hand-written column only.
        if row.ways[0].0.is_empty() {
            println!(
                "| {} | {} | – / {:.1} / – / – | | – / {:.1} / – / – | |",
                row.runtime, row.kind, p50[1], p99[1]
            );
            continue;
        }
        // Each against the hand-written call; the control is the same
        // hand-written call measured as another way.
        let cells = |values: [f64; WAYS]| {
            (
                format!(
                    "{:.1} / {:.1} / {:.1} / {:.1}",
                    values[0], values[1], values[2], values[3]
                ),
                format!(
                    "{:.3}×, {:.3}×",
                    values[0] / values[1],
                    values[2] / values[1]
                ),
            )
        };
        let ((p50_values, p50_ratios), (p99_values, p99_ratios)) = (cells(p50), cells(p99));
        println!(
            "| {} | {} | {p50_values} | {p50_ratios} | {p99_values} | {p99_ratios} |",
            row.runtime, row.kind,
        );
    }
    let pair_calls = calls * PAIR_CALLS_FACTOR;
    println!(
        "\n### Alone, alternating 1:1 on a `MultiplexedConnection` ({pair_calls} calls each way, {BLOCKS} blocks)\n"
    );
    print_pairs(&pairs);
    Ok(())
}

/// The pairs' table.
fn print_pairs(pairs: &[PairRow]) {
    let micros = |latency: Duration| latency.as_secs_f64() * 1e6;
    println!(
        "| runtime | pair | p50 µs | p50 ratio: all calls; blocks' median [range] | p99 µs | p99 ratio: all calls; blocks' median [range] |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in pairs {
        let whole = row.whole();
        let values = |percent: f64| {
            format!(
                "{:.1} / {:.1}",
                micros(whole[0].percentile(percent)),
                micros(whole[1].percentile(percent))
            )
        };
        let ratios = |percent: f64| {
            let (all, median, lowest, highest) = row.ratios(percent);
            format!("{all:.3}×; {median:.3}× [{lowest:.3}–{highest:.3}]")
        };
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            row.runtime,
            row.pair.name(),
            values(50.0),
            ratios(50.0),
            values(99.0),
            ratios(99.0)
        );
    }
}
