//! Fault injection: every scenario compares a server-side execution log
//! (each test script runs `HINCRBY <log> <call id> 1`) with what each
//! caller was told, and checks the runtime's promises: an `Ok` call ran
//! exactly once, no call ran twice unless the documented client behaviour
//! says so, and an error with `may_have_executed() == false` did not run.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script::{Batch, Error};
use redis_script_testkit::{RedisCluster, RedisServer, Stats};
use redis_script_tests::faults::{log_call, shebang_log_call, write_then_busy, write_then_error};

/// The counter every test script increments.
const COUNTER: &str = "{t}:n";
/// The execution log: call id => executions.
const LOG: &str = "{t}:log";

/// What each caller was told, by call id.
type Outcomes = Vec<(String, Result<(), Arc<Error>>)>;

/// One caller's outcome, for [`Outcomes`].
fn outcome<T>(result: Result<T, Error>) -> Result<(), Arc<Error>> {
    result.map(|_| ()).map_err(Arc::new)
}

/// The execution log, read after the run.
async fn executions<C: ConnectionLike>(connection: &mut C) -> HashMap<String, i64> {
    redis::cmd("HGETALL")
        .arg(LOG)
        .query_async(connection)
        .await
        .expect("HGETALL of the execution log")
}

/// A short name for how a call failed.
fn kind(error: &Error) -> String {
    match error {
        Error::Refused { code, .. } => format!("Refused({code})"),
        Error::Script { code, .. } => format!("Script({code})"),
        Error::Connection { .. } => "Connection".to_owned(),
        Error::Timeout { .. } => "Timeout".to_owned(),
        Error::Decode { .. } => "Decode".to_owned(),
        Error::CrossSlot { .. } => "CrossSlot".to_owned(),
        _ => "other".to_owned(),
    }
}

/// The numbers of one scenario, compared against the execution log.
#[derive(Debug, Default)]
struct Tally {
    calls: usize,
    ok: usize,
    failed: BTreeMap<String, usize>,
    executions: i64,
    /// Ids that ran more than once.
    doubles: usize,
    /// `Ok` calls that did not run exactly once.
    ok_not_once: usize,
    /// Errors that said `may_have_executed() == false` for a call that ran.
    wrong_may_have_executed: usize,
    /// Ids in the log that no caller sent.
    unknown_ids: usize,
}

impl Tally {
    fn of(outcomes: &Outcomes, log: &HashMap<String, i64>) -> Self {
        let mut tally = Tally {
            calls: outcomes.len(),
            ..Tally::default()
        };
        for (id, outcome) in outcomes {
            let ran = log.get(id).copied().unwrap_or(0);
            tally.executions += ran;
            if ran > 1 {
                tally.doubles += 1;
            }
            match outcome {
                Ok(()) => {
                    tally.ok += 1;
                    if ran != 1 {
                        tally.ok_not_once += 1;
                    }
                }
                Err(error) => {
                    *tally.failed.entry(kind(error)).or_default() += 1;
                    if !error.may_have_executed() && ran > 0 {
                        tally.wrong_may_have_executed += 1;
                    }
                }
            }
        }
        let sent: std::collections::HashSet<&str> =
            outcomes.iter().map(|(id, _)| id.as_str()).collect();
        tally.unknown_ids = log.keys().filter(|id| !sent.contains(id.as_str())).count();
        tally
    }

    fn print(&self, scenario: &str, elapsed: Duration) {
        eprintln!(
            "faults::{scenario}: calls={} ok={} failed={:?} executions={} doubles={} \
             ok_not_once={} wrong_may_have_executed={} unknown_ids={} in {elapsed:.2?}",
            self.calls,
            self.ok,
            self.failed,
            self.executions,
            self.doubles,
            self.ok_not_once,
            self.wrong_may_have_executed,
            self.unknown_ids,
        );
    }

    /// The runtime's own promises: `Ok` ran once, nothing ran twice, a
    /// "did not run" is true.
    fn assert_promises(&self, scenario: &str) {
        assert_eq!(self.ok_not_once, 0, "{scenario}: {self:?}");
        assert_eq!(self.doubles, 0, "{scenario}: {self:?}");
        assert_eq!(self.wrong_may_have_executed, 0, "{scenario}: {self:?}");
        assert_eq!(self.unknown_ids, 0, "{scenario}: {self:?}");
    }
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
            // A reply without a message reaches the client as `ERR <word>`.
            let code = match reply.split_once(' ') {
                Some((code, _)) => code,
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
    tally.print("computed_error_replies", began.elapsed());
    tally.assert_promises("computed_error_replies");
    assert!(wrong_variant.is_empty(), "{wrong_variant:#?}");
    assert_eq!(tally.executions, outcomes.len() as i64, "{tally:?}");
}

/// A script whose error texts are computed at run time could imitate the
/// server's `NOSCRIPT`; it is always sent as `EVAL` with its body (which the
/// server never answers with `NOSCRIPT`), so the reply is the script's own:
/// one execution per call, reported as run.
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
    tally.print("computed_noscript_reply", began.elapsed());
    tally.assert_promises("computed_noscript_reply");
    assert_eq!(tally.executions, 2, "{tally:?}");
    assert_eq!(
        (server.calls("evalsha"), server.calls("eval")),
        (0, 2),
        "sent with the body every time"
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
        assert!(
            matches!(&error, Error::Refused { code, .. } if code == "OOM"),
            "{error:?}"
        );
        assert!(!error.may_have_executed());
        outcomes.push((id, Err(Arc::new(error))));
    }
    // Without a shebang, Redis runs the script and fails its first write.
    let id = "plain-0".to_owned();
    let error = log_call(&mut connection, COUNTER, LOG, &id)
        .await
        .expect_err("out of memory");
    assert!(
        matches!(&error, Error::Script { code, location: Some(_), .. } if code == "OOM"),
        "{error:?}"
    );
    assert!(error.may_have_executed());
    outcomes.push((id, Err(Arc::new(error))));

    let () = redis::cmd("FLUSHALL")
        .query_async(&mut connection)
        .await
        .expect("FLUSHALL");
    let log = executions(&mut connection).await;
    assert!(log.is_empty(), "{log:?}");
    let tally = Tally::of(&outcomes, &log);
    tally.print("out_of_memory", began.elapsed());
    tally.assert_promises("out_of_memory");
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
    tally.print(&scenario, began.elapsed());
    tally.assert_promises(&scenario);
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

// 3. A read-only script on a server without EVALSHA_RO: `tests/read_only_fallback.rs`
//    (its own process, since the runtime remembers the fallback per process).

// ---------------------------------------------------------------------------
// 4. kill -9 and restart of a standalone server under load
// ---------------------------------------------------------------------------

/// Calls the logging script with fresh ids until `done`, pausing `backoff`
/// after each failed call.
async fn load_task<C: ConnectionLike>(
    mut connection: C,
    task: usize,
    done: Arc<AtomicBool>,
    backoff: Duration,
) -> Outcomes {
    let mut outcomes = Outcomes::new();
    for round in 0..5_000 {
        if done.load(Ordering::Relaxed) {
            break;
        }
        let id = format!("{task}-{round}");
        let result = log_call(&mut connection, COUNTER, LOG, &id).await;
        let failed = result.is_err();
        outcomes.push((id, outcome(result)));
        if failed {
            tokio::time::sleep(backoff).await;
        }
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_and_restart_under_load_never_runs_a_call_twice() {
    let began = Instant::now();
    // Later arguments win: the log survives the kill (fsync before reply).
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let manager = redis::aio::ConnectionManager::new(server.client())
        .await
        .expect("connection manager");
    let done = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            tokio::spawn(load_task(
                manager.clone(),
                task,
                done.clone(),
                Duration::from_millis(5),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::task::block_in_place(|| server.stop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    tokio::task::block_in_place(|| server.restart());
    tokio::time::sleep(Duration::from_millis(700)).await;
    done.store(true, Ordering::Relaxed);
    let mut outcomes = Outcomes::new();
    for task in tasks {
        outcomes.extend(task.await.expect("load task"));
    }
    let log = executions(&mut server.connection().await).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("kill_and_restart", began.elapsed());
    tally.assert_promises("kill_and_restart");
    assert!(tally.ok > 0 && !tally.failed.is_empty(), "{tally:?}");
    // Calls after the restart succeed again.
    let last_ok = outcomes
        .iter()
        .rev()
        .take(8)
        .filter(|(_, r)| r.is_ok())
        .count();
    assert!(last_ok > 0, "{tally:?}");
}

// ---------------------------------------------------------------------------
// 5. CLIENT PAUSE longer than the response timeout, on a cluster
// ---------------------------------------------------------------------------

const PAUSE_MS: u64 = 1000;
const PAUSED_CALLS: usize = 8;

/// Pauses the primary of `{t}` and sends `PAUSED_CALLS` calls through a
/// cluster client with a 250 ms response timeout and `retries` (redis-rs's
/// default when `None`); the log once the pause is over.
async fn paused_calls(cluster: &RedisCluster, retries: Option<u32>, prefix: &str) -> Tally {
    let began = Instant::now();
    let mut builder = redis::cluster::ClusterClientBuilder::new(cluster.urls())
        .response_timeout(Duration::from_millis(250));
    if let Some(retries) = retries {
        builder = builder.retries(retries);
    }
    let client = builder.build().expect("cluster client");
    let mut connection = client
        .get_async_connection()
        .await
        .expect("cluster connection");
    let mut outcomes = Outcomes::new();
    let warm = format!("{prefix}-warm");
    let result = log_call(&mut connection, COUNTER, LOG, &warm).await;
    outcomes.push((warm, outcome(result)));

    let primary = cluster.node_for_slot(redis_script::key_slot(LOG.as_bytes()));
    let mut direct = primary.connection().await;
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(PAUSE_MS)
        .arg("ALL")
        .query_async(&mut direct)
        .await
        .expect("CLIENT PAUSE");
    let paused_at = Instant::now();
    let calls: Vec<_> = (0..PAUSED_CALLS)
        .map(|call| {
            let mut connection = connection.clone();
            let id = format!("{prefix}-{call}");
            tokio::spawn(async move {
                let result = log_call(&mut connection, COUNTER, LOG, &id).await;
                (id, outcome(result))
            })
        })
        .collect();
    for call in calls {
        outcomes.push(call.await.expect("paused call"));
    }
    let over = Duration::from_millis(PAUSE_MS + 500);
    tokio::time::sleep(over.saturating_sub(paused_at.elapsed())).await;
    let mut reader = cluster.connection().await;
    let log = executions(&mut reader).await;
    let () = redis::cmd("DEL")
        .arg(LOG)
        .query_async(&mut reader)
        .await
        .expect("DEL");
    let tally = Tally::of(&outcomes, &log);
    tally.print(&format!("client_pause_{prefix}"), began.elapsed());
    for (id, result) in &outcomes {
        if let Err(error) = result {
            eprintln!("  {id}: {error}");
        }
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_longer_than_the_response_timeout() {
    let cluster = RedisCluster::start(3, 1);

    let tally = paused_calls(&cluster, Some(0), "retries0").await;
    tally.assert_promises("client_pause_retries0");
    assert_eq!(
        tally.failed.get("Timeout").copied().unwrap_or(0),
        tally.calls - tally.ok,
        "only timeouts: {tally:?}"
    );
    assert_eq!(
        tally.executions, tally.calls as i64,
        "all ran after the pause"
    );

    // redis-rs's own retries re-send a request that timed out: the server
    // runs it again. The runtime cannot see this; the README documents it.
    let tally = paused_calls(&cluster, None, "default_retries").await;
    eprintln!(
        "faults::client_pause_default_retries: {} of {} ids ran more than once",
        tally.doubles, tally.calls
    );
    assert_eq!(tally.unknown_ids, 0, "{tally:?}");
}

// ---------------------------------------------------------------------------
// 6. Cluster failover under load
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_under_load_never_runs_a_call_twice_without_client_retries() {
    let began = Instant::now();
    let mut cluster = RedisCluster::start(3, 1);
    let client = redis::cluster::ClusterClientBuilder::new(cluster.urls())
        .response_timeout(Duration::from_millis(500))
        .retries(0)
        .build()
        .expect("cluster client");
    let connection = client
        .get_async_connection()
        .await
        .expect("cluster connection");
    let done = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..4)
        .map(|task| {
            tokio::spawn(load_task(
                connection.clone(),
                task,
                done.clone(),
                Duration::from_millis(20),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let primary = cluster
        .node_for_slot(redis_script::key_slot(LOG.as_bytes()))
        .port();
    let index = cluster
        .nodes()
        .iter()
        .position(|node| node.port() == primary)
        .expect("the primary is a node");
    tokio::task::block_in_place(|| {
        cluster.node_mut(index).stop();
        cluster.wait_until_healthy();
    });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    done.store(true, Ordering::Relaxed);
    let mut outcomes = Outcomes::new();
    for task in tasks {
        outcomes.extend(task.await.expect("load task"));
    }
    let log = executions(&mut cluster.connection().await).await;
    let tally = Tally::of(&outcomes, &log);
    tally.print("cluster_failover", began.elapsed());
    // Replication is asynchronous: a write acknowledged by the old primary
    // just before it died may be missing on the new one (ok_not_once).
    assert_eq!(tally.doubles, 0, "{tally:?}");
    assert_eq!(tally.wrong_may_have_executed, 0, "{tally:?}");
    assert_eq!(tally.unknown_ids, 0, "{tally:?}");
    assert!(tally.ok > 0, "{tally:?}");
    let recovered = outcomes
        .iter()
        .rev()
        .take(4)
        .filter(|(_, r)| r.is_ok())
        .count();
    assert!(recovered > 0, "calls succeed after the failover: {tally:?}");
}
