//! Side-by-side benchmark of the ways to call a Redis Lua script from Rust,
//! in one run against one server:
//!
//! * the function `#[redis_script]` generates,
//! * a hand-written `redis::cmd("EVALSHA")` with the SHA1 precomputed,
//! * redis-rs `Script::key(…).arg(…).invoke_async`,
//! * `redis-benchmark` sending the same `EVALSHA`.
//!
//! It prints Markdown: warm-call latency and throughput (sequential and
//! concurrent), the commands each client sends for a cold call (from
//! `INFO commandstats`), and the client-side cost of encoding a call.
//! This is a program, not a test: nothing here asserts on timings.
//!
//! `cargo run --release -p redis-script-bench -- --help`

mod batches;
mod cli;
mod cold;
mod encode;
mod exactly_once;
mod external;
mod functions;
mod instrumentation;
mod measure;
mod replicas;
mod report;
mod server_time;
mod variants;

use std::process::ExitCode;
use std::time::Duration;

use redis_script_test::RedisServer;

use crate::measure::{Plan, Summary};
use crate::report::{Facts, WarmRow};
use crate::variants::{Variant, Workload};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a request may wait for its reply before the run fails.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let options = match cli::parse(std::env::args().skip(1)) {
        Ok(cli::Request::Run(options)) => options,
        Ok(cli::Request::Help) => {
            print!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(cli::Request::TelemetryRows(iterations)) => {
            for row in instrumentation::this_build(iterations) {
                println!("{}", row.to_line());
            }
            return ExitCode::SUCCESS;
        }
        Err(text) => {
            eprintln!("{text}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Where the server is, and the throwaway one when this run started it
/// (stopped when dropped).
struct Target {
    url: String,
    server: Option<RedisServer>,
}

impl Target {
    fn from_env() -> Target {
        match std::env::var("REDIS_URL") {
            Ok(url) if !url.is_empty() => {
                eprintln!("using the Redis server at REDIS_URL={url}");
                Target { url, server: None }
            }
            _ => {
                let server = RedisServer::start();
                eprintln!(
                    "REDIS_URL is not set: started a throwaway redis-server at {} (stopped on exit)",
                    server.addr()
                );
                Target {
                    url: server.url(),
                    server: Some(server),
                }
            }
        }
    }
}

fn run(options: &cli::Options) -> Result<(), BoxError> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (mut builder, runtime_label) = if options.current_thread {
        (
            tokio::runtime::Builder::new_current_thread(),
            "tokio current-thread runtime".to_owned(),
        )
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(cores);
        (
            builder,
            format!("tokio multi-thread runtime, {cores} workers"),
        )
    };
    let runtime = builder.enable_all().build()?;
    let plan = Plan {
        calls: options.calls,
        warmup: options.warmup,
        rounds: options.rounds,
    };
    if options.only_replicas {
        let replicas = replica_measurements(&runtime, options, plan);
        runtime.shutdown_background();
        println!("## redis-script benchmark: reads on replicas\n");
        println!(
            "- machine: {cores} cores, {}, {}, load average {} at start\n\
             - client: build profile {}, {runtime_label}, response timeout {} s\n",
            Facts::cpu_model(),
            Facts::kernel(),
            Facts::load(),
            Facts::profile(),
            RESPONSE_TIMEOUT.as_secs()
        );
        print_replicas(&replicas?, options);
        return Ok(());
    }
    let target = Target::from_env();
    let network = runtime.block_on(network_measurements(options, &target, cores, runtime_label));
    // The standalone server is stopped before the cluster starts: they
    // would share the same 2 cores for nothing.
    drop(target);
    let replicas = match network {
        Ok(_) => replica_measurements(&runtime, options, plan),
        Err(_) => Ok(Err("not run".to_owned())),
    };
    runtime.shutdown_background();
    let network = network?;
    let replicas = replicas?;

    eprintln!(
        "encoding: {} iterations per row…",
        options.encode_iterations
    );
    let encoding = encode::encoding(options.encode_iterations);
    eprintln!(
        "instrumentation: {} iterations per row…",
        options.encode_iterations / 4
    );
    let instrumentation = instrumentation::both_builds(options.encode_iterations / 4);
    let breakdown = instrumentation::breakdown(options.encode_iterations / 4);

    println!("## redis-script benchmark\n");
    print!("{}", network.facts.render());
    println!();
    println!("### Warm calls (script cached on the server)\n");
    print!("{}", report::warm_table(&network.warm));
    println!(
        "\nSequential rows: one connection, one call in flight. Concurrent rows: {} tokio tasks \
         sharing one `MultiplexedConnection` (redis-rs writes their commands to one socket); \
         redis-benchmark opens {} connections instead, one request in flight on each. \
         Latency is measured per call around the `.await`; calls/s is calls over wall time.\n",
        options.tasks, options.tasks
    );
    println!("### What the source sent costs the server\n");
    match &network.server_time {
        Ok(rows) => print!("{}", report::server_time_table(rows)),
        Err(reason) => println!("{reason}"),
    }
    println!(
        "\nThe same `EVALSHA` of each `.lua` file as written (what the hand-written rows send) and \
         as the generated call sends it: run under `xpcall`, so that every error it ends with, \
         returned (`~CODE`) or raised (`^CODE … @line`), is marked and can never pass for a \
         refusal of the server. Microseconds per call \
         as the server counts them (`INFO commandstats`), {} calls per source in pipelines of 100.\n",
        options.calls
    );
    println!(
        "### Batches of {} `transfer` calls on a warm server\n",
        batches::CALLS_PER_BATCH
    );
    print!("{}", report::batch_table(&network.batches));
    println!(
        "\nOne batch in flight; latency per batch. Request bytes: the RESP the batch writes.\n"
    );
    println!("### A function of a library versus a script, same logic, warm\n");
    print!("{}", report::function_table(&network.functions));
    println!(
        "\nThe fixed-window limiter of `lua/quota_lib.lua` and `lua/rate_limit_fixed.lua`, on a full \
         window (every call GET, PTTL, DENIED); one call in flight, the three ways taking turns.\n"
    );
    let (once_rows, record) = &network.exactly_once;
    println!("### `exactly_once`: the same call with and without a call id, warm\n");
    print!("{}", report::function_table(once_rows));
    println!(
        "\n`lua/transfer.lua` (DECRBY, INCRBY); one call in flight, the three ways taking turns. \
         One record: `MEMORY USAGE` {} bytes (key {} bytes, recorded reply {} bytes, \
         plus the expiry and the server's overhead).\n",
        record.memory_usage, record.key_bytes, record.value_bytes
    );
    println!(
        "### Cold calls (`SCRIPT FLUSH`, `CONFIG RESETSTAT`, then the calls; counts from `INFO commandstats`)\n"
    );
    match &network.cold {
        Ok(rows) => print!("{}", report::cold_table(rows)),
        Err(reason) => println!("{reason}"),
    }
    println!(
        "\nRound trips are counted client-side (requests handed to the connection; a pipeline is one). \
         A failed call is the server's NOSCRIPT reply.\n"
    );
    print_replicas(&replicas, options);
    println!(
        "### Client-side cost of one call, no network ({} iterations)\n",
        options.encode_iterations
    );
    print!("{}", report::encode_table(&encoding));
    println!(
        "\nBuild: the value holding the encoded command; pack: plus the RESP bytes written to the \
         socket (what `query_async` does on send). ns: per call, fastest of 10 batches. \
         Allocs: heap allocations (and reallocations) per call.\n\
         ¹ redis-rs builds its `EVALSHA` `Cmd` inside `invoke_async` (`eval_cmd` is private), \
         so only the invocation is measured; that `Cmd` (sized exactly: 2 allocations) and its \
         packing come on top at call time."
    );
    println!(
        "\n### Telemetry cost of one call, no network ({} iterations)\n",
        options.encode_iterations / 4
    );
    print!("{}", report::instrumentation_table(&instrumentation));
    println!(
        "\nA blocking call of `lua/rate_limit_fixed.lua` on a connection that answers `DENIED` at once: \
         build, pack, reply, decode. The rows with the `metrics` feature come from a second \
         build of this program (`--features telemetry`), run by this one on the same machine."
    );
    println!(
        "\n### Where a warm call's client-side time goes, no network ({} iterations)\n",
        options.encode_iterations / 4
    );
    print!("{}", report::breakdown_table(&breakdown));
    println!(
        "\nThe call of `lua/rate_limit_fixed.lua` on an async connection that answers `DENIED` \
         canned, at once or after one pending poll (as a reply from the network does), one \
         `block_on` per call on each runtime flavor; ns per call, fastest of 10 batches; \
         allocations of the first column. The last three rows are parts of a call alone: the \
         `block_on` every row pays, the deadline's timer (armed only when the answer is \
         pending) and the call's span with no subscriber."
    );
    Ok(())
}

/// The replica table, or why it was skipped; `Err` when it failed.
fn replica_measurements(
    runtime: &tokio::runtime::Runtime,
    options: &cli::Options,
    plan: Plan,
) -> Result<Result<replicas::ReplicaTable, String>, BoxError> {
    let target = match replicas::Target::from_env(options.flush_scripts) {
        Ok(target) => target,
        Err(reason) => return Ok(Err(reason)),
    };
    let table = runtime.block_on(replicas::measure(&target, plan, options.tasks))?;
    Ok(Ok(table))
}

fn print_replicas(table: &Result<replicas::ReplicaTable, String>, options: &cli::Options) {
    println!(
        "### A read-only script on {} primaries with {} replica each\n",
        replicas::PRIMARIES,
        replicas::REPLICAS_PER_PRIMARY
    );
    let table = match table {
        Ok(table) => table,
        Err(reason) => {
            println!("{reason}\n");
            return;
        }
    };
    print!("{}", report::replica_table(table));
    println!(
        "\n`lua/versioned_get.lua` (`EVALSHA_RO`) through the generated function on a redis-rs \
         cluster connection, over {} documents with a hash tag each (so on every primary's \
         slots), written first; the replicas had applied the writes before the reads. \
         \"prefer replica\": the client built with `read_routing_strategy(\
         RoundRobinReplicaStrategy::default())`; \"primary only\": the default client. \
         Cluster: redis-server {}, {}. {} measured calls per row after {} warm-up calls, \
         in {} rounds, the two clients taking turns; {} tasks share one cluster connection \
         in the concurrent rows. \
         Node columns: the calls each node ran as `evalsha_ro` + `eval_ro` (`INFO \
         commandstats`, `CONFIG RESETSTAT` before each client's share of a round), and any \
         `evalsha`/`eval`; `replica N` follows `primary N`, and `primary 1` serves the lowest \
         slots.\n",
        replicas::DOCUMENTS,
        table.redis_version,
        if table.throwaway {
            "a throwaway cluster on 127.0.0.1 started by this run, on the same machine as the client"
        } else {
            "REDIS_CLUSTER_URL"
        },
        options.calls,
        options.warmup,
        options.rounds,
        options.tasks,
    );
}

struct Network {
    facts: Facts,
    warm: Vec<WarmRow>,
    batches: Vec<batches::BatchRow>,
    functions: Vec<functions::FunctionRow>,
    exactly_once: (Vec<functions::FunctionRow>, exactly_once::RecordSize),
    cold: Result<Vec<cold::ColdRow>, String>,
    /// The server's time per call of each source, when stats may be reset.
    server_time: Result<Vec<server_time::ServerTimeRow>, String>,
}

async fn network_measurements(
    options: &cli::Options,
    target: &Target,
    cores: usize,
    runtime: String,
) -> Result<Network, BoxError> {
    let client = redis::Client::open(target.url.as_str())?;
    // redis-rs fails a request after 500 ms by default; on a busy machine
    // one stalled call would abort the run instead of showing in the p99.
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(Some(RESPONSE_TIMEOUT));
    let mut connection = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    let mut admin = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;

    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut admin)
        .await?;
    let redis_version = info
        .lines()
        .find_map(|line| line.trim_end().strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .to_owned();
    let redis_benchmark = external::version();
    let facts = Facts {
        cores,
        cpu: Facts::cpu_model(),
        kernel: Facts::kernel(),
        load: Facts::load(),
        redis_version,
        server: if target.server.is_some() {
            "throwaway, started by this run, 127.0.0.1".to_owned()
        } else {
            "REDIS_URL".to_owned()
        },
        redis_benchmark: match &redis_benchmark {
            Ok(version) => version.clone(),
            Err(reason) => reason.clone(),
        },
        profile: Facts::profile(),
        runtime: format!(
            "{runtime}, response timeout {} s (redis-rs default: 500 ms)",
            RESPONSE_TIMEOUT.as_secs()
        ),
        plan: format!(
            "{} measured calls per row after {} warm-up calls, in {} rounds taking turns; \
             concurrency {}",
            options.calls, options.warmup, options.rounds, options.tasks
        ),
    };

    variants::prepare_keys(&mut admin).await?;
    let measured = cold_and_warm(
        options,
        target,
        &mut connection,
        &mut admin,
        &redis_benchmark,
    )
    .await;
    // Clean up also after a failure (matters with REDIS_URL).
    let deleted = variants::delete_keys(&mut admin).await;
    let (cold, warm, batches, server_time) = measured?;
    deleted?;
    eprintln!("functions: {} calls per row…", options.calls);
    let functions = functions::measure(&mut connection, options.calls).await?;
    eprintln!("exactly-once: {} calls per row…", options.calls);
    let exactly_once = exactly_once::measure(&mut connection, options.calls).await?;
    Ok(Network {
        facts,
        warm,
        batches,
        functions,
        exactly_once,
        cold,
        server_time,
    })
}

/// Cold-call counts, then the warm measurements of every workload.
async fn cold_and_warm(
    options: &cli::Options,
    target: &Target,
    connection: &mut redis::aio::MultiplexedConnection,
    admin: &mut redis::aio::MultiplexedConnection,
    redis_benchmark: &Result<String, String>,
) -> Result<
    (
        Result<Vec<cold::ColdRow>, String>,
        Vec<WarmRow>,
        Vec<batches::BatchRow>,
        Result<Vec<server_time::ServerTimeRow>, String>,
    ),
    BoxError,
> {
    let cold = if target.server.is_some() || options.flush_scripts {
        eprintln!("cold calls…");
        Ok(cold::cold_calls(connection, admin).await?)
    } else {
        Err(
            "Skipped: this needs `SCRIPT FLUSH` and `CONFIG RESETSTAT` on the REDIS_URL server; \
             pass `--flush-scripts` to allow it, or unset REDIS_URL to use a throwaway server."
                .to_owned(),
        )
    };

    // The hand-written EVALSHA has no fallback: load both files first.
    load_scripts(admin).await?;
    for workload in Workload::ALL {
        for variant in Variant::ALL {
            variants::call_once(connection, workload, variant).await?;
        }
    }

    let plan = Plan {
        calls: options.calls,
        warmup: options.warmup,
        rounds: options.rounds,
    };
    let mut warm = Vec::new();
    for workload in Workload::ALL {
        eprintln!("{}: sequential…", workload.label());
        let sequential =
            measure::sequential(&mut variants::ways(connection, workload), plan).await?;
        let external = external_row(redis_benchmark, &target.url, workload, 1, plan).await;
        push_rows(
            &mut warm,
            workload,
            "1 (sequential)",
            sequential,
            external,
            "1 connection",
        );

        eprintln!("{}: {} concurrent tasks…", workload.label(), options.tasks);
        let concurrent =
            measure::concurrent(&variants::ways(connection, workload), plan, options.tasks).await?;
        let external =
            external_row(redis_benchmark, &target.url, workload, options.tasks, plan).await;
        push_rows(
            &mut warm,
            workload,
            &format!("{} concurrent", options.tasks),
            concurrent,
            external,
            &format!("{} connections", options.tasks),
        );
    }

    let batch_count = (options.calls / batches::CALLS_PER_BATCH).max(2);
    eprintln!(
        "batches: {batch_count} of {} transfers per shape…",
        batches::CALLS_PER_BATCH
    );
    let batches = batches::measure(connection, batch_count).await?;
    // The batches' cold row flushed the cache: the server-time part sends
    // `EVALSHA` with no fallback.
    load_scripts(admin).await?;
    let server_time = if target.server.is_some() || options.flush_scripts {
        eprintln!("server time: {} calls per source…", options.calls);
        Ok(server_time::measure(admin, options.calls, options.rounds).await?)
    } else {
        Err(
            "Skipped: this needs `CONFIG RESETSTAT` on the REDIS_URL server; pass \
             `--flush-scripts` to allow it, or unset REDIS_URL to use a throwaway server."
                .to_owned(),
        )
    };
    Ok((cold, warm, batches, server_time))
}

/// `redis-benchmark` with `clients` connections, off the runtime's threads.
async fn external_row(
    available: &Result<String, String>,
    url: &str,
    workload: Workload,
    clients: usize,
    plan: Plan,
) -> Result<Summary, String> {
    if available.is_err() {
        return Err("not run: redis-benchmark is unavailable (see above)".to_owned());
    }
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        external::run(&url, workload, clients, plan.calls, plan.warmup)
            .map_err(|error| error.to_string())
    })
    .await
    .map_err(|error| error.to_string())?
}

fn push_rows(
    rows: &mut Vec<WarmRow>,
    workload: Workload,
    in_flight: &str,
    summaries: Vec<Summary>,
    external: Result<Summary, String>,
    external_in_flight: &str,
) {
    let baseline = Variant::ALL
        .iter()
        .position(|variant| *variant == Variant::HandWritten)
        .and_then(|index| summaries.get(index))
        .map(|summary| summary.p50_us);
    for (variant, summary) in Variant::ALL.into_iter().zip(summaries) {
        rows.push(WarmRow {
            workload,
            in_flight: in_flight.to_owned(),
            client: variant.label().to_owned(),
            summary: Ok(summary),
            baseline_p50_us: baseline,
        });
    }
    rows.push(WarmRow {
        workload,
        in_flight: format!("{in_flight}, {external_in_flight}"),
        client: "`redis-benchmark` (C, same `EVALSHA`)".to_owned(),
        summary: external,
        baseline_p50_us: baseline,
    });
}

/// Loads both files as written and the generated calls' sources, checking
/// their compile-time SHA1: the hand-written `EVALSHA`s have no fallback.
async fn load_scripts(admin: &mut redis::aio::MultiplexedConnection) -> Result<(), BoxError> {
    for workload in Workload::ALL {
        for (source, expected) in [
            (workload.file(), workload.file_sha1()),
            (workload.script().source(), workload.script().sha1()),
        ] {
            let sha: String = redis::cmd("SCRIPT")
                .arg("LOAD")
                .arg(source)
                .query_async(admin)
                .await?;
            if sha != expected {
                return Err(format!("SCRIPT LOAD answered {sha}, expected {expected}").into());
            }
        }
    }
    Ok(())
}
