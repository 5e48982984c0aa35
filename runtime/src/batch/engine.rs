//! The sending of a pipeline across slots on a cluster, free of I/O: which
//! requests go next and where, what each answer means (the transaction is
//! done, goes again, or ends with this error), and which sends may have
//! run. The two ways a batch reaches a cluster drive it, each with a send
//! loop of its own: [`cluster::run_batch`](crate::cluster::run_batch)
//! through redis-rs's cluster connection, and
//! [`NodeConnections::run_batch`](crate::cluster::NodeConnections::run_batch)
//! on connections of its own to the primaries.
//!
//! The sends go in rounds. In each, every slot with a transaction left
//! sends its current one ([`Step::Send`]); the answers say, per
//! transaction:
//!
//! - it ran (`EXEC`'s replies), or was refused whole for a reason of its
//!   own (`EXECABORT`): done, with each command's reply;
//! - it was refused whole for a redirection (`MOVED`, `ASK`, `TRYAGAIN`,
//!   `CLUSTERDOWN`: nothing ran): again, where the refusal says, up to
//!   [`REDIRECTED_RETRIES`] times, then done with the redirection as each
//!   command's reply;
//! - it went as `EVALSHA`s only and the node lacks the script (`NOSCRIPT`
//!   to each: nothing ran): again, with the body;
//! - its request failed: on connections of the batch's own, a connection
//!   refused sent nothing and goes again (the slot map read again first;
//!   the cluster connection reconnects by itself, as often as its
//!   `retries` say); after any other failure its calls may have run, and
//!   only a transaction of `exactly_once` calls goes again (they replay
//!   what ran); otherwise done, with the failure.
//!
//! After a send that may have run, a later answer that says a call did not
//! run is not the truth of the transaction: it ends with the earlier
//! failure, which says the calls may have run.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use redis::{Cmd, Pipeline, Value};
use redis_script_codes::{ASK, EXECABORT, MOVED, NOSCRIPT, ServerCode, server_code};

use super::Outcome;
use super::transactions::{Group, replies_of};
use super::{Batch, Replies, SentBefore};
use crate::call::{FAILURE_RETRY_FIRST_DELAY, FAILURE_RETRY_MAX_DELAY};
use crate::replicas::{ReadFrom, serves_no_reads};
use crate::topology::{Address, SlotMap};

/// How many times a slot's transaction is sent again after the node refused
/// it whole for a redirection (nothing ran), refused the connection, or
/// the slot map named no node for it.
pub(super) const REDIRECTED_RETRIES: u32 = 5;

/// From this many slots on, a batch through the cluster connection first
/// reads the slot map (`CLUSTER SLOTS`, one request) to send each script's
/// body once per node: a slot's lone call goes as `EVALSHA` when an earlier
/// slot of the same node carries the body.
const SLOTS_FOR_THE_SLOT_MAP: usize = 8;

/// The connections a batch goes through, and what they allow.
pub(super) enum Connections<'m> {
    /// redis-rs's cluster connection ([`cluster::run_batch`](crate::cluster::run_batch)):
    /// it routes a request by slot, and sends a whole request again when
    /// any reply in it is a redirection, which would run again the
    /// transactions of the request that had run. Each request holds one
    /// transaction, and an `ASK` (which needs `ASKING` on the node it
    /// names) is waited out.
    Cluster,
    /// Connections of the batch's own to each primary
    /// ([`NodeConnections`](crate::cluster::NodeConnections)), which never
    /// follow a redirection by themselves: one request per node, a slot's
    /// lone command bare (one command runs whole or not at all), `ASKING`
    /// before a transaction an `ASK` sent elsewhere, and the scripts each
    /// node answered before (`scripts`), kept between batches.
    PerNode(&'m Mutex<NodeScripts>),
}

impl Connections<'_> {
    fn per_node(&self) -> bool {
        matches!(self, Connections::PerNode(_))
    }

    /// What the nodes answered before, when these connections remember it.
    fn scripts(&self) -> Option<MutexGuard<'_, NodeScripts>> {
        match self {
            Connections::Cluster => None,
            Connections::PerNode(scripts) => Some(lock(scripts)),
        }
    }
}

/// The guarded value, even after a panic elsewhere: the maps it guards hold
/// nothing a half-done update could make wrong (a missing entry costs a
/// body sent again).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Per node, the SHA1s of the scripts it last answered a call of
/// (anything but `NOSCRIPT`): sent there as `EVALSHA` only.
#[derive(Debug, Default)]
pub(super) struct NodeScripts(HashMap<Address, HashSet<&'static str>>);

impl NodeScripts {
    fn has(&self, node: &Address, sha1: &str) -> bool {
        self.0.get(node).is_some_and(|known| known.contains(sha1))
    }

    /// `node` answered a call of the script `sha1`: it had it, or not
    /// (`NOSCRIPT`).
    fn answered(&mut self, node: &Address, sha1: &'static str, had_it: bool) {
        if had_it {
            self.0.entry(node.clone()).or_default().insert(sha1);
        } else if let Some(known) = self.0.get_mut(node) {
            known.remove(sha1);
        }
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Destination {
    /// The primary of this slot, as the connection routes it (`None`: any
    /// primary).
    Slot(Option<u16>),
    /// The node at this address.
    Node(Address),
}

/// One request of a round: where it goes, and what it sends.
#[derive(Debug)]
pub(super) struct Request {
    pub(super) destination: Destination,
    /// Its commands, `MULTI`/`EXEC` and `ASKING` included; every reply is
    /// read.
    pub(super) pipeline: Pipeline,
    /// The transactions it holds, in the order sent.
    parts: Vec<Part>,
}

/// One slot's transaction in a request.
#[derive(Debug, Clone, Copy)]
struct Part {
    /// The slot's index in the batch's slots.
    slot: usize,
    /// How many commands it sends (`MULTI`, `EXEC`, `ASKING` aside).
    count: usize,
    /// `ASKING` goes first.
    asking: bool,
    /// Sent as one command, without `MULTI`/`EXEC`.
    bare: bool,
    /// Sent as `EVALSHA`s only (see [`Group::by_sha1`]).
    by_sha1: bool,
    /// Sent to a replica.
    on_replica: bool,
}

impl Part {
    /// Adds `group`, the transaction it is, to `pipeline`: `ASKING` first
    /// after an `ASK`, in `MULTI`/`EXEC` unless bare.
    fn add_to(&self, pipeline: &mut Pipeline, group: &Group, commands: &[&Cmd]) {
        if self.asking {
            pipeline.add_command(redis::cmd("ASKING"));
        }
        if !self.bare {
            pipeline.add_command(redis::cmd("MULTI"));
        }
        group.add_to(pipeline, commands, self.by_sha1);
        if !self.bare {
            pipeline.add_command(redis::cmd("EXEC"));
        }
    }
}

/// Where a transaction of `slot` goes, and which node that is when the
/// slot map knows it: the node a redirection `named`; else, on connections
/// of its own (`per_node`), the slot's primary by the map (`None` when the
/// map names none: the slot is not served); else the slot, for the cluster
/// connection to route.
fn destination(
    per_node: bool,
    map: Option<&SlotMap>,
    named: Option<Address>,
    slot: Option<u16>,
) -> Option<(Destination, Option<Address>)> {
    if let Some(named) = named {
        return Some((Destination::Node(named.clone()), Some(named)));
    }
    let owner = map.and_then(|map| match slot {
        Some(slot) => map.node_of(slot),
        // A command without a slot goes to any primary.
        None if per_node => map.nodes().first(),
        None => None,
    });
    if !per_node {
        return Some((Destination::Slot(slot), owner.cloned()));
    }
    let owner = owner?;
    Some((Destination::Node(owner.clone()), Some(owner.clone())))
}

/// What the send loop does next.
#[derive(Debug)]
pub(super) enum Step {
    /// Read the slot map (`CLUSTER SLOTS`) and hand it to
    /// [`Engine::slot_map_read`].
    ReadSlotMap,
    /// Wait this long.
    Wait(Duration),
    /// Send these requests, all at once, and hand each answer to
    /// [`Engine::answered`].
    Send(Vec<Request>),
    /// Every transaction has its outcome: [`Engine::into_replies`].
    Done,
}

/// The sending of one batch's slot transactions, apart from its I/O.
pub(super) struct Engine<'b> {
    connections: Connections<'b>,
    batch: &'b Batch,
    /// The batch's commands, in the order queued.
    commands: Vec<&'b Cmd>,
    /// Per slot, its transactions, sent one after the other.
    slots: Vec<Vec<Group>>,
    /// Per slot, where its sending is.
    states: Vec<SlotState>,
    map: Option<Arc<SlotMap>>,
    /// Reads of the slot map that failed in a row.
    map_failures: u32,
    /// Through the cluster connection: the slot map was asked for.
    map_asked: bool,
    /// What the answers so far ask of the next round.
    follow_up: FollowUp,
    /// Where read-only transactions go, on connections of the batch's own.
    reads: ReadFrom,
}

/// Where one slot is in its sending.
#[derive(Debug, Default)]
struct SlotState {
    /// Its transaction being sent.
    current: usize,
    /// The outcome of each transaction done.
    outcomes: Vec<Outcome>,
    /// Its node, as the last `MOVED` named it.
    moved: Option<Address>,
    /// The node an `ASK` names, for the next send only.
    ask: Option<Address>,
    /// Sends of the current transaction refused for a redirection, refused
    /// the connection, or left without a node by the slot map.
    redirects: u32,
    /// Sends of the current transaction that failed and may have run.
    failures: u32,
    /// Sends of the current transaction answered `NOSCRIPT` (none of its
    /// calls ran): after one, it relies on no memory of the node; after
    /// two, it carries the body itself.
    noscripts: u32,
    /// Whether a send of the current transaction may have run.
    sent_before: SentBefore,
    /// A replica could not serve the current transaction: it goes to the
    /// primary ([`ReadFrom::PreferReplica`]).
    on_primary: bool,
}

/// What an answer asks of the next round.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct FollowUp {
    /// Read the slot map again.
    map_is_stale: bool,
    /// Wait, as before the `n`-th resend.
    wait: Option<u32>,
}

impl FollowUp {
    fn wait_at_least(&mut self, attempt: u32) {
        self.wait = Some(self.wait.map_or(attempt, |wait| wait.max(attempt)));
    }

    /// What both ask: the longer wait.
    fn merge(&mut self, other: FollowUp) {
        self.map_is_stale |= other.map_is_stale;
        if let Some(attempt) = other.wait {
            self.wait_at_least(attempt);
        }
    }
}

impl SlotState {
    /// The current transaction is done: on to the next.
    fn finish(&mut self, outcome: Outcome) {
        let outcome = self.sent_before.truthful(outcome);
        self.outcomes.push(outcome);
        self.current += 1;
        self.redirects = 0;
        self.failures = 0;
        self.noscripts = 0;
        self.on_primary = false;
    }

    /// The node refused the transaction (`count` commands) whole for
    /// `redirected`: nothing ran.
    fn redirected(
        &mut self,
        redirected: redis::ServerError,
        follows_ask: bool,
        count: usize,
    ) -> FollowUp {
        let mut follow_up = FollowUp::default();
        if self.redirects >= REDIRECTED_RETRIES {
            // Each command is refused with the redirection.
            self.finish(Ok(vec![Value::ServerError(redirected); count]));
            return follow_up;
        }
        match redirected.code() {
            MOVED => self.moved = named_node(&redirected),
            ASK if follows_ask => self.ask = named_node(&redirected),
            // `TRYAGAIN` (the slot is moving), `CLUSTERDOWN`, or an `ASK`
            // the connection cannot follow: the same node, after a wait.
            _ => follow_up.wait_at_least(self.redirects),
        }
        // An `ASK` is for one send; the others say the map is out of date.
        follow_up.map_is_stale = redirected.code() != ASK;
        self.redirects += 1;
        follow_up
    }

    /// The request that carried the transaction failed with `error`;
    /// `refused_again`: a refused connection is tried again.
    fn failed(
        &mut self,
        error: &redis::RedisError,
        failure_retries: u32,
        refused_again: bool,
    ) -> FollowUp {
        let mut follow_up = FollowUp {
            map_is_stale: true,
            wait: None,
        };
        // The node a `MOVED` named may be the one that failed: the slot map
        // says where the slot is.
        self.moved = None;
        if refused_again && error.is_connection_refusal() && self.redirects < REDIRECTED_RETRIES {
            // Nothing was sent: again, once the map is read again (a
            // replica may be taking over).
            follow_up.wait_at_least(self.redirects);
            self.redirects += 1;
        } else if self.failures < failure_retries {
            // The calls may have run: only a transaction of exactly-once
            // calls goes again, and they replay what ran.
            follow_up.wait_at_least(self.failures);
            self.failures += 1;
            self.sent_before.sent_again_after(error);
        } else {
            self.finish(Err(error.clone()));
        }
        follow_up
    }

    /// No replica serves `slot`, and the transaction may run only on one
    /// ([`ReadFrom::ReplicaOnly`]): it fails, nothing sent, unless the
    /// slot map read again names one.
    fn no_replica(&mut self, slot: u16) -> FollowUp {
        self.again_after_the_slot_map(|| {
            Err(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                format!("no replica serves slot {slot} (ReadFrom::ReplicaOnly)"),
            )))
        })
    }

    /// The slot map names no node for the transaction (`count` commands).
    fn unserved(&mut self, count: usize) -> FollowUp {
        self.again_after_the_slot_map(|| Ok(vec![unserved(); count]))
    }

    /// The transaction has nowhere to go: again once the slot map is read
    /// again, after a wait, a few times; then it ends as `ended` says.
    fn again_after_the_slot_map(&mut self, ended: impl FnOnce() -> Outcome) -> FollowUp {
        let mut follow_up = FollowUp::default();
        if self.redirects < REDIRECTED_RETRIES {
            follow_up.map_is_stale = true;
            follow_up.wait_at_least(self.redirects);
            self.redirects += 1;
        } else {
            self.finish(ended());
        }
        follow_up
    }
}

impl<'b> Engine<'b> {
    /// The sending of `batch`'s slot transactions through `connections`;
    /// `known` is the slot map read before, if any.
    pub(super) fn new(
        connections: Connections<'b>,
        batch: &'b Batch,
        known: Option<Arc<SlotMap>>,
    ) -> Self {
        let slots = batch.slot_transactions();
        let states = slots.iter().map(|_| SlotState::default()).collect();
        Self {
            connections,
            batch,
            commands: batch.pipeline.cmd_iter().collect(),
            slots,
            states,
            map: known,
            map_failures: 0,
            map_asked: false,
            follow_up: FollowUp::default(),
            reads: ReadFrom::Primary,
        }
    }

    /// Sends the transactions of nothing but read-only calls where
    /// `reads` says, on connections of the batch's own (the cluster
    /// connection routes by its own read strategy).
    pub(super) fn reading(mut self, reads: ReadFrom) -> Self {
        self.reads = reads;
        self
    }

    /// What to do next. Every request of a [`Step::Send`] must be answered
    /// before this is called again.
    pub(super) fn next(&mut self) -> Step {
        loop {
            if self.is_done() {
                return Step::Done;
            }
            if let Some(attempt) = self.follow_up.wait.take() {
                return Step::Wait(crate::retry::backoff(
                    FAILURE_RETRY_FIRST_DELAY,
                    FAILURE_RETRY_MAX_DELAY,
                    attempt,
                ));
            }
            if self.needs_slot_map() {
                return Step::ReadSlotMap;
            }
            let requests = self.plan();
            if !requests.is_empty() {
                return Step::Send(requests);
            }
            // No slot could go (no node serves them): each waits, or is
            // done.
        }
    }

    fn is_done(&self) -> bool {
        self.slots
            .iter()
            .zip(&self.states)
            .all(|(transactions, state)| state.current >= transactions.len())
    }

    /// Whether the slot map is to be read before the next round: through
    /// the cluster connection, once, from [`SLOTS_FOR_THE_SLOT_MAP`] slots
    /// on (it only spares bodies); on connections of its own, whenever the
    /// batch has none or a redirection or a failure made it stale (it says
    /// where each request goes).
    fn needs_slot_map(&self) -> bool {
        match self.connections {
            Connections::Cluster => !self.map_asked && self.slots.len() >= SLOTS_FOR_THE_SLOT_MAP,
            Connections::PerNode(_) => self.map.is_none() || self.follow_up.map_is_stale,
        }
    }

    /// The slot map last read, if any.
    pub(super) fn slot_map(&self) -> Option<&Arc<SlotMap>> {
        self.map.as_ref()
    }

    /// Takes what reading the slot map gave.
    pub(super) fn slot_map_read(&mut self, read: redis::RedisResult<Arc<SlotMap>>) {
        if !self.connections.per_node() {
            // Without it, each body goes once per slot.
            self.map_asked = true;
            self.map = read.ok();
            return;
        }
        match read {
            Ok(map) => {
                self.map = Some(map);
                self.follow_up.map_is_stale = false;
                self.map_failures = 0;
            }
            // The node asked may be the one that just failed.
            Err(_) if self.map_failures < REDIRECTED_RETRIES => {
                self.follow_up.wait_at_least(self.map_failures);
                self.map_failures += 1;
            }
            Err(error) => {
                // Nothing of the transactions left was sent.
                for (transactions, state) in self.slots.iter().zip(&mut self.states) {
                    while state.current < transactions.len() {
                        state.finish(Err(error.clone()));
                    }
                }
            }
        }
    }

    /// The requests of the next round: each slot's current transaction,
    /// where it goes and how.
    fn plan(&mut self) -> Vec<Request> {
        let per_node = self.connections.per_node();
        let scripts = self.connections.scripts();
        let mut requests: Vec<Request> = Vec::new();
        // Per node: the scripts whose body the round sends there so far.
        let mut round: HashMap<Address, HashSet<&'static str>> = HashMap::new();
        for (slot, (transactions, state)) in self.slots.iter().zip(&mut self.states).enumerate() {
            let Some(group) = transactions.get(state.current) else {
                continue;
            };
            let asking = state.ask.is_some();
            let named = state.ask.take().or_else(|| state.moved.clone());
            let replica = match (&named, group.slot, self.map.as_deref()) {
                (None, Some(key_slot), Some(map))
                    if per_node
                        && group.read_only
                        && self.reads.reads_replicas()
                        && !state.on_primary =>
                {
                    let replicas = map.replicas_of(key_slot);
                    match replicas.get(slot % replicas.len().max(1)) {
                        Some(replica) => Some(replica.clone()),
                        None if self.reads == ReadFrom::ReplicaOnly => {
                            self.follow_up.merge(state.no_replica(key_slot));
                            continue;
                        }
                        None => None,
                    }
                }
                _ => None,
            };
            let on_replica = replica.is_some();
            let Some((destination, node)) =
                destination(per_node, self.map.as_deref(), named.or(replica), group.slot)
            else {
                self.follow_up.merge(state.unserved(group.len()));
                continue;
            };
            let earlier = node.map(|node| round.entry(node).or_default());
            let by_sha1 = match group.by_sha1 {
                Some(sha1) => {
                    let remembered = match (&scripts, &destination) {
                        (Some(scripts), Destination::Node(node)) => scripts.has(node, sha1),
                        _ => false,
                    };
                    let earlier_in_round =
                        earlier.as_ref().is_some_and(|bodies| bodies.contains(sha1));
                    // A node's transactions share one request on connections
                    // of its own: a body earlier in it arrives first.
                    // Through the cluster connection each is a request of
                    // its own, which may arrive first: a body there is
                    // relied on only for a slot of one call, which a
                    // `NOSCRIPT` costs one call sent again.
                    let one_call = transactions.len() == 1 && group.is_lone_call();
                    let known = match state.noscripts {
                        0 => remembered || (earlier_in_round && (per_node || one_call)),
                        1 => earlier_in_round && per_node,
                        _ => false,
                    };
                    if !known && let Some(earlier) = earlier {
                        earlier.insert(sha1);
                    }
                    known
                }
                None => {
                    if let Some(earlier) = earlier {
                        earlier.extend(group.bodies.iter().copied());
                    }
                    false
                }
            };
            let part = Part {
                slot,
                count: group.len(),
                asking,
                bare: per_node && group.len() == 1,
                by_sha1,
                on_replica,
            };
            let shared = requests
                .iter_mut()
                .find(|request| per_node && request.destination == destination);
            let request = match shared {
                Some(request) => request,
                None => {
                    requests.push(Request {
                        destination,
                        pipeline: Pipeline::new(),
                        parts: Vec::new(),
                    });
                    let Some(request) = requests.last_mut() else {
                        continue;
                    };
                    request
                }
            };
            part.add_to(&mut request.pipeline, group, &self.commands);
            request.parts.push(part);
        }
        requests
    }

    /// Takes the answer to `request`: each transaction's outcome, or why it
    /// goes again.
    pub(super) fn answered(&mut self, request: &Request, answer: redis::RedisResult<Vec<Value>>) {
        // Connections of the batch's own can send `ASKING`, and reconnect
        // only when told to; the cluster connection reconnects and follows
        // redirections of a failed request itself, as its `retries` say
        // (with none, a redirection fails the request: nothing ran).
        let own_connections = self.connections.per_node();
        let replies = match answer {
            Ok(replies) => replies,
            Err(error) => {
                for part in &request.parts {
                    let Some(state) = self.states.get_mut(part.slot) else {
                        continue;
                    };
                    if part.on_replica && self.reads == ReadFrom::PreferReplica {
                        // Its calls only read: sent again, to the primary.
                        state.on_primary = true;
                        continue;
                    }
                    let retries = self
                        .slots
                        .get(part.slot)
                        .and_then(|transactions| transactions.get(state.current))
                        .map_or(0, |group| group.failure_retries);
                    self.follow_up
                        .merge(state.failed(&error, retries, own_connections));
                }
                return;
            }
        };
        let mut scripts = self.connections.scripts();
        let mut cursor = 0;
        for part in &request.parts {
            cursor += usize::from(part.asking);
            let answer = if part.bare {
                let reply = replies.get(cursor).cloned().unwrap_or_default();
                cursor += 1;
                match redirection(&reply) {
                    Some(redirected) => Ok(Answered::Redirected(redirected.clone())),
                    None => Ok(Answered::Ran(vec![reply])),
                }
            } else {
                let window = replies.get(cursor..).unwrap_or_default();
                cursor += part.count + 2;
                answered(window, part.count)
            };
            let (Some(transactions), Some(state)) =
                (self.slots.get(part.slot), self.states.get_mut(part.slot))
            else {
                continue;
            };
            let Some(group) = transactions.get(state.current) else {
                continue;
            };
            if part.on_replica
                && self.reads == ReadFrom::PreferReplica
                && answer.as_ref().is_ok_and(Answered::replica_unavailable)
            {
                // Nothing ran: again, on the primary.
                state.on_primary = true;
                continue;
            }
            match answer {
                Ok(Answered::Ran(values)) => {
                    let not_found = matches!(
                        values.first(),
                        Some(Value::ServerError(error)) if error.code() == NOSCRIPT
                    );
                    if let (Some(scripts), Destination::Node(node), Some(sha1)) =
                        (scripts.as_mut(), &request.destination, group.by_sha1)
                    {
                        scripts.answered(node, sha1, !not_found);
                    }
                    if not_found && part.by_sha1 {
                        // None of them ran: again, with the body.
                        state.noscripts += 1;
                    } else {
                        state.finish(Ok(values));
                    }
                }
                Ok(Answered::Refused(values)) => state.finish(Ok(values)),
                Ok(Answered::Redirected(redirected)) => {
                    self.follow_up
                        .merge(state.redirected(redirected, own_connections, part.count));
                }
                Err(error) => state.finish(Err(error)),
            }
        }
    }

    /// The batch's replies, in the order queued.
    pub(super) fn into_replies(self) -> Replies {
        let Self {
            batch,
            slots,
            states,
            ..
        } = self;
        let sent = slots
            .iter()
            .zip(states)
            .flat_map(|(transactions, state)| transactions.iter().zip(state.outcomes));
        replies_of(batch, sent)
    }
}

/// What a node answered to one transaction.
#[derive(Debug)]
enum Answered {
    /// `EXEC` ran it (or, bare, the command ran): each command's reply.
    Ran(Vec<Value>),
    /// Refused whole for a redirection (nothing ran): the first one.
    Redirected(redis::ServerError),
    /// Refused whole for another reason (nothing ran): each command's
    /// reason (its own error while queued, or the abort).
    Refused(Vec<Value>),
}

impl Answered {
    /// The replica refused it whole because it cannot serve reads now: it
    /// is loading its data, or lost its primary and serves no stale data.
    fn replica_unavailable(&self) -> bool {
        let unavailable = |value: &Value| matches!(value, Value::ServerError(error) if serves_no_reads(error.code()));
        match self {
            Answered::Refused(values) => values.iter().any(unavailable),
            Answered::Ran(values) => values.len() == 1 && values.iter().all(unavailable),
            Answered::Redirected(_) => false,
        }
    }
}

/// Reads one transaction's replies (`MULTI`'s, one per command, `EXEC`'s)
/// for `count` commands.
fn answered(replies: &[Value], count: usize) -> Result<Answered, redis::RedisError> {
    let queued = replies.get(1..=count).unwrap_or_default();
    // Valkey 9 refuses `EXEC` itself with the redirection when a queued
    // command's keys have moved on: the transaction is discarded whole.
    if let Some(redirected) = replies.get(count + 1).and_then(redirection) {
        return Ok(Answered::Redirected(redirected.clone()));
    }
    match replies.get(count + 1) {
        Some(Value::Array(values)) if values.len() == count => Ok(Answered::Ran(values.clone())),
        Some(Value::ServerError(error)) if error.code() == EXECABORT => {
            let redirected = queued.iter().find_map(redirection).cloned();
            Ok(match redirected {
                Some(redirected) => Answered::Redirected(redirected),
                None => Answered::Refused(
                    queued
                        .iter()
                        .map(|reply| match reply {
                            Value::ServerError(_) => reply.clone(),
                            _ => Value::ServerError(error.clone()),
                        })
                        .collect(),
                ),
            })
        }
        other => Err(redis::RedisError::from((
            redis::ErrorKind::Parse,
            "the replies of EXEC",
            format!("{other:?}"),
        ))),
    }
}

/// The refusal in `reply` that means its command did not run because its
/// slot is elsewhere, moving, or not served.
fn redirection(reply: &Value) -> Option<&redis::ServerError> {
    match reply {
        Value::ServerError(error)
            if server_code(error.code()).is_some_and(ServerCode::redirects) =>
        {
            Some(error)
        }
        _ => None,
    }
}

/// The node a `MOVED` or `ASK <slot> <host>:<port>` refusal names.
fn named_node(redirected: &redis::ServerError) -> Option<Address> {
    let address = redirected.details()?.split(' ').nth(1)?;
    let (host, port) = address.rsplit_once(':')?;
    Some((host.to_owned(), port.parse().ok()?))
}

/// The refusal of a command whose slot no primary serves, as a node would
/// answer it.
fn unserved() -> Value {
    redis::parse_redis_value(b"-CLUSTERDOWN Hash slot not served\r\n").unwrap_or_default()
}

#[cfg(test)]
mod tests;
