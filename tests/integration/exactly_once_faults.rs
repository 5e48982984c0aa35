//! Exactly-once calls under faults: a paused server, a killed one, cluster
//! failovers. The script (`log_call_once`) logs each execution of a request
//! id server-side and keeps the reply its first execution gave; every
//! scenario compares that with what each caller was told. The promises: an
//! `Ok` call ran exactly once and got the first execution's reply, no
//! request ran twice (whoever re-sent it: the runtime or redis-rs), and an
//! error with `may_have_executed() == false` did not run.

use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script::{Error, RetryRefusals};
use redis_script_test::{RedisCluster, RedisServer, parse_commandstats};
use redis_script_tests::faults::log_call_once;

use crate::fault_kit::{
    Called, Got, Ledger, Load, PAUSE_MS, PAUSED_CALLS, PAUSED_RESPONSE_TIMEOUT, RETRY_REFUSALS,
    Tally, Watch, Watched, cluster_connection, during_pause, key_served_elsewhere,
    kill_and_restart, kill_primary_of_slot, manual_failover_under_load, without_client_retries,
};

/// A counter of all executions.
const COUNTER: &str = "{o}:n";
/// The execution log: request id => executions.
const LOG: &str = "{o}:log";
/// Request id => the reply of its first execution.
const FIRST: &str = "{o}:first";
/// The prefix of the records (`exactly_once`'s default).
const RECORDS: &str = "rs:once:*";

/// One call as its caller saw it: the request id, the reply, how many
/// times the runtime sent it again after a failed send, and what each send
/// got.
#[derive(Debug)]
struct Sent {
    id: String,
    /// The call itself, with its call id, to invoke again after the fault.
    call: redis_script::Invocation<i64>,
    result: Result<i64, Error>,
    resends: usize,
    sends: Vec<Got>,
}

impl Called for Sent {
    fn id(&self) -> &str {
        &self.id
    }

    fn error(&self) -> Option<&Error> {
        self.result.as_ref().err()
    }

    fn reply(&self) -> Option<i64> {
        self.result.as_ref().ok().copied()
    }

    fn resends(&self) -> usize {
        self.resends
    }

    fn sends(&self) -> &[Got] {
        &self.sends
    }
}

/// Invokes again, once the fault is over, every call that failed and may
/// have run: the same `Call` (the same call id) gets the first execution's
/// reply if it ran, or runs now. How many calls were settled.
async fn settle<C: ConnectionLike>(connection: &mut C, sent: &mut [Sent]) -> usize {
    let mut settled = 0;
    for call in sent {
        if call.result.as_ref().is_err_and(Error::may_have_executed) {
            call.result = call.call.invoke(connection).await;
            settled += 1;
        }
    }
    settled
}

/// What each send of one call got, and how many sends followed a failed
/// one (a timeout, a dropped connection, a refusal; not `NOSCRIPT`, whose
/// `EVAL` is the cold path): the re-sends the caller cannot see.
#[derive(Default)]
struct Sends {
    resends: usize,
    last_failed: bool,
    got: Vec<Got>,
}

impl Watch for &mut Sends {
    fn got(&mut self, got: Got) {
        self.resends += usize::from(self.last_failed);
        self.last_failed = !matches!(&got, Got::Reply) && got != Got::Error("NOSCRIPT".to_owned());
        self.got.push(got);
    }
}

/// Calls the script once for request `id`, with a fresh call id.
async fn send<C: ConnectionLike + Send>(
    connection: C,
    id: String,
    retry: Option<RetryRefusals>,
) -> Sent {
    let mut call = redis_script::Invocation::from(log_call_once::call(COUNTER, LOG, FIRST, &id));
    if let Some(policy) = retry {
        call = call.retry_refusals(policy);
    }
    let mut sends = Sends::default();
    let result = call.invoke(&mut Watched::new(connection, &mut sends)).await;
    Sent {
        id,
        call,
        result,
        resends: sends.resends,
        sends: sends.got,
    }
}

/// What the server recorded: executions and first replies, by request id.
async fn ledger<C: ConnectionLike>(connection: &mut C) -> Ledger {
    Ledger::read(connection, LOG, Some(FIRST)).await
}

// ---------------------------------------------------------------------------
// CLIENT PAUSE longer than the response timeout
// ---------------------------------------------------------------------------

/// Script executions on `node` (`EVALSHA` and `EVAL` that did not fail):
/// the body's runs and the replays of recorded replies.
async fn script_runs(node: &RedisServer) -> u64 {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut node.connection().await)
        .await
        .expect("INFO commandstats");
    let stats = parse_commandstats(&text);
    ["evalsha", "eval"]
        .iter()
        .filter_map(|command| stats.get(*command))
        .map(|stat| stat.calls - stat.failed_calls)
        .sum()
}

/// Pauses `node` (which serves `{o}`) for `PAUSE_MS` and sends
/// `PAUSED_CALLS` concurrent calls on clones of `connection`; with
/// `traffic_key`, a `GET` of it every 10 ms meanwhile (on another node:
/// redis-rs's cluster connection sends its queued re-sends when it handles
/// other requests). The tally of the paused calls and how many sends the
/// server answered from a record (replays). Checks the records on the way
/// and deletes them, the log and the first replies.
async fn paused_calls<C>(
    connection: &C,
    node: &RedisServer,
    traffic_key: Option<String>,
    scenario: &str,
) -> (Tally, u64)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let began = Instant::now();
    let warm = send(connection.clone(), format!("{scenario}-warm"), None).await;
    assert!(warm.result.is_ok(), "{scenario}: {warm:?}");
    let runs_before = script_runs(node).await;
    let paused = during_pause(connection, node, traffic_key, |connection, call| {
        let id = format!("{scenario}-{call}");
        send(connection, id, None)
    })
    .await;
    let (sent, mut direct, calls_took) = (paused.outcomes, paused.direct, paused.calls_took);
    let mut server = ledger(&mut connection.clone()).await;
    server.forget(&warm.id);
    let tally = Tally::of(&sent, &server);
    let runs = script_runs(node).await - runs_before;
    let replays = runs
        .checked_sub(tally.executions as u64)
        .unwrap_or_else(|| panic!("{scenario}: {runs} script runs, {tally:?}"));
    // One record per executed call, in the slot of the keys, with its TTL.
    let records: Vec<String> = redis::cmd("KEYS")
        .arg(RECORDS)
        .query_async(&mut direct)
        .await
        .expect("KEYS");
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    for record in &records {
        assert_eq!(
            redis_script::cluster::key_slot(record.as_bytes()),
            slot,
            "{record}"
        );
        let ttl: i64 = redis::cmd("PTTL")
            .arg(record)
            .query_async(&mut direct)
            .await
            .expect("PTTL");
        assert!(ttl > 0 && ttl <= 600_000, "{record}: PTTL {ttl}");
    }
    assert_eq!(
        records.len() as i64,
        tally.executions + 1,
        "{scenario}: a record per execution (and the warm-up's): {records:?}"
    );
    let () = redis::cmd("DEL")
        .arg(LOG)
        .arg(FIRST)
        .arg(&records)
        .query_async(&mut direct)
        .await
        .expect("DEL");
    tally.print(
        &format!("client_pause_{scenario}"),
        &format!(" replays={replays} calls_took={calls_took:.2?}"),
        began.elapsed(),
    );
    (tally, replays)
}

/// Every paused call ends `Ok`: each was sent again (with its id) after
/// its timeouts, its copies queued behind the pause ran once the pause
/// ended, the first ran the body and the others replayed its record.
fn assert_paused_calls_resent_and_replayed(scenario: &str, tally: &Tally, replays: u64) {
    tally.assert_exactly_once(scenario);
    assert_eq!(tally.ok, PAUSED_CALLS, "{scenario}: {tally:?}");
    assert_eq!(tally.ok_resent, PAUSED_CALLS, "{scenario}: {tally:?}");
    assert!(replays > 0, "{scenario}: replays={replays} {tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_longer_than_the_response_timeout_standalone() {
    let server = RedisServer::start();
    let config =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(PAUSED_RESPONSE_TIMEOUT));
    let connection = server
        .client()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("connection");
    let (tally, replays) = paused_calls(&connection, &server, None, "standalone").await;
    assert_paused_calls_resent_and_replayed("client_pause_standalone", &tally, replays);
}

/// The cluster client where redis-rs re-sends a request after each
/// response timeout until its overall timeout (longer than the pause): in
/// `faults.rs` the plain script ran up to 5 times per call with it. Here
/// the copies replay the first one's record; then the same with
/// `retries(0)`, where the runtime re-sends instead of redis-rs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_longer_than_the_response_timeout_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    let node = cluster.node_for_slot(slot);
    let other_key = key_served_elsewhere(&cluster, node.port());
    for (scenario, retries) in [
        ("cluster_client_resends", None),
        ("cluster_retries0", Some(0)),
    ] {
        let connection = cluster_connection(&cluster, |builder| {
            let builder = builder
                .response_timeout(PAUSED_RESPONSE_TIMEOUT)
                .overall_response_timeout(Some(Duration::from_millis(3 * PAUSE_MS)));
            match retries {
                Some(retries) => builder.retries(retries),
                None => builder,
            }
        })
        .await;
        let (tally, replays) =
            paused_calls(&connection, node, Some(other_key.clone()), scenario).await;
        tally.assert_exactly_once(scenario);
        assert_eq!(tally.ok, PAUSED_CALLS, "{scenario}: {tally:?}");
        assert!(replays > 0, "{scenario}: replays={replays} {tally:?}");
        if retries == Some(0) {
            assert_paused_calls_resent_and_replayed(scenario, &tally, replays);
        }
    }
}

// ---------------------------------------------------------------------------
// Load: tasks calling until stopped
// ---------------------------------------------------------------------------

/// `tasks` tasks calling the script with fresh request ids (and fresh call
/// ids, each call invoked once) on clones of `connection`, pausing 20 ms
/// after a failed call; refusals are sent again as `retry` says.
fn start_load<C>(connection: &C, tasks: usize, retry: Option<RetryRefusals>) -> Load<Sent>
where
    C: ConnectionLike + Clone + Send + 'static,
{
    Load::start(
        connection,
        tasks,
        Duration::from_millis(20),
        move |connection, id| send(connection, id, retry),
    )
}

/// kill -9 and restart of a standalone server that fsyncs every write
/// (so the log, the first replies and the records survive with each
/// other): calls in flight are sent again with their ids, on a
/// `ConnectionManager`, which reconnects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_and_restart_under_load_runs_every_call_at_most_once() {
    const TASKS: usize = 8;
    let began = Instant::now();
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let manager = redis::aio::ConnectionManager::new(server.client())
        .await
        .expect("connection manager");
    let load = start_load(&manager, TASKS, None);
    kill_and_restart(&mut server, &load).await;
    let (sent, ended_ok) = load.stop().await;
    let tally = Tally::of(&sent, &ledger(&mut server.connection().await).await);
    let scenario = "kill_and_restart";
    tally.print(scenario, &format!(" ended_ok={ended_ok}"), began.elapsed());
    tally.assert_exactly_once(scenario);
    assert!(
        tally.ok_resent > 0,
        "{scenario}: calls in flight were sent again and succeeded: {tally:?}"
    );
    assert_eq!(
        ended_ok, TASKS,
        "calls succeed after the restart: {tally:?}"
    );
}

// ---------------------------------------------------------------------------
// Cluster failovers under load
// ---------------------------------------------------------------------------

/// `CLUSTER FAILOVER` on the replica of the `{o}` primary: the primary
/// stops taking writes until the replica caught up and took over, so no
/// acknowledged write (nor record) is lost. Calls held meanwhile are
/// answered `MOVED` (they did not run) or time out (and are sent again
/// with their ids).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_cluster_failover_under_load_runs_every_ok_call_exactly_once() {
    const TASKS: usize = 4;
    let began = Instant::now();
    let cluster = RedisCluster::start(3, 1);
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    let connection = cluster_connection(&cluster, without_client_retries).await;
    let load = start_load(&connection, TASKS, Some(RETRY_REFUSALS));
    let replica = manual_failover_under_load(&cluster, slot, &load).await;
    let (sent, ended_ok) = load.stop().await;
    let tally = Tally::of(&sent, &ledger(&mut cluster.connection().await).await);
    let scenario = "manual_cluster_failover";
    tally.print(scenario, &format!(" ended_ok={ended_ok}"), began.elapsed());
    tally.assert_exactly_once(scenario);
    assert!(
        tally.resent_calls > 0,
        "{scenario}: calls were sent again: {tally:?}"
    );
    assert_eq!(
        ended_ok, TASKS,
        "calls succeed after the failover: {tally:?}"
    );
    assert_eq!(
        tokio::task::block_in_place(|| cluster.node_for_slot(slot).port()),
        replica.port(),
        "the replica took the slot over"
    );
}

/// kill -9 of the `{o}` primary: its replica takes over once the cluster
/// notices. Replication is asynchronous: a call the old primary ran and
/// answered `Ok` may be missing on the new one, its log entry, first reply
/// and record lost together (the script's writes replicate as one
/// transaction). Such an `Ok` call ran zero times as far as the survivors
/// know (`ok_lost`); that is the only exception to exactly once here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_under_load_never_runs_a_call_twice() {
    const TASKS: usize = 4;
    let began = Instant::now();
    let mut cluster = RedisCluster::start(3, 1);
    let slot = redis_script::cluster::key_slot(LOG.as_bytes());
    let connection = cluster_connection(&cluster, without_client_retries).await;
    let load = start_load(&connection, TASKS, Some(RETRY_REFUSALS));
    kill_primary_of_slot(&mut cluster, slot, &load).await;
    let (mut sent, ended_ok) = load.stop().await;
    let mut reader = cluster.connection().await;
    let settled = settle(&mut reader, &mut sent).await;
    let tally = Tally::of(&sent, &ledger(&mut reader).await);
    let scenario = "cluster_failover";
    tally.print(
        scenario,
        &format!(" ended_ok={ended_ok} settled={settled}"),
        began.elapsed(),
    );
    tally.assert_at_most_once(scenario);
    // Calls that ran out of retries while the slot had no primary ended
    // with "may have run"; invoked again, each replayed or ran, once.
    assert!(
        sent.iter().all(|call| match &call.result {
            Ok(_) => true,
            Err(error) => !error.may_have_executed(),
        }),
        "{scenario}: settled calls succeed: {tally:?}"
    );
    assert!(
        tally.resent_calls > 0 || !tally.failed.is_empty(),
        "{scenario}: calls met the dead primary: {tally:?}"
    );
    assert_eq!(
        ended_ok, TASKS,
        "calls succeed after the failover: {tally:?}"
    );
}
