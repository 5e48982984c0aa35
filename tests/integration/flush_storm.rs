//! Pipelines of two scripts and plain commands while another client sends
//! `SCRIPT FLUSH` every few milliseconds: each call's outcome is checked
//! against the server's own log of what ran, in order. A pipeline carries
//! each script's body once (or none, for scripts it knows the server has),
//! so a flush inside it makes later `EVALSHA`s answer `NOSCRIPT`; those
//! calls must go again only where that keeps the order queued, and
//! otherwise say they did not run.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis_script::batch::Handle;
use redis_script::{Batch, Error, KnownScripts};
use redis_script_test::RedisServer;
use redis_script_tests::faults::{append_id, append_id_again};

/// Pipelines sent during the storm.
const PIPELINES: usize = 300;
/// Commands per pipeline.
const COMMANDS: usize = 24;

/// What the calls were told, against what ran.
#[derive(Debug, Default)]
struct Counts {
    calls: usize,
    ran: usize,
    /// Calls that ended saying they did not run, the script cache lost.
    lost: usize,
    /// Calls that ran more than once.
    double_runs: usize,
    /// Calls told they ran (with a reply) that did not, or ran elsewhere
    /// in the log than their reply says; calls told they did not run that
    /// ran.
    lies: usize,
    /// Calls that ran after a call queued after them.
    reorders: usize,
}

/// One pipeline: `COMMANDS` commands, each appending its id to `order`.
/// With `plain`, every third is a plain `RPUSH`; the others alternate
/// between the two scripts.
fn pipeline(
    order: &str,
    round: usize,
    plain: bool,
    known: Option<&KnownScripts>,
) -> (Batch, Vec<(String, Handle<i64>)>) {
    let mut batch = Batch::pipeline();
    if let Some(known) = known {
        batch = batch.known_scripts(known);
    }
    let mut calls = Vec::with_capacity(COMMANDS);
    for index in 0..COMMANDS {
        let id = format!("{round}:{index}");
        let handle = match index % 3 {
            2 if plain => batch.add_command(redis::cmd("RPUSH").arg(order).arg(&id).to_owned()),
            1 => batch
                .add(append_id_again::call(order, &id))
                .expect("one key"),
            _ => batch.add(append_id::call(order, &id)).expect("one key"),
        };
        calls.push((id, handle));
    }
    (batch, calls)
}

/// Checks the outcome of every call of a pipeline against `ran`, the ids
/// the server logged, in the order it ran them.
fn check(
    counts: &mut Counts,
    calls: Vec<(String, Handle<i64>)>,
    mut replies: redis_script::batch::Replies,
    ran: &[String],
) {
    let queued: HashMap<&str, usize> = calls
        .iter()
        .enumerate()
        .map(|(index, (id, _))| (id.as_str(), index))
        .collect();
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for id in ran {
        *runs.entry(id.as_str()).or_default() += 1;
    }
    counts.double_runs += runs.values().filter(|runs| **runs > 1).count();
    counts.ran += ran.len();
    // In the order queued: each id that ran was queued after the one
    // that ran before it.
    let places: Vec<Option<usize>> = ran
        .iter()
        .map(|id| queued.get(id.as_str()).copied())
        .collect();
    counts.reorders += places
        .windows(2)
        .filter(|pair| match pair {
            [Some(before), Some(after)] => before >= after,
            _ => true,
        })
        .count();
    for (id, handle) in calls {
        counts.calls += 1;
        let position = ran.iter().position(|logged| *logged == id);
        match replies.take(handle) {
            Ok(length) => {
                let told = usize::try_from(length).ok();
                if position.map(|position| position + 1) != told {
                    counts.lies += 1;
                }
            }
            Err(error) => {
                if matches!(error, Error::ScriptCacheLost { .. }) {
                    counts.lost += 1;
                }
                if !error.may_have_executed() && position.is_some() {
                    counts.lies += 1;
                }
                if error.may_have_executed() {
                    panic!("{id}: no call of a pipeline on a healthy server may fail so: {error}");
                }
            }
        }
    }
}

/// Another client sending `SCRIPT FLUSH` every few milliseconds, until
/// stopped.
struct Storm {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl Storm {
    fn start(mut flusher: redis::aio::MultiplexedConnection) -> Storm {
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn({
            let stop = Arc::clone(&stop);
            async move {
                let mut flushes = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    let flushed: redis::RedisResult<()> = redis::cmd("SCRIPT")
                        .arg("FLUSH")
                        .query_async(&mut flusher)
                        .await;
                    flushed.expect("SCRIPT FLUSH");
                    flushes += 1;
                    // Pacing: a flush every few milliseconds.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                flushes
            }
        });
        Storm { stop, task }
    }

    /// Stops it: how many flushes it sent.
    async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.expect("the storm ends")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelines_in_a_flush_storm_never_run_twice_lie_or_reorder() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let flusher = server.connection().await;
    let storm = Storm::start(flusher);
    let known = KnownScripts::default();
    let mut counts = Counts::default();
    let mut scripts_only = Counts::default();
    for round in 0..PIPELINES {
        let order = format!("{{storm}}:{round}");
        // Every fourth pipeline holds scripts only, the body of each in
        // its first call: a flush inside it cuts off only `EVALSHA`s
        // after both bodies, and nothing after them runs, so they all go
        // again. Half of the others send the scripts the server answered
        // before with no body at all.
        let plain = round % 4 != 0;
        let known = (plain && round % 2 == 1).then_some(&known);
        let (batch, calls) = pipeline(&order, round, plain, known);
        let replies = batch.run(&mut connection).await.expect("the pipeline runs");
        let ran: Vec<String> = redis::cmd("LRANGE")
            .arg(&order)
            .arg(0)
            .arg(-1)
            .query_async(&mut connection)
            .await
            .expect("LRANGE");
        let counts = if plain {
            &mut counts
        } else {
            &mut scripts_only
        };
        check(counts, calls, replies, &ran);
    }
    let flushes = storm.stop().await;
    println!("{flushes} flushes; with plain commands: {counts:?}; scripts only: {scripts_only:?}");
    for counts in [&counts, &scripts_only] {
        assert_eq!(
            (counts.double_runs, counts.lies, counts.reorders),
            (0, 0, 0),
            "(double runs, lies, reorders): {counts:?}"
        );
        assert_eq!(
            counts.calls,
            counts.ran + counts.lost,
            "every call ran or said it did not"
        );
    }
    assert_eq!(
        scripts_only.lost, 0,
        "a pipeline of scripts only sends its cut-off calls again"
    );
}

/// Exactly-once calls (each with its call id) among plain commands, in
/// pipelines during the storm, each pipeline sent twice as a client does
/// after a timeout: every request runs at most once across both sends; a
/// call told it succeeded ran once, and both sends got the first run's
/// reply; a call told it did not run, did not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_calls_in_a_flush_storm_run_at_most_once() {
    use redis_script::CallId;
    use redis_script_tests::faults::log_call_once;

    const ROUNDS: usize = 120;
    const CALLS: usize = 12;
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let flusher = server.connection().await;
    let storm = Storm::start(flusher);
    let (counter, log, first) = ("{once}:counter", "{once}:log", "{once}:first");
    let (mut succeeded, mut not_run) = (0, 0);
    for round in 0..ROUNDS {
        let mut told: HashMap<String, Vec<Result<i64, bool>>> = HashMap::new();
        for _send in 0..2 {
            let mut batch = Batch::pipeline();
            let mut handles = Vec::with_capacity(CALLS);
            for index in 0..CALLS {
                let id = format!("{round}:{index}");
                if index % 3 == 2 {
                    let _: Handle<i64> =
                        batch.add_command(redis::cmd("INCR").arg("{once}:plain").to_owned());
                }
                let call = log_call_once::call_with_id(
                    CallId::new(format!("storm-{id}")),
                    counter,
                    log,
                    first,
                    &id,
                );
                handles.push((id, batch.add(call).expect("one slot")));
            }
            let mut replies = batch.run(&mut connection).await.expect("the pipeline runs");
            for (id, handle) in handles {
                let outcome = replies
                    .take(handle)
                    .map_err(|error| error.may_have_executed());
                told.entry(id).or_default().push(outcome);
            }
        }
        for (id, outcomes) in told {
            let runs: Option<i64> = redis::cmd("HGET")
                .arg(log)
                .arg(&id)
                .query_async(&mut connection)
                .await
                .expect("HGET");
            let runs = runs.unwrap_or(0);
            assert!(runs <= 1, "{id} ran {runs} times: {outcomes:?}");
            let first_reply: Option<i64> = redis::cmd("HGET")
                .arg(first)
                .arg(&id)
                .query_async(&mut connection)
                .await
                .expect("HGET");
            for outcome in &outcomes {
                match outcome {
                    Ok(reply) => {
                        succeeded += 1;
                        assert_eq!(
                            Some(*reply),
                            first_reply,
                            "{id}: told {reply}, but the run it had replied {first_reply:?}"
                        );
                    }
                    Err(false) => not_run += 1,
                    Err(true) => {
                        panic!("{id}: a healthy server's pipeline call may have run: {outcomes:?}")
                    }
                }
            }
            if outcomes.iter().all(|outcome| matches!(outcome, Err(false))) {
                assert_eq!(runs, 0, "{id}: told it did not run, but it ran");
            }
        }
    }
    let flushes = storm.stop().await;
    println!(
        "{flushes} flushes; exactly-once calls: {succeeded} replies, {not_run} told they did not run"
    );
    assert!(flushes > 0 && succeeded > 0);
}
