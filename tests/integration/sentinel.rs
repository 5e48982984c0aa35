//! A Sentinel deployment: one primary, two replicas, three sentinels
//! (`--sentinel`). Calls go through [`SentinelConnection`]s put together
//! in a [`Replicas`]: reads on the replicas, writes, `preload` and
//! `deploy` on the primary; then a failover forced with `SENTINEL
//! FAILOVER` during a mixed load of reads and writes, checked against the
//! server's execution log as the cluster failover tests are.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis_script::sentinel::SentinelConnection;
use redis_script::{Batch, Invocation, OnConflict, ReadFrom, Replicas};
use redis_script_test::{SentinelDeployment, Stats, patience};
use redis_script_tests::faults::{log_call, log_call_once, read_log};

use crate::fault_kit::{Load, RETRY_REFUSALS, Tally};
use crate::faults::{COUNTER, LOG, Outcome, executions, outcome};
use crate::functions::quota_lib;
use crate::releases::lacks_functions;

/// The deadline of each call of the load.
const DEADLINE: Duration = Duration::from_secs(5);

/// The primary and one replica connection of `deployment`, found through
/// its sentinels.
fn connect(deployment: &SentinelDeployment, read_from: ReadFrom) -> Replicas<SentinelConnection> {
    let urls = deployment.sentinel_urls();
    let service = SentinelDeployment::SERVICE;
    let primary = SentinelConnection::primary(urls.clone(), service, None)
        .expect("sentinel addresses")
        .with_config(patience::connection_config());
    let replica = SentinelConnection::replica(urls, service, None)
        .expect("sentinel addresses")
        .with_config(patience::connection_config());
    Replicas::new(primary, vec![replica], read_from)
}

#[tokio::test]
async fn calls_through_the_sentinels_read_on_a_replica_and_write_on_the_primary() {
    let deployment = SentinelDeployment::start(2, 3);
    let mut connection = connect(&deployment, ReadFrom::PreferReplica);
    connection
        .preload(&[&log_call::SCRIPT, &read_log::SCRIPT])
        .await
        .expect("preload on the primary and the replica");
    for node in deployment.nodes() {
        node.reset_stats();
    }
    for id in ["a", "b", "c"] {
        log_call(&mut connection, COUNTER, LOG, id)
            .await
            .expect("the write runs on the primary");
    }
    let primary = deployment.primary();
    assert_eq!(primary.calls("evalsha"), 3, "{:?}", primary.command_calls());
    // The replica may lag: read until it has the writes, a bounded number
    // of times.
    let mut seen = None;
    for _ in 0..100 {
        seen = read_log(&mut connection, LOG, "c").await.expect("read");
        if seen.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(seen, Some(1));
    // `EVALSHA_RO`, or `EVALSHA` where this process learned that a server
    // lacks `_RO` (another test's server, for a script of the same name
    // and SHA1): both are reads here, since writes never reach a replica.
    let reads: u64 = (deployment.replicas().iter())
        .map(|replica| replica.calls("evalsha_ro") + replica.calls("evalsha"))
        .sum();
    let calls: Vec<_> = (deployment.nodes().iter())
        .map(|node| (node.port(), node.command_calls()))
        .collect();
    assert!(reads >= 1, "the reads ran on a replica: {calls:?}");
    assert_eq!(primary.calls("evalsha_ro"), 0);

    // A batch goes to the primary as a whole.
    let mut batch = Batch::pipeline();
    let first = batch.add(log_call::call(COUNTER, LOG, "d")).expect("add");
    let second = batch.add(log_call::call(COUNTER, LOG, "e")).expect("add");
    let mut replies = batch.run(&mut connection).await.expect("batch");
    let counts: (i64, i64) = (
        replies.take(first).expect("reply"),
        replies.take(second).expect("reply"),
    );
    assert_eq!(counts, (4, 5));

    // An exactly-once call, sent twice: it runs once.
    let call = log_call_once::call(COUNTER, LOG, "{t}:first", "f");
    let once = call.invoke(&mut connection).await.expect("exactly once");
    let again = call.invoke(&mut connection).await.expect("replayed");
    assert_eq!((once, again), (6, 6));
    let log = executions(&mut deployment.primary().connection().await).await;
    assert_eq!(log.runs.get("f"), Some(&1));

    // A library deploys on the primary, and reaches the replicas.
    if lacks_functions(&mut connection, "deploy through the sentinels").await {
        return;
    }
    quota_lib::LIBRARY
        .deploy(&mut connection, OnConflict::Refuse)
        .await
        .expect("deploy on the primary");
    // Whether or not the replica has the library yet (without it, the
    // call loads it and runs on the primary), the call succeeds.
    let peeked = quota_lib::quota_peek(&mut connection, &["quota:{sentinel}"])
        .await
        .expect("a no-writes function");
    assert_eq!(peeked.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_failover_under_reads_and_writes_keeps_every_promise() {
    let began = Instant::now();
    let deployment = SentinelDeployment::start(2, 3);
    let connection = connect(&deployment, ReadFrom::PreferReplica);
    let slowest_ms = Arc::new(AtomicU64::new(0));
    let slowest = slowest_ms.clone();
    // Even tasks write (refusals such as `READONLY`, from a demoted
    // primary, are sent again: nothing ran); odd tasks read. A read's id
    // is marked, as it leaves no trace in the log.
    let load = Load::start(
        &connection,
        4,
        Duration::from_millis(5),
        move |mut connection, id| {
            let slowest = slowest.clone();
            async move {
                let writes = id
                    .split('-')
                    .next()
                    .and_then(|task| task.parse::<u32>().ok())
                    .is_some_and(|task| task % 2 == 0);
                let started = Instant::now();
                let result: Outcome = if writes {
                    let result = Invocation::from(log_call::call(COUNTER, LOG, &id))
                        .retry_refusals(RETRY_REFUSALS)
                        .deadline(DEADLINE)
                        .invoke(&mut connection)
                        .await;
                    (id, outcome(result))
                } else {
                    let result = read_log::call(LOG, &id)
                        .deadline(DEADLINE)
                        .invoke(&mut connection)
                        .await;
                    (format!("read-{id}"), outcome(result))
                };
                let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                slowest.fetch_max(elapsed, Ordering::Relaxed);
                result
            }
        },
    );
    load.until_every_task_succeeds("the load runs before the failover")
        .await;
    let before = deployment.primary().port();
    let failing_over = Instant::now();
    let after = tokio::task::block_in_place(|| deployment.fail_over());
    let failover_took = failing_over.elapsed();
    assert_ne!(before, after);
    load.until_every_task_succeeds("calls succeed after the failover")
        .await;
    let (outcomes, ended_ok) = load.stop().await;
    let (reads, writes): (Vec<Outcome>, Vec<Outcome>) = outcomes
        .into_iter()
        .partition(|(id, _)| id.starts_with("read-"));
    let log = executions(&mut deployment.primary().connection().await).await;
    let tally = Tally::of(&writes, &log);
    tally.print(
        "sentinel_failover",
        &format!(
            " failover_took={failover_took:.1?} reads={} failed_reads={}",
            reads.len(),
            reads.iter().filter(|(_, result)| result.is_err()).count()
        ),
        began.elapsed(),
    );
    // A write the old primary acknowledged before it was demoted may be
    // lost (Sentinel promotes a replica without waiting for it); nothing
    // runs twice, and "did not run" is true.
    tally.assert_at_most_once("sentinel_failover");
    assert!(tally.ok > 0 && !reads.is_empty(), "{tally:?}");
    assert_eq!(ended_ok, 4, "every task's last call succeeded: {tally:?}");
    let slowest = Duration::from_millis(slowest_ms.load(Ordering::Relaxed));
    assert!(
        slowest <= DEADLINE + Duration::from_secs(1),
        "every call ends by its deadline: the slowest took {slowest:?}"
    );
}
