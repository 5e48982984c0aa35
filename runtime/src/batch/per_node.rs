//! A pipeline whose calls are in several slots of a cluster, sent in one
//! request per primary, on connections of the batch's own (and a
//! transaction, as one request to its slot's primary).
//!
//! A node's request holds the transactions of every slot it serves (a
//! slot's lone command goes bare: one command runs whole or not at all).
//! redis-rs's cluster connection sends a whole request again when any reply
//! in it is a redirection, which would run again the transactions of the
//! request that had run; on a connection that does not follow
//! redirections, the batch reads each transaction's answer and sends again
//! only those refused whole (nothing of them ran), to where the refusal
//! says.
//!
//! The body of a script goes at most once per node per batch: a node that
//! answered a script before gets `EVALSHA`s only. A transaction of calls of
//! one script either finds the script (all run) or not (`NOSCRIPT` to each,
//! none ran: nothing between `MULTI` and `EXEC` can load it), so after
//! `NOSCRIPT` it is sent again with the body, and calls of one slot keep
//! their order. A transaction that mixes scripts, libraries or plain
//! commands carries each of its scripts' bodies, as a slot's transaction
//! sent through the cluster connection does.
//!
//! The slot map comes from the nodes themselves (`CLUSTER SLOTS` on the
//! connections of the batch), not from redis-rs's cluster connection: a
//! cluster connection that lost its way after a redirection (in our runs,
//! one with `retries(0)` stopped answering during a slot migration) does
//! not stop the batches.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{Cmd, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Pipeline, Value};

use super::across_slots::{
    Answered, Group, Outcome, REDIRECTED_RETRIES, answered, named_node, pause, redirection,
    replies_of,
};
use super::{BATCH, Batch, Replies, deadline_passed};
use crate::error::{Error, Origin};
use crate::topology::{Address, SlotMap};

/// Connections of their own to a cluster's primaries, through which a
/// [`Batch`] pipeline across slots goes in one request per node (see
/// [`NodeConnections::run_batch`]).
///
/// Made from the settings of any node of the cluster (a URL or a
/// [`redis::ConnectionInfo`]): each primary is reached at the address
/// `CLUSTER SLOTS` gives it, with those settings' credentials, database,
/// protocol and TLS. It opens one multiplexed connection per primary, the
/// first time a batch needs it, and keeps it for later batches (a failed
/// one is opened again); it also remembers which node answered which
/// script, so that later batches send no body there. Share one per
/// cluster, behind an `Arc` or a `static`: it is `Send + Sync`, and
/// `run_batch` takes `&self`.
///
/// ```no_run
/// # async fn demo() -> Result<(), redis_script::Error> {
/// use redis_script::{Batch, cluster, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let nodes = cluster::NodeConnections::new("redis://127.0.0.1:7000")?;
/// let mut batch = Batch::pipeline();
/// let first = batch.add(release_lock::call("lock:{a}", "token-a"))?;
/// let second = batch.add(release_lock::call("lock:{b}", "token-b"))?;
/// let mut replies = nodes.run_batch(&batch).await?;
/// let released = replies.take(first)? + replies.take(second)?;
/// # let _ = released;
/// # Ok(()) }
/// ```
pub struct NodeConnections {
    /// How to reach a node: any node's settings, its address replaced.
    settings: ConnectionInfo,
    /// The connection to each node opened so far.
    open: Mutex<HashMap<Address, MultiplexedConnection>>,
    /// Per node, the SHA1s of the scripts it last answered a call of
    /// (anything but `NOSCRIPT`): sent there as `EVALSHA` only.
    cached: Mutex<HashMap<Address, HashSet<&'static str>>>,
    /// The slot map the last batch read, until a redirection or a failure
    /// says it is out of date.
    slot_map: Mutex<Option<Arc<SlotMap>>>,
}

impl std::fmt::Debug for NodeConnections {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open: Vec<Address> = lock(&self.open).keys().cloned().collect();
        formatter
            .debug_struct("NodeConnections")
            .field("open", &open)
            .finish_non_exhaustive()
    }
}

/// The guarded value, even after a panic elsewhere: the maps hold nothing a
/// half-done update could make wrong (a missing entry is opened or sent
/// again).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How one slot's transaction goes in a node's request.
struct Planned<'g> {
    /// The slot's index in the batch's slots.
    slot: usize,
    group: &'g Group,
    /// After an `ASK`: `ASKING` goes first.
    asking: bool,
    /// Sent as `EVALSHA`s only (see [`Group::by_sha1`]).
    by_sha1: bool,
}

impl Planned<'_> {
    /// Whether it goes as one command, without `MULTI`/`EXEC`: a lone
    /// command runs whole or not at all.
    fn bare(&self) -> bool {
        self.group.sent.len() == 1
    }
}

/// One node's request being planned.
struct NodeRequest<'g, 'c> {
    address: Address,
    /// The scripts the node answered before.
    answered: &'c HashSet<&'static str>,
    /// The scripts whose body the request carries so far.
    bodies: HashSet<&'static str>,
    planned: Vec<Planned<'g>>,
}

/// Where one slot is in its sending.
#[derive(Default)]
struct SlotState {
    /// Its next transaction to send.
    next: usize,
    outcomes: Vec<Outcome>,
    /// Its node, as the last `MOVED` named it.
    moved: Option<Address>,
    /// The node an `ASK` names, for the next send only.
    ask: Option<Address>,
    /// Sends of the current transaction refused for a redirection.
    redirects: u32,
    /// Sends of the current transaction that failed on the connection.
    failures: u32,
    /// Sends of the current transaction answered `NOSCRIPT` (none of its
    /// calls ran): after one, it relies on no memory of the node; after
    /// two, it carries the body itself.
    noscripts: u32,
}

impl SlotState {
    /// The current transaction is answered: on to the next.
    fn done(&mut self, outcome: Outcome) {
        self.outcomes.push(outcome);
        self.next += 1;
        self.redirects = 0;
        self.failures = 0;
        self.noscripts = 0;
    }
}

impl NodeConnections {
    /// Connections to the nodes of a cluster, reached with the settings of
    /// `node` (any node's URL or [`redis::ConnectionInfo`]; its own address
    /// is not used). Nothing is opened until a batch runs.
    ///
    /// Fails when `node` is not valid connection settings, or is a Unix
    /// socket (cluster nodes are reached over TCP).
    ///
    /// ```
    /// let nodes = redis_script::cluster::NodeConnections::new("redis://user:secret@10.0.0.1:7000/")?;
    /// # Ok::<(), redis_script::Error>(())
    /// ```
    pub fn new(node: impl IntoConnectionInfo) -> Result<Self, Error> {
        let settings = node
            .into_connection_info()
            .map_err(|error| Error::from_failure(Origin::label(BATCH), error))?;
        if let ConnectionAddr::Unix(path) = settings.addr() {
            return Err(Error::from_failure(
                Origin::label(BATCH),
                redis::RedisError::from((
                    redis::ErrorKind::InvalidClientConfig,
                    "cluster nodes are reached over TCP, not a Unix socket",
                    path.display().to_string(),
                )),
            ));
        }
        Ok(Self {
            settings,
            open: Mutex::new(HashMap::new()),
            cached: Mutex::new(HashMap::new()),
            slot_map: Mutex::new(None),
        })
    }

    /// Runs `batch` on the cluster: a pipeline in one request per primary,
    /// sent to all at once, each slot's commands in one transaction (a
    /// slot's lone command bare); a transaction (its calls share one slot)
    /// as one. Replies come in the order the commands were queued. The
    /// slot map (`CLUSTER SLOTS`) is read on the first batch, and again
    /// after a redirection or a failure, from a node it listed or the node
    /// of the settings.
    ///
    /// The promises of [`cluster::run_batch`](crate::cluster::run_batch)
    /// hold: calls of one slot run in the order queued, with no other
    /// command between them; calls of different slots in no promised order;
    /// a transaction refused for a redirection (`MOVED`, `ASK`, `TRYAGAIN`,
    /// `CLUSTERDOWN`: nothing of it ran) is sent again where the slot now
    /// is, a few times; a node that fails fails its slots' calls, each
    /// saying whether it may have run, and the others get their replies (a
    /// connection refused sent nothing: its calls go again once the slot
    /// map is read again, a few times); a slot's transaction of nothing but
    /// calls of `exactly_once` scripts is sent again after any connection
    /// failure. Slots with more commands than
    /// [`Batch::slot_transaction_limit`] send their further transactions in
    /// later requests, each after the one before was answered. The whole
    /// run ends by the batch's deadline.
    pub async fn run_batch(&self, batch: &Batch) -> Result<Replies, Error> {
        let run = async {
            let slots = batch.slot_transactions();
            let commands: Vec<&Cmd> = batch.pipeline.cmd_iter().collect();
            let states = crate::timer::within(batch.deadline, self.run_slots(&slots, &commands))
                .await
                .map_err(|_| deadline_passed(batch.deadline))?;
            let sent = slots
                .iter()
                .zip(states)
                .flat_map(|(transactions, state)| transactions.iter().zip(state.outcomes));
            Ok(replies_of(batch, sent))
        };
        crate::telemetry::traced(batch.span(), run).await
    }

    /// Sends every slot's transactions, in rounds of one request per node,
    /// until each has an outcome.
    async fn run_slots(&self, slots: &[Vec<Group>], commands: &[&Cmd]) -> Vec<SlotState> {
        let mut states: Vec<SlotState> = slots.iter().map(|_| SlotState::default()).collect();
        let mut follow_up = FollowUp::default();
        let mut map_failures = 0;
        loop {
            let pending: Vec<usize> = (0..slots.len())
                .filter(|&slot| states[slot].next < slots[slot].len())
                .collect();
            if pending.is_empty() {
                return states;
            }
            if let Some(attempt) = follow_up.wait {
                pause(attempt).await;
            }
            let known = lock(&self.slot_map).clone();
            let map = match known {
                Some(map) if !follow_up.map_is_stale => map,
                known => match self.read_slot_map(known.as_deref()).await {
                    Ok(map) => {
                        let map = Arc::new(map);
                        *lock(&self.slot_map) = Some(Arc::clone(&map));
                        map_failures = 0;
                        map
                    }
                    // The node asked may be the one that just failed.
                    Err(_) if map_failures < REDIRECTED_RETRIES => {
                        follow_up = FollowUp {
                            map_is_stale: true,
                            wait: Some(map_failures),
                        };
                        map_failures += 1;
                        continue;
                    }
                    Err(error) => {
                        // Nothing of the pending transactions was sent.
                        for slot in pending {
                            let state = &mut states[slot];
                            while state.next < slots[slot].len() {
                                state.done(Err(error.clone()));
                            }
                        }
                        return states;
                    }
                },
            };
            follow_up = FollowUp::default();
            let plan = self.plan(slots, &mut states, &pending, &map, &mut follow_up);
            // Every request built before the first goes out, so that the
            // nodes' requests leave together.
            let requests: Vec<Pipeline> = plan
                .iter()
                .map(|(_, planned)| request(planned, commands))
                .collect();
            let sends = plan
                .iter()
                .zip(&requests)
                .map(|((address, _), pipeline)| async move {
                    let count = pipeline.len();
                    let answer = match self.connection(address).await {
                        Ok(mut connection) => {
                            connection.req_packed_commands(pipeline, 0, count).await
                        }
                        Err(error) => Err(error),
                    };
                    if answer.is_err() {
                        lock(&self.open).remove(address);
                    }
                    answer
                });
            let answers = futures_util::future::join_all(sends).await;
            for ((address, planned), answer) in plan.iter().zip(answers) {
                self.read(address, planned, answer, &mut states, &mut follow_up);
            }
        }
    }

    /// Which node gets each pending slot's current transaction, and how.
    /// A slot no node serves is answered `CLUSTERDOWN` after the usual
    /// retries.
    fn plan<'g>(
        &self,
        slots: &'g [Vec<Group>],
        states: &mut [SlotState],
        pending: &[usize],
        map: &SlotMap,
        follow_up: &mut FollowUp,
    ) -> Vec<(Address, Vec<Planned<'g>>)> {
        let cached = lock(&self.cached);
        let no_script: HashSet<&'static str> = HashSet::new();
        let mut plan: Vec<NodeRequest<'g, '_>> = Vec::new();
        for &slot in pending {
            let (Some(group), Some(state)) = (
                slots
                    .get(slot)
                    .and_then(|groups| groups.get(states[slot].next)),
                states.get_mut(slot),
            ) else {
                continue;
            };
            let asking = state.ask.is_some();
            let address = state.ask.take().or_else(|| state.moved.clone());
            // A command without a slot goes to any primary.
            let owner = match group.slot {
                Some(slot) => map.node_of(slot),
                None => map.nodes().first(),
            };
            let Some(address) = address.as_ref().or(owner) else {
                if state.redirects < REDIRECTED_RETRIES {
                    follow_up.map_is_stale = true;
                    follow_up.wait_at_least(state.redirects);
                    state.redirects += 1;
                } else {
                    state.done(Ok(vec![unserved(); group.sent.len()]));
                }
                continue;
            };
            let node = match plan.iter().position(|node| node.address == *address) {
                Some(node) => node,
                None => {
                    plan.push(NodeRequest {
                        address: address.clone(),
                        answered: cached.get(address).unwrap_or(&no_script),
                        bodies: HashSet::new(),
                        planned: Vec::new(),
                    });
                    plan.len() - 1
                }
            };
            let Some(NodeRequest {
                answered,
                bodies,
                planned,
                ..
            }) = plan.get_mut(node)
            else {
                continue;
            };
            // Whether it goes as `EVALSHA`s only: the node answered the
            // script before, or its request carries the body earlier.
            let by_sha1 = match group.by_sha1 {
                Some(sha1) => {
                    let in_request = bodies.contains(sha1);
                    let known = match state.noscripts {
                        0 => in_request || answered.contains(sha1),
                        1 => in_request,
                        _ => false,
                    };
                    if !known {
                        bodies.insert(sha1);
                    }
                    known
                }
                None => {
                    bodies.extend(group.bodies.iter().copied());
                    false
                }
            };
            planned.push(Planned {
                slot,
                group,
                asking,
                by_sha1,
            });
        }
        plan.into_iter()
            .map(|node| (node.address, node.planned))
            .collect()
    }

    /// Takes a node's answer to its request: each transaction's outcome,
    /// or why it goes again.
    fn read(
        &self,
        address: &Address,
        planned: &[Planned<'_>],
        answer: redis::RedisResult<Vec<Value>>,
        states: &mut [SlotState],
        follow_up: &mut FollowUp,
    ) {
        let replies = match answer {
            Ok(replies) => replies,
            Err(error) => {
                follow_up.map_is_stale = true;
                for planned in planned {
                    let state = &mut states[planned.slot];
                    // The node a `MOVED` named may be the one that failed:
                    // the slot map read next says where the slot is.
                    state.moved = None;
                    if error.is_connection_refusal() && state.redirects < REDIRECTED_RETRIES {
                        // Nothing was sent: again, once the map is read
                        // again (a replica may be taking over).
                        follow_up.wait_at_least(state.redirects);
                        state.redirects += 1;
                    } else if state.failures < planned.group.failure_retries {
                        // The node's calls may have run, all or some: only
                        // a transaction of exactly-once calls goes again.
                        follow_up.wait_at_least(state.failures);
                        state.failures += 1;
                    } else {
                        state.done(Err(error.clone()));
                    }
                }
                return;
            }
        };
        let mut cached = lock(&self.cached);
        let known = cached.entry(address.clone()).or_default();
        let mut cursor = 0;
        for planned in planned {
            let state = &mut states[planned.slot];
            let count = planned.group.sent.len();
            cursor += usize::from(planned.asking);
            let answer = if planned.bare() {
                let reply = replies.get(cursor).cloned().unwrap_or_default();
                cursor += 1;
                match redirection(&reply) {
                    Some(redirected) => Ok(Answered::Redirected(redirected.clone())),
                    None => Ok(Answered::Ran(vec![reply])),
                }
            } else {
                let window = replies.get(cursor..).unwrap_or_default();
                cursor += count + 2;
                answered(window, count)
            };
            match answer {
                Ok(Answered::Ran(values)) => {
                    let not_found = matches!(
                        values.first(),
                        Some(Value::ServerError(error)) if error.code() == "NOSCRIPT"
                    );
                    if let Some(sha1) = planned.group.by_sha1 {
                        if not_found {
                            known.remove(sha1);
                        } else {
                            known.insert(sha1);
                        }
                    }
                    if not_found && planned.by_sha1 {
                        // None of them ran: again, with the body.
                        state.noscripts += 1;
                    } else {
                        state.done(Ok(values));
                    }
                }
                Ok(Answered::Refused(values)) => state.done(Ok(values)),
                Ok(Answered::Redirected(redirected)) if state.redirects < REDIRECTED_RETRIES => {
                    match redirected.code() {
                        "MOVED" => state.moved = named_node(&redirected),
                        "ASK" => state.ask = named_node(&redirected),
                        // `TRYAGAIN` (the slot is moving) or `CLUSTERDOWN`:
                        // the same node, after a wait.
                        _ => follow_up.wait_at_least(state.redirects),
                    }
                    // The slot map the next batch uses is out of date.
                    if redirected.code() != "ASK" {
                        follow_up.map_is_stale = true;
                    }
                    state.redirects += 1;
                }
                // Nothing ran: each command is refused with the redirection.
                Ok(Answered::Redirected(redirected)) => {
                    state.done(Ok(vec![Value::ServerError(redirected); count]));
                }
                Err(error) => state.done(Err(error)),
            }
        }
    }

    /// The slot map, asked of the nodes `known` lists (primaries first),
    /// then of the node of the settings, until one answers.
    async fn read_slot_map(&self, known: Option<&SlotMap>) -> redis::RedisResult<SlotMap> {
        let mut candidates: Vec<Address> =
            known.map(|map| map.nodes().to_vec()).unwrap_or_default();
        if let ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } =
            self.settings.addr()
        {
            let address = (host.clone(), *port);
            if !candidates.contains(&address) {
                candidates.push(address);
            }
        }
        let mut last_error = redis::RedisError::from((
            redis::ErrorKind::ClusterConnectionNotFound,
            "no node to ask for the slot map",
        ));
        for address in candidates {
            let answer = match self.connection(&address).await {
                Ok(mut connection) => {
                    redis::cmd("CLUSTER")
                        .arg("SLOTS")
                        .query_async::<Value>(&mut connection)
                        .await
                }
                Err(error) => Err(error),
            };
            match answer {
                Ok(topology) => {
                    let map = SlotMap::from_cluster_slots(&topology);
                    if !map.nodes().is_empty() {
                        return Ok(map);
                    }
                }
                Err(error) => {
                    lock(&self.open).remove(&address);
                    last_error = error;
                }
            }
        }
        Err(last_error)
    }

    /// The open connection to `address`, or a new one.
    async fn connection(&self, address: &Address) -> redis::RedisResult<MultiplexedConnection> {
        if let Some(connection) = lock(&self.open).get(address) {
            return Ok(connection.clone());
        }
        let (host, port) = address.clone();
        let addr = match self.settings.addr() {
            ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => ConnectionAddr::TcpTls {
                host,
                port,
                insecure: *insecure,
                tls_params: tls_params.clone(),
            },
            _ => ConnectionAddr::Tcp(host, port),
        };
        // The batch's deadline bounds every request: no timeout of its own.
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
        let connection = redis::Client::open(self.settings.clone().set_addr(addr))?
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        lock(&self.open).insert(address.clone(), connection.clone());
        Ok(connection)
    }
}

/// What a round's answers ask of the next round.
#[derive(Default)]
struct FollowUp {
    /// Read `CLUSTER SLOTS` again.
    map_is_stale: bool,
    /// Wait before it, as before the `n`-th resend.
    wait: Option<u32>,
}

impl FollowUp {
    fn wait_at_least(&mut self, attempt: u32) {
        self.wait = Some(self.wait.map_or(attempt, |wait| wait.max(attempt)));
    }
}

/// One node's request: each planned transaction (`ASKING` first after an
/// `ASK`), a lone command bare.
fn request(planned: &[Planned<'_>], commands: &[&Cmd]) -> Pipeline {
    let count: usize = planned
        .iter()
        .map(|planned| planned.group.sent.len() + 3)
        .sum();
    let mut pipeline = Pipeline::with_capacity(count);
    for planned in planned {
        if planned.asking {
            pipeline.add_command(redis::cmd("ASKING"));
        }
        if !planned.bare() {
            pipeline.add_command(redis::cmd("MULTI"));
        }
        planned
            .group
            .add_to(&mut pipeline, commands, planned.by_sha1);
        if !planned.bare() {
            pipeline.add_command(redis::cmd("EXEC"));
        }
    }
    pipeline
}

/// The refusal of a command whose slot no primary serves, as a node would
/// answer it.
fn unserved() -> Value {
    redis::parse_redis_value(b"-CLUSTERDOWN Hash slot not served\r\n").unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_of_a_unix_socket_are_refused() {
        let error = NodeConnections::new("redis+unix:///tmp/redis.sock")
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.contains("over TCP"), "{error}");
        assert!(NodeConnections::new("redis://127.0.0.1:7000").is_ok());
        assert!(NodeConnections::new("not a url").is_err());
    }

    #[test]
    fn an_unserved_slot_is_refused_as_a_node_would() {
        match unserved() {
            Value::ServerError(error) => assert_eq!(error.code(), "CLUSTERDOWN"),
            other => panic!("{other:?}"),
        }
    }
}
