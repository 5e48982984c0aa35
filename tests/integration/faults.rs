//! Fault injection: every scenario compares a server-side execution log
//! (each test script runs `HINCRBY <log> <call id> 1`) with what each
//! caller was told, and checks the runtime's promises: an `Ok` call ran
//! exactly once, no call ran twice unless the documented client behaviour
//! says so, and an error with `may_have_executed() == false` did not run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis::cluster::ClusterClientBuilder;
use redis_script::{Batch, Error, RetryRefusals, ServerFeature};
use redis_script_test::{CommandStat, RedisCluster, RedisServer, Stats, parse_commandstats};
use redis_script_tests::faults::{log_call, shebang_log_call, write_then_busy, write_then_error};

use crate::fault_kit::{
    Called, Ledger, Load, PAUSE_MS, PAUSED_CALLS, PAUSED_RESPONSE_TIMEOUT, RETRY_REFUSALS, Tally,
    cluster_connection, during_pause, key_served_elsewhere, kill_and_restart, kill_primary_of_slot,
    manual_failover_under_load, without_client_retries,
};
use crate::releases::{before_redis_6_2, before_redis_7};

/// The counter every test script increments.
pub(crate) const COUNTER: &str = "{t}:n";
/// The execution log: call id => executions.
pub(crate) const LOG: &str = "{t}:log";

/// What one caller was told, by call id.
pub(crate) type Outcome = (String, Result<(), Arc<Error>>);
/// What each caller was told.
type Outcomes = Vec<Outcome>;

impl Called for Outcome {
    fn id(&self) -> &str {
        &self.0
    }

    fn error(&self) -> Option<&Error> {
        self.1.as_ref().err().map(Arc::as_ref)
    }
}

/// One caller's outcome, for [`Outcomes`].
pub(crate) fn outcome<T>(result: Result<T, Error>) -> Result<(), Arc<Error>> {
    result.map(|_| ()).map_err(Arc::new)
}

/// The execution log, read after the run.
pub(crate) async fn executions<C: ConnectionLike>(connection: &mut C) -> Ledger {
    Ledger::read(connection, LOG, None).await
}

// ---------------------------------------------------------------------------
// 1. Error replies that look like refusals
// ---------------------------------------------------------------------------

/// Error replies a script computes at run time, worded like the server's
/// refusals (some exactly so).
const REFUSAL_LOOKALIKES: &[&str] = &[
    "BUSY",
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.",
    "OOM",
    "OOM command not allowed when used memory > 'maxmemory'.",
    "NOPERM",
    "NOPERM User default has no permissions to run the 'evalsha' command",
    "NOAUTH",
    "NOAUTH Authentication required.",
    "WRONGPASS",
    "WRONGPASS invalid username-password pair or user is disabled.",
    "CROSSSLOT",
    "CROSSSLOT Keys in request don't hash to the same slot",
    "EXECABORT",
    "EXECABORT Transaction discarded because of previous errors.",
    "MISCONF",
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
    "NOREPLICAS",
    "NOREPLICAS Not enough good replicas to write.",
    "ERR unknown command 'EVALSHA_RO', with args beginning with: ",
    "ERR Number of keys can't be greater than number of args",
];

#[tokio::test]
async fn computed_error_replies_that_look_like_refusals_say_the_script_ran() {
    let began = Instant::now();
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let mut outcomes = Outcomes::new();
    let mut wrong_variant = Vec::new();
    // Twice each: cold (NOSCRIPT, then EVAL) and warm (EVALSHA).
    for round in 0..2 {
        for (index, reply) in REFUSAL_LOOKALIKES.iter().enumerate() {
            let id = format!("lookalike-{round}-{index}");
            let result = write_then_error(&mut connection, COUNTER, LOG, &id, reply).await;
            let error = result.expect_err("the script always returns an error");
            // A reply without a message reaches the client as `ERR <word>`
            // from Redis 7.0 on, and as the word alone before.
            let code = match reply.split_once(' ') {
                Some((code, _)) => code,
                None if before_redis_7() => reply,
                None => "ERR",
            };
            if !matches!(&error, Error::Script { code: got, .. } if got == code)
                || !error.may_have_executed()
            {
                wrong_variant.push(format!("{reply:?} => {error:?}"));
            }
            outcomes.push((id, Err(Arc::new(error))));
        }
    }
    for round in 0..2 {
        let id = format!("literal-busy-{round}");
        let error = write_then_busy(&mut connection, COUNTER, LOG, &id)
            .await
            .expect_err("the script always returns BUSY");
        if !matches!(&error, Error::Script { code, .. } if code == "BUSY") {
            wrong_variant.push(format!("literal BUSY => {error:?}"));
        }
        outcomes.push((id, Err(Arc::new(error))));
    }
    let log = executions(&mut connection).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("computed_error_replies", "", began.elapsed());
    tally.assert_exactly_once("computed_error_replies");
    assert!(wrong_variant.is_empty(), "{wrong_variant:#?}");
    assert_eq!(tally.executions, outcomes.len() as i64, "{tally:?}");
}

/// A script whose error texts are computed at run time may reply with the
/// server's very words for `NOSCRIPT`; the source sent marks the replies it
/// returns, so that reply is never taken for a cache miss: one execution
/// per call, reported as run, and the script is sent like any other
/// (`EVALSHA`, and `EVAL` once on the server's own `NOSCRIPT`).
#[tokio::test]
async fn computed_noscript_reply_is_not_taken_for_the_servers() {
    let began = Instant::now();
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    server.reset_stats();
    let mut outcomes = Outcomes::new();
    for round in 0..2 {
        let id = format!("noscript-{round}");
        let result = write_then_error(
            &mut connection,
            COUNTER,
            LOG,
            &id,
            "NOSCRIPT No matching script. Please use EVAL.",
        )
        .await;
        eprintln!("{id}: {result:?}");
        outcomes.push((id, outcome(result)));
    }
    let log = executions(&mut connection).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("computed_noscript_reply", "", began.elapsed());
    tally.assert_exactly_once("computed_noscript_reply");
    assert_eq!(tally.executions, 2, "{tally:?}");
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (2, 1),
        "one cache miss, then warm"
    );
}

#[tokio::test]
async fn out_of_memory_refuses_a_shebang_script_before_it_runs() {
    let began = Instant::now();
    let server =
        RedisServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", "noeviction"]);
    let mut connection = server.connection().await;
    let value = "x".repeat(16 * 1024);
    let mut full = false;
    for index in 0..1000 {
        let written: redis::RedisResult<()> = redis::cmd("SET")
            .arg(format!("fill:{index}"))
            .arg(&value)
            .query_async(&mut connection)
            .await;
        if let Err(error) = written {
            assert_eq!(error.code(), Some("OOM"), "{error}");
            full = true;
            break;
        }
    }
    assert!(full, "1 MB filled up within 1000 writes of 16 kB");

    let mut outcomes = Outcomes::new();
    for round in 0..2 {
        let id = format!("shebang-{round}");
        let error = shebang_log_call(&mut connection, COUNTER, LOG, &id)
            .await
            .expect_err("out of memory");
        // Redis 6.x cannot compile the `#!lua` line: the call says so.
        if before_redis_7() {
            assert!(
                matches!(
                    &error,
                    Error::Unsupported {
                        feature: ServerFeature::ScriptFlags,
                        ..
                    }
                ),
                "{error:?}"
            );
        } else {
            assert!(
                matches!(&error, Error::Refused { code, .. } if code == "OOM"),
                "{error:?}"
            );
        }
        assert!(!error.may_have_executed());
        outcomes.push((id, Err(Arc::new(error))));
    }
    // Without a shebang, Redis runs the script and fails its first write.
    // Redis 6.x (the shebang's part proven above) reads the memory as the
    // script starts, and at the limit may let the write through.
    let id = "plain-0".to_owned();
    let result = log_call(&mut connection, COUNTER, LOG, &id).await;
    match result {
        // It ran and said so; the log, flushed below, is not read for it.
        Ok(_) if before_redis_7() => {}
        Ok(count) => panic!("out of memory: {count}"),
        Err(error) => {
            assert!(
                matches!(&error, Error::Script { code, location: Some(_), .. } if code == "OOM"),
                "{error:?}"
            );
            assert!(error.may_have_executed());
            outcomes.push((id, Err(Arc::new(error))));
        }
    }

    let () = redis::cmd("FLUSHALL")
        .query_async(&mut connection)
        .await
        .expect("FLUSHALL");
    let log = executions(&mut connection).await;
    assert!(log.runs.is_empty(), "{log:?}");
    let tally = Tally::of(&outcomes, &log);
    tally.print("out_of_memory", "", began.elapsed());
    tally.assert_exactly_once("out_of_memory");
}

// ---------------------------------------------------------------------------
// 2. SCRIPT FLUSH storm
// ---------------------------------------------------------------------------

const TASKS: usize = 16;

/// How the storm's calls are sent.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Single,
    Pipeline,
    Transaction,
}

/// Calls per batch in the batch modes.
const PER_BATCH: usize = 4;

/// Sends `SCRIPT FLUSH` every ~5 ms until `done`.
fn flusher(server: &RedisServer, done: Arc<AtomicBool>) -> tokio::task::JoinHandle<usize> {
    let client = server.client();
    tokio::spawn(async move {
        let mut connection = client
            .get_multiplexed_async_connection()
            .await
            .expect("flusher connection");
        let mut flushes = 0;
        while !done.load(Ordering::Relaxed) {
            let () = redis::cmd("SCRIPT")
                .arg("FLUSH")
                .query_async(&mut connection)
                .await
                .expect("SCRIPT FLUSH");
            flushes += 1;
            // Pacing: the storm's rate, a flush every ~5 ms.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        flushes
    })
}

async fn storm_task(
    mut connection: redis::aio::MultiplexedConnection,
    task: usize,
    rounds: usize,
    mode: Mode,
) -> Outcomes {
    let mut outcomes = Outcomes::new();
    for round in 0..rounds {
        match mode {
            Mode::Single => {
                let id = format!("{task}-{round}");
                let result = log_call(&mut connection, COUNTER, LOG, &id).await;
                outcomes.push((id, outcome(result)));
            }
            Mode::Pipeline | Mode::Transaction => {
                let mut batch = match mode {
                    Mode::Pipeline => Batch::pipeline(),
                    _ => Batch::transaction(),
                };
                let mut handles = Vec::new();
                for call in 0..PER_BATCH {
                    let id = format!("{task}-{round}-{call}");
                    let handle = batch
                        .add(log_call::call(COUNTER, LOG, &id))
                        .expect("one slot");
                    handles.push((id, handle));
                }
                match batch.run(&mut connection).await {
                    Ok(mut replies) => {
                        for (id, handle) in handles {
                            let result = replies.take(handle);
                            outcomes.push((id, outcome(result)));
                        }
                    }
                    Err(error) => {
                        // The batch's error, for each of its calls.
                        let error = Arc::new(error);
                        for (id, _) in handles {
                            outcomes.push((id, Err(error.clone())));
                        }
                    }
                }
            }
        }
    }
    outcomes
}

async fn flush_storm(mode: Mode, rounds: usize) {
    let began = Instant::now();
    let server = RedisServer::start();
    let connection = server.connection().await;
    let done = Arc::new(AtomicBool::new(false));
    let flushes = flusher(&server, done.clone());
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| tokio::spawn(storm_task(connection.clone(), task, rounds, mode)))
        .collect();
    let mut outcomes = Outcomes::new();
    for task in tasks {
        outcomes.extend(task.await.expect("storm task"));
    }
    done.store(true, Ordering::Relaxed);
    let flushes = flushes.await.expect("flusher");
    let log = executions(&mut connection.clone()).await;
    let tally = Tally::of(&outcomes, &log);
    let scenario = format!("flush_storm_{mode:?}");
    eprintln!(
        "{scenario}: {flushes} flushes, evalsha={} eval={}",
        server.calls("evalsha"),
        server.calls("eval")
    );
    tally.print(&scenario, "", began.elapsed());
    tally.assert_exactly_once(&scenario);
    assert!(tally.failed.is_empty(), "{scenario}: {tally:?}");
    assert_eq!(tally.executions, outcomes.len() as i64, "{tally:?}");
    assert!(flushes > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_storm_single_calls_run_exactly_once() {
    flush_storm(Mode::Single, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_storm_pipelines_run_exactly_once() {
    flush_storm(Mode::Pipeline, 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_storm_transactions_run_exactly_once() {
    flush_storm(Mode::Transaction, 20).await;
}

// 3. A read-only script on a server without EVALSHA_RO: `read_only_fallback.rs`.

// ---------------------------------------------------------------------------
// Load: tasks calling the logging script until stopped
// ---------------------------------------------------------------------------

/// `tasks` tasks calling the logging script on clones of `connection`,
/// pausing `backoff` after each failed call; refusals are sent again as
/// `retry` says.
fn start_load<C>(
    connection: &C,
    tasks: usize,
    backoff: Duration,
    retry: Option<RetryRefusals>,
) -> Load<Outcome>
where
    C: ConnectionLike + Clone + Send + 'static,
{
    Load::start(
        connection,
        tasks,
        backoff,
        move |mut connection, id| async move {
            let mut call = redis_script::Invocation::from(log_call::call(COUNTER, LOG, &id));
            if let Some(policy) = retry {
                call = call.retry_refusals(policy);
            }
            let result = call.invoke(&mut connection).await;
            (id, outcome(result))
        },
    )
}

/// Every execution increments the counter and the log together, so the
/// counter equals the log's total unless a key was lost or duplicated (by a
/// migration or a failover).
async fn assert_log_consistent<C: ConnectionLike>(
    connection: &mut C,
    log: &Ledger,
    scenario: &str,
) {
    let counter: Option<i64> = redis::cmd("GET")
        .arg(COUNTER)
        .query_async(connection)
        .await
        .expect("GET of the counter");
    assert_eq!(
        counter.unwrap_or(0),
        log.runs.values().sum::<i64>(),
        "{scenario}: the counter and the log disagree"
    );
}

// ---------------------------------------------------------------------------
// 4. kill -9 and restart of a standalone server under load
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_and_restart_under_load_never_runs_a_call_twice() {
    let began = Instant::now();
    // Later arguments win: the log survives the kill (fsync before reply).
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let manager = redis::aio::ConnectionManager::new(server.client())
        .await
        .expect("connection manager");
    let load = start_load(&manager, 8, Duration::from_millis(5), None);
    kill_and_restart(&mut server, &load).await;
    let (outcomes, ended_ok) = load.stop().await;
    let log = executions(&mut server.connection().await).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("kill_and_restart", "", began.elapsed());
    tally.assert_exactly_once("kill_and_restart");
    assert!(tally.ok > 0 && !tally.failed.is_empty(), "{tally:?}");
    assert!(ended_ok > 0, "calls succeed after the restart: {tally:?}");
}

// ---------------------------------------------------------------------------
// 5. CLIENT PAUSE longer than the response timeout, on a cluster
// ---------------------------------------------------------------------------

/// `DEFAULT_RETRIES` of redis-rs 1.8's cluster client
/// (`cluster_handling/client.rs`).
const REDIS_RS_DEFAULT_RETRIES: i64 = 16;

/// Pauses the primary of `{t}` and sends `PAUSED_CALLS` calls through a
/// cluster client with a 250 ms response timeout, further configured by
/// `configure`, while other traffic (a `GET` every 10 ms on another primary)
/// keeps the connection busy, as in production; the log once the pause is
/// over and the calls it held have run.
///
/// The traffic matters: redis-rs 1.8 queues a request that timed out for a
/// re-send, and sends it the next time its connection task handles another
/// request.
async fn paused_calls(
    cluster: &RedisCluster,
    configure: fn(ClusterClientBuilder) -> ClusterClientBuilder,
    scenario: &str,
) -> Tally {
    let began = Instant::now();
    let mut connection = cluster_connection(cluster, |builder| {
        configure(builder.response_timeout(PAUSED_RESPONSE_TIMEOUT))
    })
    .await;
    let mut outcomes = Outcomes::new();
    let warm = format!("{scenario}-warm");
    let result = log_call(&mut connection, COUNTER, LOG, &warm).await;
    outcomes.push((warm, outcome(result)));

    let primary = cluster.node_for_slot(redis_script::cluster::key_slot(LOG.as_bytes()));
    let other_key = key_served_elsewhere(cluster, primary.port());
    let paused = during_pause(
        &connection,
        primary,
        Some(other_key),
        |mut connection, call| {
            let id = format!("{scenario}-{call}");
            async move {
                let result = log_call(&mut connection, COUNTER, LOG, &id).await;
                (id, outcome(result))
            }
        },
    )
    .await;
    outcomes.extend(paused.outcomes);
    let mut reader = cluster.connection().await;
    let log = executions(&mut reader).await;
    let () = redis::cmd("DEL")
        .arg(LOG)
        .query_async(&mut reader)
        .await
        .expect("DEL");
    let tally = Tally::of(&outcomes, &log);
    tally.print(&format!("client_pause_{scenario}"), "", began.elapsed());
    tally
}

/// An overall timeout (redis-rs's `overall_response_timeout`, by default
/// the response timeout) that outlasts the pause: a request may be sent
/// again after each response timeout.
const LONGER_THAN_THE_PAUSE: Duration = Duration::from_millis(3 * PAUSE_MS);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_longer_than_the_response_timeout() {
    let cluster = RedisCluster::start(3, 1);

    // The recommended configuration: `retries(0)`. Even with an overall
    // timeout longer than the pause, a timed-out call is never sent again:
    // each paused call fails with `Timeout` and runs once after the pause.
    let tally = paused_calls(
        &cluster,
        |builder| {
            builder
                .retries(0)
                .overall_response_timeout(Some(LONGER_THAN_THE_PAUSE))
        },
        "retries0",
    )
    .await;
    tally.assert_exactly_once("client_pause_retries0");
    assert_eq!(
        (tally.ok, tally.failed.get("Timeout").copied()),
        (1, Some(PAUSED_CALLS)),
        "only the warm-up call succeeds, the paused ones time out: {tally:?}"
    );
    assert_eq!(
        tally.executions, tally.calls as i64,
        "all ran after the pause"
    );

    // redis-rs's defaults: 16 retries, and an overall timeout equal to the
    // response timeout, so the first timeout ends the call. The connection's
    // own timeout of the request fires at the same moment, and when redis-rs
    // handles it before the caller gives up, the re-send it queues still
    // goes out (now and then: some runs have one such id). That copy times
    // out after the caller gave up, so nothing runs more than twice.
    let scenario = "client_pause_default_retries";
    let tally = paused_calls(&cluster, |builder| builder, "default_retries").await;
    tally.assert_truthful(scenario);
    assert_eq!(
        (tally.ok, tally.failed.get("Timeout").copied()),
        (1, Some(PAUSED_CALLS)),
        "{scenario}: {tally:?}"
    );
    assert_eq!(tally.ok_not_once, 0, "{scenario}: {tally:?}");
    assert!(tally.max_runs <= 2, "{scenario}: {tally:?}");

    // Default retries with an overall timeout longer than the pause:
    // redis-rs sends a timed-out request again after every response timeout
    // until the pause ends; the server runs every copy (4 or 5 here), and
    // the caller gets `Ok`. The runtime cannot see this; the README says
    // when it happens.
    let scenario = "client_pause_default_retries_longer_overall_timeout";
    let tally = paused_calls(
        &cluster,
        |builder| builder.overall_response_timeout(Some(LONGER_THAN_THE_PAUSE)),
        "default_retries_longer_overall_timeout",
    )
    .await;
    tally.assert_truthful(scenario);
    assert!(
        tally.doubles > 0,
        "{scenario}: re-sent after a timeout: {tally:?}"
    );
    assert_eq!(
        tally.ok, tally.calls,
        "{scenario}: the last copy's reply arrives within the overall timeout: {tally:?}"
    );
    assert_eq!(tally.ok_lost, 0, "{scenario}: every Ok call ran: {tally:?}");
    assert!(
        tally.max_runs <= 1 + REDIS_RS_DEFAULT_RETRIES,
        "{scenario}: at most one send and {REDIS_RS_DEFAULT_RETRIES} re-sends: {tally:?}"
    );
}

// ---------------------------------------------------------------------------
// 6. Cluster failover under load
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_under_load_never_runs_a_call_twice_without_client_retries() {
    let began = Instant::now();
    let mut cluster = RedisCluster::start(3, 1);
    let connection = cluster_connection(&cluster, without_client_retries).await;
    let load = start_load(&connection, 4, Duration::from_millis(20), None);
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    kill_primary_of_slot(&mut cluster, slot, &load).await;
    let (outcomes, ended_ok) = load.stop().await;
    let log = executions(&mut cluster.connection().await).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("cluster_failover", "", began.elapsed());
    // Replication is asynchronous: a write acknowledged by the old primary
    // just before it died may be missing on the new one (ok_not_once).
    assert_eq!(tally.doubles, 0, "{tally:?}");
    tally.assert_truthful("cluster_failover");
    assert!(tally.ok > 0, "{tally:?}");
    assert!(ended_ok > 0, "calls succeed after the failover: {tally:?}");
}

/// `CLUSTER FAILOVER` on the replica: the primary stops taking writes, the
/// replica catches up with it and takes over, so no acknowledged write is
/// lost. Calls sent meanwhile are answered `MOVED` by the old primary (they
/// did not run) and sent again by the runtime (`retry_refusals`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_cluster_failover_under_load_runs_every_ok_call_exactly_once() {
    let began = Instant::now();
    let cluster = RedisCluster::start(3, 1);
    let connection = cluster_connection(&cluster, without_client_retries).await;
    let load = start_load(
        &connection,
        4,
        Duration::from_millis(20),
        Some(RETRY_REFUSALS),
    );
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    let replica = manual_failover_under_load(&cluster, slot, &load).await;
    let (outcomes, ended_ok) = load.stop().await;
    let mut reader = cluster.connection().await;
    let log = executions(&mut reader).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("manual_cluster_failover", "", began.elapsed());
    tally.assert_exactly_once("manual_cluster_failover");
    assert_log_consistent(&mut reader, &log, "manual_cluster_failover").await;
    // Refusals were all sent again. The old primary holds calls while the
    // replica catches up and takes over (tens of milliseconds here); a call
    // held longer than the 500 ms response timeout would end in `Timeout`.
    assert!(
        tally.failed.keys().all(|kind| kind == "Timeout"),
        "{tally:?}"
    );
    assert_eq!(ended_ok, 4, "calls succeed after the failover: {tally:?}");
    assert_eq!(
        cluster.node_for_slot(slot).port(),
        replica.port(),
        "the replica took the slot over"
    );
}

// ---------------------------------------------------------------------------
// 7. Slot migration under load
// ---------------------------------------------------------------------------

/// Keys added to the log's slot, so that moving it takes several `MIGRATE`
/// batches with calls in between.
const FILLER_KEYS: usize = 200;
/// Keys per `MIGRATE`.
const MIGRATE_BATCH: usize = 20;

/// Runs an admin command on one node, panicking with what failed.
async fn admin<T: redis::FromRedisValue>(
    connection: &mut redis::aio::MultiplexedConnection,
    command: &redis::Cmd,
) -> T {
    command
        .query_async(connection)
        .await
        .unwrap_or_else(|error| panic!("{command:?}: {error}"))
}

/// `INFO commandstats` of one node.
async fn command_stats(
    connection: &mut redis::aio::MultiplexedConnection,
) -> BTreeMap<String, CommandStat> {
    let text: String = admin(connection, redis::cmd("INFO").arg("commandstats")).await;
    parse_commandstats(&text)
}

/// Moves `slot` from `source` to `target` the way `redis-cli --cluster
/// reshard` does: `IMPORTING` on the target, `MIGRATING` on the source,
/// `MIGRATE` of its keys in batches, then the hand-over with `SETSLOT NODE`
/// on every primary. The target's script cache is flushed first, and the
/// slot stays in the migrating state for `hold` after its last key moved
/// (every call is then redirected with `ASK`). The number of batches, and
/// the target's `INFO commandstats` just before the hand-over.
async fn migrate_slot(
    primaries: &[&RedisServer],
    slot: u16,
    source: &RedisServer,
    target: &RedisServer,
    hold: Duration,
) -> (usize, BTreeMap<String, CommandStat>) {
    let mut from = source.connection().await;
    let mut to = target.connection().await;
    let source_id: String = admin(&mut from, redis::cmd("CLUSTER").arg("MYID")).await;
    let target_id: String = admin(&mut to, redis::cmd("CLUSTER").arg("MYID")).await;
    let () = admin(&mut to, redis::cmd("SCRIPT").arg("FLUSH")).await;
    let () = admin(
        &mut to,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("IMPORTING")
            .arg(&source_id),
    )
    .await;
    let () = admin(
        &mut from,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("MIGRATING")
            .arg(&target_id),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut batches = 0;
    loop {
        let keys: Vec<String> = admin(
            &mut from,
            redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(MIGRATE_BATCH),
        )
        .await;
        if keys.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the slot did not empty in time");
        let () = admin(
            &mut from,
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(target.port())
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys),
        )
        .await;
        batches += 1;
        // Pacing: the migration's rate, so that calls come in between two
        // batches (while the slot's keys are on both nodes).
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Pacing: the slot is held in the migrating state for `hold`, the
    // fault the callers meet (`ASK` for every call); not a wait for
    // something to happen.
    tokio::time::sleep(hold).await;
    let importing = command_stats(&mut to).await;
    // The target first, so that it serves the slot before the source
    // redirects there with MOVED.
    let others = primaries
        .iter()
        .filter(|node| node.port() != source.port() && node.port() != target.port());
    for node in [target, source].into_iter().chain(others.copied()) {
        let () = admin(
            &mut node.connection().await,
            redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg("NODE")
                .arg(&target_id),
        )
        .await;
    }
    (batches, importing)
}

/// Moves the log's slot to another primary while four tasks call the
/// logging script through a cluster client configured by `configure`, with
/// `retry` for refusals; the tally and the target's `INFO commandstats`
/// from the start of the migration: while it imported the slot, and at the
/// end.
async fn slot_migration_under_load(
    scenario: &str,
    configure: fn(ClusterClientBuilder) -> ClusterClientBuilder,
    retry: Option<RetryRefusals>,
) -> (
    Tally,
    BTreeMap<String, CommandStat>,
    BTreeMap<String, CommandStat>,
) {
    const TASKS: usize = 4;
    let began = Instant::now();
    let cluster = RedisCluster::start(3, 0);
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    let primaries = tokio::task::block_in_place(|| cluster.primaries());
    let source = cluster.node_for_slot(slot);
    let target = *primaries
        .iter()
        .find(|node| node.port() != source.port())
        .expect("another primary");
    let mut from = source.connection().await;
    let mut to = target.connection().await;
    let mut fill = redis::cmd("MSET");
    for index in 0..FILLER_KEYS {
        fill.arg(format!("{{t}}:fill:{index}")).arg(index);
    }
    let () = admin(&mut from, &fill).await;

    let connection = cluster_connection(&cluster, configure).await;
    let load = start_load(&connection, TASKS, Duration::from_millis(20), retry);
    load.until_every_task_succeeds("the load runs before the migration")
        .await;
    for connection in [&mut from, &mut to] {
        let () = admin(connection, redis::cmd("CONFIG").arg("RESETSTAT")).await;
    }
    let (batches, importing) =
        migrate_slot(&primaries, slot, source, target, Duration::from_millis(200)).await;
    load.until_every_task_succeeds("calls succeed after the hand-over")
        .await;
    let (outcomes, ended_ok) = load.stop().await;

    let mut reader = cluster.connection().await;
    let log = executions(&mut reader).await;
    let tally = Tally::of(&outcomes, &log);
    let (source_stats, target_stats) =
        (command_stats(&mut from).await, command_stats(&mut to).await);
    eprintln!(
        "{scenario}: {batches} MIGRATE batches; source: evalsha {:?}; target while \
         importing: asking {:?}, evalsha {:?}, eval {:?}; target at the end: evalsha {:?}, \
         eval {:?}",
        source_stats.get("evalsha"),
        importing.get("asking"),
        importing.get("evalsha"),
        importing.get("eval"),
        target_stats.get("evalsha"),
        target_stats.get("eval"),
    );
    tally.print(scenario, "", began.elapsed());
    tally.assert_exactly_once(scenario);
    assert_log_consistent(&mut reader, &log, scenario).await;
    assert!(batches > 1, "{batches} batches");
    assert_eq!(
        tokio::task::block_in_place(|| cluster.node_for_slot(slot).port()),
        target.port(),
        "the target serves the slot"
    );
    let keys: (i64, i64) = (
        admin(
            &mut from,
            redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot),
        )
        .await,
        admin(
            &mut to,
            redis::cmd("CLUSTER").arg("COUNTKEYSINSLOT").arg(slot),
        )
        .await,
    );
    assert_eq!(keys, (0, FILLER_KEYS as i64 + 2), "every key moved");
    assert_eq!(
        ended_ok, TASKS,
        "calls succeed after the migration: {tally:?}"
    );
    // Redis 6.0 does not count refused calls.
    assert!(
        before_redis_6_2()
            || source_stats
                .get("evalsha")
                .is_some_and(|stat| stat.rejected_calls > 0),
        "calls were redirected during the migration: {source_stats:?}"
    );
    (tally, importing, target_stats)
}

/// Whether `EVALSHA` answered `NOSCRIPT` at least once: a failed call, which
/// Redis 6.0 counts among its calls (it counts no failed calls apart).
fn answered_noscript(stat: &CommandStat) -> bool {
    stat.failed_calls > 0 || (before_redis_6_2() && stat.calls > 0)
}

/// The recommended client (`retries(0)`): the runtime sends refused calls
/// again (`retry_refusals`). It does not follow `ASK` itself: a call sent
/// again goes to the slot's owner in the client's map, the source, which
/// answers `ASK` until the hand-over, then `MOVED`, after which redis-rs
/// refreshes its map and the call reaches the target, where its first
/// `EVALSHA` meets an empty script cache: `NOSCRIPT`, then `EVAL`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slot_migration_under_load_with_runtime_retries_runs_every_call_once() {
    let scenario = "slot_migration_runtime_retries";
    let (tally, importing, target) =
        slot_migration_under_load(scenario, without_client_retries, Some(RETRY_REFUSALS)).await;
    assert!(tally.failed.is_empty(), "{tally:?}");
    assert!(
        ["asking", "evalsha", "eval"]
            .iter()
            .all(|command| !importing.contains_key(*command)),
        "no call reached the importing node: {importing:?}"
    );
    assert!(
        target.get("evalsha").is_some_and(answered_noscript)
            && target.get("eval").is_some_and(|stat| stat.calls > 0),
        "NOSCRIPT on the target, then EVAL: {target:?}"
    );
}

/// redis-rs follows the redirects itself (its default 16 retries): after
/// `ASK` it sends `ASKING` and the call to the importing node, which does
/// not have the script: `NOSCRIPT` there, then the runtime's `EVAL`, which
/// redis-rs redirects the same way. Without faults of the connection,
/// redirects are the only re-sends, and a redirected call did not run. Its
/// wait before re-sending a `TRYAGAIN` (the keys of one call on both nodes,
/// between two batches) is shortened: by default it is at least 1.28 s,
/// longer than the response timeout, and the call would end in `Timeout`.
///
/// Some calls may fail, without running: redis-rs 1.8 sends `ASKING` as a
/// request of its own, then the call, on a connection all tasks share. When
/// two redirected calls interleave (`ASKING`, `ASKING`, call, call), the
/// second call reaches the importing node without the flag, which answers
/// `MOVED` back to the source, which answers `ASK` again; after its 16
/// re-sends redis-rs gives up with that `ASK` (`Refused`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slot_migration_under_load_with_client_redirects_runs_every_call_once() {
    let scenario = "slot_migration_client_redirects";
    let (tally, importing, _) = slot_migration_under_load(
        scenario,
        |builder| {
            builder
                .response_timeout(Duration::from_millis(500))
                .min_retry_wait(5)
                .max_retry_wait(100)
        },
        None,
    )
    .await;
    let unexpected: Vec<&String> = tally
        .failed
        .keys()
        .filter(|kind| {
            !matches!(
                kind.as_str(),
                "Refused(ASK)" | "Refused(MOVED)" | "Refused(TRYAGAIN)" | "Timeout"
            )
        })
        .collect();
    assert!(unexpected.is_empty(), "{tally:?}");
    assert_eq!(
        tally.executions, tally.ok as i64,
        "only the Ok calls ran: {tally:?}"
    );
    assert!(
        importing.get("asking").is_some_and(|stat| stat.calls > 0)
            && importing.get("evalsha").is_some_and(answered_noscript)
            && importing.get("eval").is_some_and(|stat| stat.calls > 0),
        "ASKING, NOSCRIPT on the importing node, then EVAL: {importing:?}"
    );
}
