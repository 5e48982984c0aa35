//! What the fault-injection tests (`faults.rs`, `exactly_once_faults.rs`)
//! share: cluster clients, waiting on conditions, background traffic and
//! load, the faults themselves (`CLIENT PAUSE`, kill -9, failovers), and
//! the tally of what each caller was told against what the server ran.
//!
//! No step waits a fixed time for something to happen: each waits on the
//! condition itself, with a deadline ([`wait_until`]). The sleeps left are
//! pacing, each saying so.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use redis_script::{Error, RetryRefusals};
use redis_script_test::{RedisCluster, RedisServer};

/// Sends refusals again (`MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`, …) for up
/// to about 2 s: long enough for a manual failover or a slot hand-over.
pub const RETRY_REFUSALS: RetryRefusals =
    RetryRefusals::new(25).with_delays(Duration::from_millis(5), Duration::from_millis(100));

/// How long `CLIENT PAUSE` holds a node in the paused scenarios.
pub const PAUSE_MS: u64 = 1000;
/// Calls sent while a node is paused.
pub const PAUSED_CALLS: usize = 8;
/// The response timeout of the paused scenarios' clients: a fraction of
/// the pause.
pub const PAUSED_RESPONSE_TIMEOUT: Duration = Duration::from_millis(250);

/// How long a load task runs at most, if nobody stops it.
const LOAD_LIMIT: Duration = Duration::from_secs(60);
/// How many calls in a row each load task makes successfully before the
/// load counts as running (before a fault) or as recovered (after it).
const CALLS_IN_A_ROW: usize = 10;
/// The deadline of a wait on the load: a failover or a restart settles
/// well within it.
const LOAD_WAIT_LIMIT: Duration = Duration::from_secs(20);

/// A cluster connection from `configure` on a builder seeded with the
/// cluster's URLs.
pub async fn cluster_connection(
    cluster: &RedisCluster,
    configure: impl FnOnce(ClusterClientBuilder) -> ClusterClientBuilder,
) -> ClusterConnection {
    configure(ClusterClientBuilder::new(cluster.urls()))
        .build()
        .expect("cluster client")
        .get_async_connection()
        .await
        .expect("cluster connection")
}

/// The recommended cluster client: no re-sends by redis-rs, so redirects
/// and refusals reach the runtime.
pub fn without_client_retries(builder: ClusterClientBuilder) -> ClusterClientBuilder {
    builder
        .response_timeout(Duration::from_millis(500))
        .retries(0)
}

/// Polls `condition` every 20 ms until it holds; panics after `limit`. The
/// condition may block (`RedisServer::info`, an atomic): it runs in
/// `block_in_place`, so the test needs the multi-threaded runtime.
pub async fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !tokio::task::block_in_place(&mut condition) {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        // Pacing: the poll interval.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A key served by another primary than `primary_port`.
pub fn key_served_elsewhere(cluster: &RedisCluster, primary_port: u16) -> String {
    (0..64)
        .map(|index| format!("{{elsewhere-{index}}}"))
        .find(|key| {
            cluster
                .node_for_slot(redis_script::cluster::key_slot(key.as_bytes()))
                .port()
                != primary_port
        })
        .expect("three primaries serve the slots")
}

/// A `GET` of one key every 10 ms on a connection, until stopped: other
/// traffic keeps a connection busy, as in production. (redis-rs 1.8 queues
/// a request that timed out for a re-send, and sends it the next time its
/// connection task handles another request.)
pub struct Traffic {
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Traffic {
    pub fn start<C>(connection: &C, key: String) -> Self
    where
        C: ConnectionLike + Clone + Send + 'static,
    {
        let done = Arc::new(AtomicBool::new(false));
        let (mut connection, stop) = (connection.clone(), done.clone());
        let task = tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let _: Option<String> = redis::cmd("GET")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
                    .expect("GET on a node that is not paused");
                // Pacing: the traffic's rate.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        Self { done, task }
    }

    pub async fn stop(self) {
        self.done.store(true, Ordering::Relaxed);
        self.task.await.expect("traffic");
    }
}

/// `CLIENT PAUSE <ms>` (every client) on `node`; the connection that sent it.
pub async fn client_pause(node: &RedisServer, ms: u64) -> MultiplexedConnection {
    let mut direct = node.connection().await;
    // Every client (no mode: Redis 6.0 takes none).
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .query_async(&mut direct)
        .await
        .expect("CLIENT PAUSE");
    direct
}

/// Waits until the pause of `node` is over and the server holds no
/// client's command any more: `INFO clients` (held like any other command
/// until the pause ends, then answered after the commands held before it)
/// reports no blocked client. Copies of a call queued behind the pause have
/// run by then.
async fn pause_over(node: &RedisServer) {
    wait_until(
        "the pause is over and no command is held",
        Duration::from_millis(PAUSE_MS) + Duration::from_secs(5),
        || {
            node.info("clients")
                .get("blocked_clients")
                .map(String::as_str)
                == Some("0")
        },
    )
    .await;
}

/// What [`during_pause`] saw.
pub struct Paused<T> {
    /// Each call's outcome, in call order.
    pub outcomes: Vec<T>,
    /// The connection that sent `CLIENT PAUSE` to the node.
    pub direct: MultiplexedConnection,
    /// From the pause to the end of the last call.
    pub calls_took: Duration,
}

/// Pauses `node` for [`PAUSE_MS`] and makes [`PAUSED_CALLS`] concurrent
/// calls, `call(clone of connection, index)`; with `traffic_key`, a `GET`
/// of it every 10 ms meanwhile ([`Traffic`]). Returns once every call
/// ended, the pause is over and every command it held has run.
pub async fn during_pause<C, T, F, Fut>(
    connection: &C,
    node: &RedisServer,
    traffic_key: Option<String>,
    call: F,
) -> Paused<T>
where
    C: ConnectionLike + Clone + Send + 'static,
    T: Send + 'static,
    F: Fn(C, usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let traffic = traffic_key.map(|key| Traffic::start(connection, key));
    let direct = client_pause(node, PAUSE_MS).await;
    let paused_at = Instant::now();
    let calls: Vec<_> = (0..PAUSED_CALLS)
        .map(|index| tokio::spawn(call(connection.clone(), index)))
        .collect();
    let mut outcomes = Vec::new();
    for call in calls {
        outcomes.push(call.await.expect("paused call"));
    }
    let calls_took = paused_at.elapsed();
    if let Some(traffic) = traffic {
        traffic.stop().await;
    }
    pause_over(node).await;
    Paused {
        outcomes,
        direct,
        calls_took,
    }
}

/// `CLUSTER FAILOVER` on the replica of `slot`'s primary: the primary
/// stops taking writes, the replica catches up with it and takes over, so
/// no acknowledged write is lost. Returns once the replica is a primary
/// and the cluster is healthy; the replica that took over.
async fn manual_failover_of_slot(cluster: &RedisCluster, slot: u16) -> &RedisServer {
    let primary = cluster.node_for_slot(slot).port().to_string();
    let replica = tokio::task::block_in_place(|| {
        cluster
            .replicas()
            .into_iter()
            .find(|replica| replica.info("replication").get("master_port") == Some(&primary))
            .expect("the primary has a replica")
    });
    let () = redis::cmd("CLUSTER")
        .arg("FAILOVER")
        .query_async(&mut replica.connection().await)
        .await
        .expect("CLUSTER FAILOVER");
    wait_until("the replica is a primary", Duration::from_secs(10), || {
        replica.info("replication").get("role").map(String::as_str) == Some("master")
    })
    .await;
    tokio::task::block_in_place(|| cluster.wait_until_healthy());
    replica
}

// ---------------------------------------------------------------------------
// Faults under load
// ---------------------------------------------------------------------------

/// kill -9 of `server` while `load` runs, and its restart on the same
/// port. Returns once every load task's calls succeed again.
pub async fn kill_and_restart<T: Called + Send + 'static>(
    server: &mut RedisServer,
    load: &Load<T>,
) {
    load.until_every_task_succeeds("the load runs before the kill")
        .await;
    load.until_a_send_fails_after("calls meet the killed server", || server.stop())
        .await;
    // Returns once the restarted server answers PING.
    tokio::task::block_in_place(|| server.restart());
    load.until_every_task_succeeds("calls succeed after the restart")
        .await;
}

/// kill -9 of the primary of `slot` while `load` runs: its replica takes
/// over once the cluster notices. Returns once the cluster is healthy
/// again and every load task's calls succeed again.
pub async fn kill_primary_of_slot<T: Called + Send + 'static>(
    cluster: &mut RedisCluster,
    slot: u16,
    load: &Load<T>,
) {
    load.until_every_task_succeeds("the load runs before the kill")
        .await;
    tokio::task::block_in_place(|| {
        cluster.stop_primary_of_slot(slot);
        cluster.wait_until_healthy();
    });
    load.until_every_task_succeeds("calls succeed after the failover")
        .await;
}

/// [`manual_failover_of_slot`] while `load` runs. Returns once every load
/// task's calls succeed again; the replica that took over.
pub async fn manual_failover_under_load<'c, T: Called + Send + 'static>(
    cluster: &'c RedisCluster,
    slot: u16,
    load: &Load<T>,
) -> &'c RedisServer {
    load.until_every_task_succeeds("the load runs before the failover")
        .await;
    let replica = manual_failover_of_slot(cluster, slot).await;
    load.until_every_task_succeeds("calls succeed after the failover")
        .await;
    replica
}

// ---------------------------------------------------------------------------
// What each caller was told, against what the server ran
// ---------------------------------------------------------------------------

/// A short name for how a call failed.
pub fn kind(error: &Error) -> String {
    match error {
        Error::Refused { code, .. } => format!("Refused({code})"),
        Error::Script { code, .. } => format!("Script({code})"),
        Error::Connection {
            may_have_executed, ..
        } => format!("Connection(may_have_executed={may_have_executed})"),
        Error::Timeout { .. } => "Timeout".to_owned(),
        Error::Decode { .. } => "Decode".to_owned(),
        Error::CrossSlot { .. } => "CrossSlot".to_owned(),
        _ => format!("{error:?}"),
    }
}

/// One call as its caller saw it, for a [`Tally`] and a [`Load`].
pub trait Called {
    /// The id the script logs each of its executions under.
    fn id(&self) -> &str;
    /// How the call failed; `None` when it ended `Ok`.
    fn error(&self) -> Option<&Error>;
    /// The `Ok` reply, compared with the one the first execution recorded.
    fn reply(&self) -> Option<i64> {
        None
    }
    /// How many times the runtime sent the call again after a failed send.
    fn resends(&self) -> usize {
        0
    }
    /// What each send got, for the report of a call that broke a promise.
    fn sends(&self) -> &[Got] {
        &[]
    }
}

/// What the server recorded: executions by call id and, for a script that
/// keeps it, the reply of each id's first execution.
#[derive(Debug)]
pub struct Ledger {
    pub runs: HashMap<String, i64>,
    pub first: Option<HashMap<String, i64>>,
}

impl Ledger {
    /// `HGETALL` of the execution log and of the first replies.
    pub async fn read<C: ConnectionLike>(
        connection: &mut C,
        log: &str,
        first: Option<&str>,
    ) -> Self {
        let runs = redis::cmd("HGETALL")
            .arg(log)
            .query_async(connection)
            .await
            .expect("HGETALL of the execution log");
        let first = match first {
            Some(key) => Some(
                redis::cmd("HGETALL")
                    .arg(key)
                    .query_async(connection)
                    .await
                    .expect("HGETALL of the first replies"),
            ),
            None => None,
        };
        Ledger { runs, first }
    }

    /// Leaves call `id` out (a warm-up that no tally counts).
    pub fn forget(&mut self, id: &str) {
        self.runs.remove(id);
        if let Some(first) = &mut self.first {
            first.remove(id);
        }
    }
}

/// The numbers of one scenario, compared against the server's [`Ledger`].
#[derive(Debug, Default)]
pub struct Tally {
    pub calls: usize,
    pub ok: usize,
    pub failed: BTreeMap<String, usize>,
    /// Calls the runtime sent again, and its re-sends in all.
    pub resent_calls: usize,
    pub resends: usize,
    /// `Ok` calls that were sent again.
    pub ok_resent: usize,
    pub executions: i64,
    /// Ids that ran more than once.
    pub doubles: usize,
    /// The most executions of one id.
    pub max_runs: i64,
    /// `Ok` calls that did not run exactly once.
    pub ok_not_once: usize,
    /// `Ok` calls that did not run at all (a write lost after it was
    /// acknowledged).
    pub ok_lost: usize,
    /// `Ok` calls whose reply is not the first execution's.
    pub wrong_reply: usize,
    /// Errors that said `may_have_executed() == false` for a call that ran.
    pub wrong_may_have_executed: usize,
    /// Ids with a log entry and no first reply, or the reverse.
    pub inconsistent: usize,
    /// Ids in the log (or the first replies) that no caller sent.
    pub unknown_ids: usize,
    /// The first calls that broke a promise or lost their write, with what
    /// each send got.
    pub offenders: Vec<String>,
}

impl Tally {
    pub fn of<T: Called>(calls: &[T], ledger: &Ledger) -> Self {
        let mut tally = Tally {
            calls: calls.len(),
            ..Tally::default()
        };
        for call in calls {
            let ran = ledger.runs.get(call.id()).copied().unwrap_or(0);
            let first = ledger.first.as_ref().map(|first| first.get(call.id()));
            tally.executions += ran;
            tally.max_runs = tally.max_runs.max(ran);
            tally.doubles += usize::from(ran > 1);
            tally.inconsistent +=
                usize::from(first.is_some_and(|first| (ran > 0) != first.is_some()));
            tally.resent_calls += usize::from(call.resends() > 0);
            tally.resends += call.resends();
            let broken = match call.error() {
                None => {
                    let wrong_reply = first
                        .flatten()
                        .zip(call.reply())
                        .is_some_and(|(first, reply)| *first != reply);
                    tally.ok += 1;
                    tally.ok_resent += usize::from(call.resends() > 0);
                    tally.ok_not_once += usize::from(ran != 1);
                    tally.ok_lost += usize::from(ran == 0);
                    tally.wrong_reply += usize::from(wrong_reply);
                    ran != 1 || wrong_reply
                }
                Some(error) => {
                    let wrong = !error.may_have_executed() && ran > 0;
                    *tally.failed.entry(kind(error)).or_default() += 1;
                    tally.wrong_may_have_executed += usize::from(wrong);
                    ran > 1 || wrong
                }
            };
            if broken && tally.offenders.len() < 10 {
                let told = match call.error() {
                    None => format!("Ok({:?})", call.reply()),
                    Some(error) => format!("Err({error:?})"),
                };
                tally.offenders.push(format!(
                    "{}: ran {ran} (first reply {:?}), caller got {told}, sends got {:?}",
                    call.id(),
                    first.flatten(),
                    call.sends()
                ));
            }
        }
        let sent: HashSet<&str> = calls.iter().map(Called::id).collect();
        let logged = ledger
            .runs
            .keys()
            .chain(ledger.first.iter().flat_map(HashMap::keys));
        tally.unknown_ids = logged.filter(|id| !sent.contains(id.as_str())).count();
        tally
    }

    /// Prints the numbers, under `<calling file>::<scenario>` (such as
    /// `faults::kill_and_restart`), with `extra` after them.
    #[track_caller]
    pub fn print(&self, scenario: &str, extra: &str, elapsed: Duration) {
        let file = std::path::Path::new(std::panic::Location::caller().file());
        let suite = file.file_stem().map(|stem| stem.to_string_lossy());
        let suite = suite.as_deref().unwrap_or("fault_kit");
        eprintln!(
            "{suite}::{scenario}: calls={} ok={} failed={:?} resent_calls={} resends={} ok_resent={} \
             executions={} doubles={} max_runs={} ok_not_once={} ok_lost={} wrong_reply={} \
             wrong_may_have_executed={} inconsistent={} unknown_ids={}{extra} in {elapsed:.2?}",
            self.calls,
            self.ok,
            self.failed,
            self.resent_calls,
            self.resends,
            self.ok_resent,
            self.executions,
            self.doubles,
            self.max_runs,
            self.ok_not_once,
            self.ok_lost,
            self.wrong_reply,
            self.wrong_may_have_executed,
            self.inconsistent,
            self.unknown_ids,
        );
    }

    /// Every `Ok` call ran exactly once (with the first execution's reply,
    /// where it is recorded), nothing ran twice, a "did not run" is true.
    pub fn assert_exactly_once(&self, scenario: &str) {
        assert_eq!(self.ok_not_once, 0, "{scenario}: {self:?}");
        self.assert_at_most_once(scenario);
    }

    /// [`Tally::assert_exactly_once`] but for `Ok` calls whose write was
    /// lost (they ran zero times).
    pub fn assert_at_most_once(&self, scenario: &str) {
        assert_eq!(self.ok_not_once, self.ok_lost, "{scenario}: {self:?}");
        assert_eq!(self.doubles, 0, "{scenario}: {self:?}");
        assert_eq!(self.wrong_reply, 0, "{scenario}: {self:?}");
        self.assert_truthful(scenario);
    }

    /// What holds whatever the client re-sends: a "did not run" is true,
    /// the log and the first replies agree, and nothing ran that no caller
    /// sent.
    pub fn assert_truthful(&self, scenario: &str) {
        assert_eq!(self.wrong_may_have_executed, 0, "{scenario}: {self:?}");
        assert_eq!(self.inconsistent, 0, "{scenario}: {self:?}");
        assert_eq!(self.unknown_ids, 0, "{scenario}: {self:?}");
    }
}

// ---------------------------------------------------------------------------
// Load: tasks calling until stopped
// ---------------------------------------------------------------------------

/// What the load tasks have done so far, for waiting on.
struct Progress {
    /// One per task.
    tasks: Vec<TaskProgress>,
    /// Sends that failed at the connection (no reply from the server: a
    /// dropped connection, a refused one, a timeout), all tasks together.
    failed_sends: AtomicUsize,
}

#[derive(Default)]
struct TaskProgress {
    /// Calls that ended `Ok`.
    ok: AtomicUsize,
    /// How many of the last calls ended `Ok` in a row.
    in_a_row: AtomicUsize,
}

/// What one send got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    /// A reply (for a pipeline: its replies, whatever they hold).
    Reply,
    /// An error reply, by its code (`MOVED`, `NOSCRIPT`, …).
    Error(String),
    /// No reply: how the send failed at the connection (`timeout`,
    /// `refused`, `dropped`, or redis-rs's error kind).
    Failed(String),
}

impl Got {
    fn of_error(error: &redis::RedisError) -> Got {
        match error.code() {
            Some(code) => Got::Error(code.to_owned()),
            None if error.is_timeout() => Got::Failed("timeout".to_owned()),
            None if error.is_connection_refusal() => Got::Failed("refused".to_owned()),
            None if error.is_connection_dropped() => Got::Failed("dropped".to_owned()),
            None => Got::Failed(format!("{:?}", error.kind())),
        }
    }
}

/// Told what each send on a [`Watched`] connection got.
pub trait Watch {
    fn got(&mut self, got: Got);
}

/// A connection that tells `watch` what each send got.
#[derive(Clone)]
pub struct Watched<C, W> {
    inner: C,
    watch: W,
}

impl<C, W> Watched<C, W> {
    pub fn new(inner: C, watch: W) -> Self {
        Self { inner, watch }
    }
}

impl<C: ConnectionLike + Send, W: Watch + Send> ConnectionLike for Watched<C, W> {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let reply = self.inner.req_packed_command(cmd).await;
            self.watch.got(match &reply {
                Err(error) => Got::of_error(error),
                Ok(Value::ServerError(error)) => Got::Error(error.code().to_owned()),
                Ok(_) => Got::Reply,
            });
            reply
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let replies = (self.inner)
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.watch.got(match &replies {
                Err(error) => Got::of_error(error),
                Ok(_) => Got::Reply,
            });
            replies
        })
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }
}

/// Counts the load's sends that failed at the connection.
#[derive(Clone)]
pub struct FailedSends(Arc<Progress>);

impl Watch for FailedSends {
    fn got(&mut self, got: Got) {
        if matches!(got, Got::Failed(_)) {
            self.0.failed_sends.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The connection a load task calls on.
pub type LoadConnection<C> = Watched<C, FailedSends>;

/// Tasks making calls with fresh ids (`<task>-<round>`) on clones of one
/// connection until stopped (or [`LOAD_LIMIT`]), each pausing `backoff`
/// after a failed call.
pub struct Load<T> {
    done: Arc<AtomicBool>,
    progress: Arc<Progress>,
    tasks: Vec<tokio::task::JoinHandle<Vec<T>>>,
}

impl<T: Called + Send + 'static> Load<T> {
    pub fn start<C, F, Fut>(connection: &C, tasks: usize, backoff: Duration, call: F) -> Self
    where
        C: ConnectionLike + Clone + Send + 'static,
        F: Fn(LoadConnection<C>, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = T> + Send + 'static,
    {
        let done = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Progress {
            tasks: (0..tasks).map(|_| TaskProgress::default()).collect(),
            failed_sends: AtomicUsize::new(0),
        });
        let connection = Watched::new(connection.clone(), FailedSends(progress.clone()));
        let call = Arc::new(call);
        let tasks = (0..tasks)
            .map(|task| {
                let (connection, done) = (connection.clone(), done.clone());
                let (progress, call) = (progress.clone(), call.clone());
                tokio::spawn(async move {
                    let deadline = Instant::now() + LOAD_LIMIT;
                    let mut outcomes = Vec::new();
                    for round in 0.. {
                        if done.load(Ordering::Relaxed) || Instant::now() >= deadline {
                            break;
                        }
                        let outcome = call(connection.clone(), format!("{task}-{round}")).await;
                        let failed = outcome.error().is_some();
                        let this = &progress.tasks[task];
                        if failed {
                            this.in_a_row.store(0, Ordering::Relaxed);
                        } else {
                            this.ok.fetch_add(1, Ordering::Relaxed);
                            this.in_a_row.fetch_add(1, Ordering::Relaxed);
                        }
                        outcomes.push(outcome);
                        if failed {
                            // Pacing: a failing node may answer at once;
                            // the backoff keeps the task from spinning.
                            tokio::time::sleep(backoff).await;
                        }
                    }
                    outcomes
                })
            })
            .collect();
        Self {
            done,
            progress,
            tasks,
        }
    }

    /// Waits until the last [`CALLS_IN_A_ROW`] calls of every task ended
    /// `Ok`, each of them after this wait began.
    pub async fn until_every_task_succeeds(&self, what: &str) {
        let ok_before: Vec<usize> = (self.progress.tasks.iter())
            .map(|task| task.ok.load(Ordering::Relaxed))
            .collect();
        wait_until(what, LOAD_WAIT_LIMIT, || {
            self.progress
                .tasks
                .iter()
                .zip(&ok_before)
                .all(|(task, before)| {
                    task.in_a_row.load(Ordering::Relaxed) >= CALLS_IN_A_ROW
                        && task.ok.load(Ordering::Relaxed) - before >= CALLS_IN_A_ROW
                })
        })
        .await;
    }

    /// Runs `fault` (it may block), then waits until a task's send has
    /// failed at the connection since just before `fault` began. (The sends
    /// in flight may fail before `fault` returns; later ones may be held by
    /// the client while it reconnects.)
    pub async fn until_a_send_fails_after(&self, what: &str, fault: impl FnOnce()) {
        let failed = &self.progress.failed_sends;
        let before = failed.load(Ordering::Relaxed);
        tokio::task::block_in_place(fault);
        wait_until(what, LOAD_WAIT_LIMIT, || {
            failed.load(Ordering::Relaxed) > before
        })
        .await;
    }

    /// Stops the tasks: every call, and how many tasks' last call
    /// succeeded (all of them once the fault is over).
    pub async fn stop(self) -> (Vec<T>, usize) {
        self.done.store(true, Ordering::Relaxed);
        let mut outcomes = Vec::new();
        let mut ended_ok = 0;
        for task in self.tasks {
            let calls = task.await.expect("load task");
            ended_ok += usize::from(calls.last().is_some_and(|call| call.error().is_none()));
            outcomes.extend(calls);
        }
        (outcomes, ended_ok)
    }
}
