//! A pipeline whose calls are in several slots of a cluster: one
//! transaction per slot, each its own request to the slot's primary, all
//! at once. From [`SLOTS_FOR_THE_SLOT_MAP`] slots on, the slot map is read
//! first, so that a slot's lone call goes as `EVALSHA` once its node got
//! the body with an earlier slot's call.
//!
//! Each slot's calls go in one `MULTI`/`EXEC`, in the order they were
//! queued: a script's first call in it is `EVAL` with the body and the
//! later ones `EVALSHA`, and a library's `FUNCTION LOAD` comes before its
//! first function call. Nothing runs between the commands of a
//! transaction, so a `SCRIPT FLUSH` (or a failover) cannot make a later
//! `EVALSHA` of the same transaction fail, nor put another command between
//! two calls of one slot. A transaction the node refuses before running it
//! (`EXECABORT`, because a command was redirected with `MOVED`, `ASK` or
//! `TRYAGAIN` while the slot moves) ran nothing, so it is sent again to
//! where the slot now is, a few times.

use std::collections::HashMap;

use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Pipeline, Value};

use super::{Batch, Entry, Replies, deadline_passed};
use crate::error::Error;
use crate::topology::Address;

/// How many times a slot's transaction is sent again after the node refused
/// it whole for a redirection (nothing ran).
pub(super) const REDIRECTED_RETRIES: u32 = 5;

/// What one command of a slot's transaction is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sent {
    /// The queued command at this index, as queued (a script call as
    /// `EVAL`, with the body).
    Queued(usize),
    /// The queued script call at this index, as `EVALSHA` of this SHA1: an
    /// earlier call of the transaction carries the body.
    BySha1(usize, &'static str),
    /// The `FUNCTION LOAD` queued at this index, sent again in this group.
    Load(usize),
}

/// One slot's transaction: what it sends, and what each command is. The
/// commands are rendered when it is sent, from the batch's.
pub(super) struct Group {
    pub(super) slot: Option<u16>,
    pub(super) sent: Vec<Sent>,
    /// How many times it is sent again after a connection failure or a
    /// timeout: only when it holds nothing but calls of `exactly_once`
    /// scripts (see [`Batch::run`]).
    pub(super) failure_retries: u32,
    /// The SHA1s of the scripts whose body it carries (`EVAL`).
    pub(super) bodies: Vec<&'static str>,
    /// When it holds nothing but calls of one script, each sent as `EVAL`
    /// or `EVALSHA`: that script's SHA1. Such a transaction either finds
    /// the script (every call runs) or does not (none does: `NOSCRIPT` to
    /// each), so it may go as `EVALSHA`s only, and again with the body.
    pub(super) by_sha1: Option<&'static str>,
}

impl Group {
    /// Adds its commands to `pipeline`, out of `commands` (the batch's, in
    /// order): as planned, or every call as `EVALSHA` (`by_sha1`).
    pub(super) fn add_to(&self, pipeline: &mut Pipeline, commands: &[&Cmd], by_sha1: bool) {
        for sent in &self.sent {
            let command = match (*sent, self.by_sha1) {
                (Sent::Queued(index), Some(sha1)) if by_sha1 => commands
                    .get(index)
                    .and_then(|queued| as_evalsha(queued, sha1)),
                (Sent::BySha1(index, sha1), _) => commands
                    .get(index)
                    .and_then(|queued| as_evalsha(queued, sha1)),
                (Sent::Queued(index) | Sent::Load(index), _) => {
                    commands.get(index).map(|queued| (*queued).clone())
                }
            };
            if let Some(command) = command {
                pipeline.add_command(command);
            }
        }
    }

    /// It as one `MULTI`/`EXEC` transaction: as planned, or every call as
    /// `EVALSHA` (`by_sha1`).
    fn transaction(&self, commands: &[&Cmd], by_sha1: bool) -> Pipeline {
        let mut pipeline = Pipeline::with_capacity(self.sent.len());
        pipeline.atomic();
        // Each reply is decoded on its own, so one failed command must not
        // hide the others' replies.
        pipeline.ignore_errors();
        self.add_to(&mut pipeline, commands, by_sha1);
        pipeline
    }

    /// The index of its one command when that is a script call.
    fn lone_call(&self) -> Option<usize> {
        match (self.sent.as_slice(), self.by_sha1) {
            ([Sent::Queued(index)], Some(_)) => Some(*index),
            _ => None,
        }
    }
}

impl Batch {
    /// The queued commands by slot, each slot's in the order queued, the
    /// slots in the order of their first command. A command without a slot
    /// (a plain command, or a script without keys) goes with the command
    /// before it, or with the first slot's when it comes first.
    fn slot_groups(&self) -> Vec<(Option<u16>, Vec<usize>)> {
        let first_slot = self.slots.iter().flatten().next().copied();
        let mut groups: Vec<(Option<u16>, Vec<usize>)> = Vec::new();
        // Each slot's place in `groups`.
        let mut places: HashMap<Option<u16>, usize> = HashMap::new();
        let mut current = first_slot;
        for (index, entry) in self.entries.iter().enumerate() {
            if matches!(entry, Entry::Load) {
                continue;
            }
            let slot = self.slots.get(index).copied().flatten().or(current);
            current = slot;
            let place = *places.entry(slot).or_insert_with(|| {
                groups.push((slot, Vec::new()));
                groups.len() - 1
            });
            if let Some((_, indices)) = groups.get_mut(place) {
                indices.push(index);
            }
        }
        groups
    }

    /// Per slot, its transactions of at most
    /// [`Batch::slot_transaction_limit`] commands, to be sent one after the
    /// other.
    pub(super) fn slot_transactions(&self) -> Vec<Vec<Group>> {
        let commands: Vec<&Cmd> = self.pipeline.cmd_iter().collect();
        // A transaction is sent whole, however long.
        let limit = if self.atomic {
            usize::MAX
        } else {
            self.slot_transaction_limit
        };
        self.slot_groups()
            .into_iter()
            .map(|(slot, indices)| {
                indices
                    .chunks(limit)
                    .map(|chunk| self.group(&commands, slot, chunk))
                    .collect()
            })
            .collect()
    }

    /// The transaction that sends `indices` (one slot's commands): a
    /// script's first call in it with the body, the later ones as
    /// `EVALSHA`, a library's load before its first call.
    fn group(&self, commands: &[&Cmd], slot: Option<u16>, indices: &[usize]) -> Group {
        let mut sent = Vec::with_capacity(indices.len() + 1);
        let mut bodies_sent: Vec<&'static str> = Vec::new();
        let mut loaded: Vec<usize> = Vec::new();
        // Whether every command is a call of one script sent with its body
        // (`EVAL`, not an `EVALSHA` of a batch that loads nothing).
        let mut one_script = true;
        for &index in indices {
            let Some(Entry::Script(script)) = self.entries.get(index) else {
                one_script = false;
                sent.push(Sent::Queued(index));
                continue;
            };
            let sha1 = script.sha1();
            if let Some(load) = self.load_entry(&Entry::Script(script)) {
                one_script = false;
                if !loaded.contains(&load) {
                    loaded.push(load);
                    sent.push(Sent::Load(load));
                }
            }
            let with_body = commands.get(index).is_some_and(|queued| is_eval(queued));
            one_script &= with_body;
            if with_body && bodies_sent.contains(&sha1) {
                sent.push(Sent::BySha1(index, sha1));
            } else {
                if with_body {
                    bodies_sent.push(sha1);
                }
                sent.push(Sent::Queued(index));
            }
        }
        let failure_retries =
            self.failure_retries_of(indices.iter().filter_map(|index| self.entries.get(*index)));
        let by_sha1 = match bodies_sent.as_slice() {
            [sha1] if one_script => Some(*sha1),
            _ => None,
        };
        Group {
            slot,
            sent,
            failure_retries,
            bodies: bodies_sent,
            by_sha1,
        }
    }
}

/// Whether `command` is an `EVAL` (a script call sent with its body).
fn is_eval(command: &Cmd) -> bool {
    matches!(command.args_iter().next(), Some(redis::Arg::Simple(name)) if name == b"EVAL")
}

/// A pipeline's script call, queued as `EVAL <body> <numkeys> …`, as
/// `EVALSHA <sha1> <numkeys> …`; `None` for any other command.
pub(super) fn as_evalsha(queued: &Cmd, sha1: &str) -> Option<Cmd> {
    let mut args = queued.args_iter();
    match (args.next(), args.next()) {
        (Some(redis::Arg::Simple(name)), Some(_)) if name == b"EVAL" => {
            let (count, size) = args.clone().fold(
                (2, "EVALSHA".len() + sha1.len()),
                |(count, size), arg| match arg {
                    redis::Arg::Simple(bytes) => (count + 1, size + bytes.len()),
                    _ => (count, size),
                },
            );
            let mut evalsha = Cmd::with_capacity(count, size);
            evalsha.arg("EVALSHA").arg(sha1);
            for arg in args {
                if let redis::Arg::Simple(bytes) = arg {
                    evalsha.arg(bytes);
                }
            }
            Some(evalsha)
        }
        _ => None,
    }
}

/// Runs `batch` on a cluster: a transaction is sent as it is (its calls
/// share one slot); a pipeline as one transaction per slot, each sent to
/// the slot's primary, all at once (see the [cluster guide](crate::guide::cluster)). Replies come
/// in the order the commands were queued.
///
/// Calls of one slot run in the order they were queued, with no other
/// command between them; calls of different slots run on different nodes,
/// in no promised order (as on the server). A slot's node that fails (or
/// is not reached within the batch's deadline) fails that slot's calls,
/// each with an error saying whether it may have run; the other slots'
/// calls get their replies. A slot's transaction of nothing but calls of
/// `exactly_once` scripts is sent again after a connection failure, as
/// [`Batch::run`] sends such a batch again.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::cluster_async::ClusterConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{Batch, cluster, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let mut batch = Batch::pipeline();
/// let first = batch.add(release_lock::call("lock:{a}", "token-a"))?;
/// let second = batch.add(release_lock::call("lock:{b}", "token-b"))?;
/// let mut replies = cluster::run_batch(connection, &batch).await?;
/// let released = replies.take(first)? + replies.take(second)?;
/// # let _ = released;
/// # Ok(()) }
/// ```
pub async fn run_batch(
    connection: &mut ClusterConnection,
    batch: &Batch,
) -> Result<Replies, Error> {
    if batch.atomic || batch.entries.is_empty() {
        return batch.run(connection).await;
    }
    let run = async {
        let slots = batch.slot_transactions();
        let commands: Vec<&Cmd> = batch.pipeline.cmd_iter().collect();
        let outcomes =
            crate::timer::within(batch.deadline, run_slots(connection, &slots, &commands))
                .await
                .map_err(|_| deadline_passed(batch.deadline))?;
        let sent = outcomes.into_iter().flat_map(|(slot, results)| {
            let transactions = slots.get(slot).map(Vec::as_slice).unwrap_or_default();
            transactions.iter().zip(results)
        });
        Ok(replies_of(batch, sent))
    };
    crate::telemetry::traced(batch.span(), run).await
}

/// The batch's replies, in the order queued, from the outcome of each
/// transaction sent (each slot's, in any order).
pub(super) fn replies_of<'g>(
    batch: &Batch,
    sent: impl Iterator<Item = (&'g Group, Outcome)>,
) -> Replies {
    let queued = batch.entries.len();
    let mut values = vec![Value::Nil; queued];
    let mut failed: Vec<Option<redis::RedisError>> = vec![None; queued];
    let mut load_of: Vec<Option<usize>> = vec![None; queued];
    for (group, outcome) in sent {
        match outcome {
            Ok(replies) => {
                let mut group_load: Vec<(usize, usize)> = Vec::new();
                for (sent, value) in group.sent.iter().zip(replies) {
                    match *sent {
                        Sent::Queued(index) | Sent::BySha1(index, _) => {
                            if let Some(slot) = values.get_mut(index) {
                                *slot = value;
                            }
                            if let Some(Entry::Script(script)) = batch.entries.get(index)
                                && let Some(load) = batch.load_entry(&Entry::Script(script))
                            {
                                let at = group_load
                                    .iter()
                                    .find(|(queued, _)| *queued == load)
                                    .map(|(_, at)| *at);
                                if let Some(entry) = load_of.get_mut(index) {
                                    *entry = at;
                                }
                            }
                        }
                        Sent::Load(load) => {
                            group_load.push((load, values.len()));
                            values.push(value);
                        }
                    }
                }
            }
            Err(error) => {
                for sent in &group.sent {
                    if let Sent::Queued(index) | Sent::BySha1(index, _) = sent
                        && let Some(entry) = failed.get_mut(*index)
                    {
                        *entry = Some(error.clone());
                    }
                }
            }
        }
    }
    #[cfg(feature = "metrics")]
    for (entry, value) in batch.entries.iter().zip(&values) {
        if let Entry::Script(script) = entry {
            crate::telemetry::measures::batch_call(script, value);
        }
    }
    Replies {
        batch: batch.id,
        values,
        entries: batch.entries.clone(),
        load_of,
        failed,
    }
}

/// From this many slots on, a batch first reads the slot map (`CLUSTER
/// SLOTS`, one request) to send each script's body once per node: a slot's
/// lone call goes as `EVALSHA` when an earlier slot of the same node
/// carries the body.
const SLOTS_FOR_THE_SLOT_MAP: usize = 8;

/// The outcome of one transaction: the replies of its commands, or why its
/// request failed.
pub(super) type Outcome = Result<Vec<Value>, redis::RedisError>;

/// Sends every slot's transactions (a slot's one after the other, the slots
/// at once): per slot (its index in `slots`), the outcome of each of its
/// transactions.
///
/// Each request holds one slot's transaction: redis-rs follows a
/// redirection of a request by sending the whole request again, which is
/// safe only when the redirection means nothing in it ran.
async fn run_slots(
    connection: &mut ClusterConnection,
    slots: &[Vec<Group>],
    commands: &[&Cmd],
) -> Vec<(usize, Vec<Outcome>)> {
    let map = if slots.len() >= SLOTS_FOR_THE_SLOT_MAP {
        crate::topology::slot_map(connection).await.ok()
    } else {
        None
    };
    let owner = |slot: Option<u16>| map.as_ref()?.node_of(slot?);
    // Per slot: whether its lone call goes as `EVALSHA`, the body having
    // gone to its node with an earlier slot's command.
    let mut bodies_sent: Vec<(&Address, &'static str)> = Vec::new();
    let by_sha1: Vec<bool> = slots
        .iter()
        .map(|transactions| {
            let Some(first) = transactions.first() else {
                return false;
            };
            let Some(node) = owner(first.slot) else {
                return false;
            };
            match (first.lone_call(), first.by_sha1) {
                (Some(_), Some(sha1)) if bodies_sent.contains(&(node, sha1)) => true,
                _ => {
                    bodies_sent.extend(first.bodies.iter().map(|sha1| (node, *sha1)));
                    false
                }
            }
        })
        .collect();
    let runs = slots
        .iter()
        .zip(by_sha1)
        .enumerate()
        .map(|(index, (transactions, by_sha1))| {
            let mut connection = connection.clone();
            async move {
                let mut outcomes = Vec::with_capacity(transactions.len());
                for (position, transaction) in transactions.iter().enumerate() {
                    let as_planned = transaction.transaction(commands, false);
                    let outcome = if position == 0 && by_sha1 {
                        run_lone(&mut connection, transaction, commands, &as_planned).await
                    } else {
                        run_group(&mut connection, transaction, &as_planned).await
                    };
                    outcomes.push(outcome);
                }
                (index, outcomes)
            }
        });
    futures_util::future::join_all(runs).await
}

/// Sends a slot's lone script call as `EVALSHA` (its body went to the node
/// with an earlier command of the batch), in its own transaction like any
/// slot's: sent again with its body when the node answers `NOSCRIPT` (it
/// did not run).
async fn run_lone(
    connection: &mut ClusterConnection,
    group: &Group,
    commands: &[&Cmd],
    with_body: &Pipeline,
) -> Outcome {
    let by_sha1 = group.transaction(commands, true);
    let values = run_group(connection, group, &by_sha1).await?;
    match values.first() {
        Some(Value::ServerError(error)) if error.code() == "NOSCRIPT" => {
            run_group(connection, group, with_body).await
        }
        _ => Ok(values),
    }
}

/// What a node answered to one transaction.
pub(super) enum Answered {
    /// `EXEC` ran it: each command's reply.
    Ran(Vec<Value>),
    /// Refused whole for a redirection (nothing ran): the first one.
    Redirected(redis::ServerError),
    /// Refused whole for another reason (nothing ran): each command's
    /// reason (its own error while queued, or the abort).
    Refused(Vec<Value>),
}

/// Reads one transaction's replies (`MULTI`'s, one per command, `EXEC`'s)
/// for `count` commands.
pub(super) fn answered(replies: &[Value], count: usize) -> Result<Answered, redis::RedisError> {
    let queued = replies.get(1..=count).unwrap_or_default();
    // Valkey 9 refuses `EXEC` itself with the redirection when a queued
    // command's keys have moved on: the transaction is discarded whole.
    if let Some(redirected) = replies.get(count + 1).and_then(redirection) {
        return Ok(Answered::Redirected(redirected.clone()));
    }
    match replies.get(count + 1) {
        Some(Value::Array(values)) if values.len() == count => Ok(Answered::Ran(values.clone())),
        Some(Value::ServerError(error)) if error.code() == "EXECABORT" => {
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
/// slot is elsewhere, moving, or not served: `MOVED`, `ASK`, `TRYAGAIN`,
/// `CLUSTERDOWN`.
pub(super) fn redirection(reply: &Value) -> Option<&redis::ServerError> {
    match reply {
        Value::ServerError(error)
            if matches!(error.code(), "MOVED" | "ASK" | "TRYAGAIN" | "CLUSTERDOWN") =>
        {
            Some(error)
        }
        _ => None,
    }
}

/// Sends one slot's transaction to the slot's primary: the replies of its
/// commands, or why the request failed. A transaction the node refused
/// whole for a redirection ran nothing and is sent again: to the node a
/// `MOVED` names, or after a wait to the same node for `ASK`/`TRYAGAIN`.
async fn run_group(
    connection: &mut ClusterConnection,
    group: &Group,
    transaction: &Pipeline,
) -> Result<Vec<Value>, redis::RedisError> {
    let mut route = match group.slot {
        Some(slot) => SingleNodeRoutingInfo::SpecificNode(Route::new(slot, SlotAddr::Master)),
        None => SingleNodeRoutingInfo::RandomPrimary,
    };
    let count = group.sent.len();
    let (mut attempt, mut failures) = (0, 0);
    loop {
        // Every reply: MULTI's, one per queued command, and EXEC's.
        let replies = match connection
            .route_pipeline(transaction.clone(), 0, count + 2, route.clone())
            .await
        {
            Ok(replies) => replies,
            Err(error) if failures < group.failure_retries => {
                tracing::debug!(%error, "a slot's transaction of exactly-once calls is sent again");
                pause(failures).await;
                failures += 1;
                continue;
            }
            Err(error) => return Err(error),
        };
        match answered(&replies, count)? {
            Answered::Ran(values) | Answered::Refused(values) => return Ok(values),
            Answered::Redirected(redirected) if attempt < REDIRECTED_RETRIES => {
                // `MOVED <slot> <host>:<port>`: the slot's new node. (A
                // slot being moved answers `ASK` or `TRYAGAIN` until it is
                // done: wait, and ask the same node again.)
                if let Some(address) = moved_to(&redirected) {
                    route = address;
                }
                pause(attempt).await;
                attempt += 1;
            }
            Answered::Redirected(redirected) => {
                // Nothing ran: every command is refused with the redirection.
                return Ok(vec![Value::ServerError(redirected); count]);
            }
        }
    }
}

/// The wait before the `attempt`-th resend (from 0): 50 ms, doubling up
/// to 1 s, as a batch waits before it is sent again.
pub(super) async fn pause(attempt: u32) {
    crate::timer::sleep(crate::retry::backoff(
        super::FAILURE_RETRY_FIRST_DELAY,
        super::FAILURE_RETRY_MAX_DELAY,
        attempt,
    ))
    .await;
}

/// The node a `MOVED <slot> <host>:<port>` refusal names.
fn moved_to(redirected: &redis::ServerError) -> Option<SingleNodeRoutingInfo> {
    if redirected.code() != "MOVED" {
        return None;
    }
    let (host, port) = named_node(redirected)?;
    Some(SingleNodeRoutingInfo::ByAddress { host, port })
}

/// The node a `MOVED` or `ASK <slot> <host>:<port>` refusal names.
pub(super) fn named_node(redirected: &redis::ServerError) -> Option<(String, u16)> {
    let address = redirected.details()?.split(' ').nth(1)?;
    let (host, port) = address.rsplit_once(':')?;
    Some((host.to_owned(), port.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Keys, push_argument, start_call};
    use crate::test_support::ONCE;

    #[test]
    fn a_transaction_refused_for_a_redirection_ran_nothing() {
        use crate::test_support::server_error;
        let ok = || Value::Okay;
        let queued = || Value::SimpleString("QUEUED".to_owned());
        let ask = || server_error("ASK 10141 127.0.0.1:7001");
        let abort = || server_error("EXECABORT Transaction discarded because of previous errors.");
        // Refused while queued (Redis), or at EXEC (Valkey 9).
        for replies in [
            vec![ok(), queued(), ask(), abort()],
            vec![ok(), queued(), queued(), ask()],
        ] {
            match answered(&replies, 2) {
                Ok(Answered::Redirected(error)) => assert_eq!(error.code(), "ASK"),
                _ => panic!("{replies:?}"),
            }
        }
        let refused = [ok(), queued(), server_error("NOPERM no"), abort()];
        assert!(
            matches!(answered(&refused, 2), Ok(Answered::Refused(values)) if values.len() == 2)
        );
        let ran = [
            ok(),
            queued(),
            queued(),
            Value::Array(vec![Value::Int(1), Value::Int(2)]),
        ];
        assert!(matches!(answered(&ran, 2), Ok(Answered::Ran(values)) if values.len() == 2));
    }

    #[test]
    fn a_queued_eval_becomes_the_call_s_own_evalsha() {
        let mut keys = Keys::new();
        keys.push(&"{q}:a");
        let mut call = start_call::<i64, Error>(&ONCE, keys);
        push_argument(&mut call, &5u32);
        let evalsha = as_evalsha(&call.plain_eval(), ONCE.sha1()).expect("an EVAL");
        assert_eq!(
            evalsha.get_packed_command(),
            call.plain_evalsha().get_packed_command()
        );
        assert!(as_evalsha(&call.plain_evalsha(), ONCE.sha1()).is_none());
        assert!(as_evalsha(redis::cmd("GET").arg("k"), ONCE.sha1()).is_none());
    }
}
