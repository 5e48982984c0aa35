//! A pipeline whose calls are in several slots of a cluster: one
//! transaction per slot, sent to the slot's primary, all at once.
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

use std::collections::BTreeMap;

use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, Pipeline, Value};

use super::{BATCH, Batch, Entry, Replies};
use crate::error::Error;

/// How many times a slot's transaction is sent again after the node refused
/// it whole for a redirection (nothing ran).
const REDIRECTED_RETRIES: u32 = 5;

/// What one command of a slot's transaction is.
#[derive(Debug, Clone, Copy)]
enum Sent {
    /// The queued command at this index.
    Queued(usize),
    /// The `FUNCTION LOAD` queued at this index, sent again in this group.
    Load(usize),
}

/// One slot's transaction: what it sends, and what each command is.
struct Group {
    slot: Option<u16>,
    pipeline: Pipeline,
    sent: Vec<Sent>,
    /// How many times it is sent again after a connection failure or a
    /// timeout: only when it holds nothing but calls of `exactly_once`
    /// scripts (see [`Batch::run`]).
    failure_retries: u32,
}

impl Batch {
    /// The queued commands by slot, each slot's in the order queued, the
    /// slots in the order of their first command. A command without a slot
    /// (a plain command, or a script without keys) goes with the command
    /// before it, or with the first slot's when it comes first.
    fn slot_groups(&self) -> Vec<(Option<u16>, Vec<usize>)> {
        let first_slot = self.slots.iter().flatten().next().copied();
        let mut order: Vec<Option<u16>> = Vec::new();
        let mut groups: BTreeMap<Option<u16>, Vec<usize>> = BTreeMap::new();
        let mut current = first_slot;
        for (index, entry) in self.entries.iter().enumerate() {
            if matches!(entry, Entry::Load) {
                continue;
            }
            let slot = self.slots.get(index).copied().flatten().or(current);
            current = slot;
            if !groups.contains_key(&slot) {
                order.push(slot);
            }
            groups.entry(slot).or_default().push(index);
        }
        order
            .into_iter()
            .map(|slot| {
                let indices = groups.remove(&slot).unwrap_or_default();
                (slot, indices)
            })
            .collect()
    }

    /// The transaction that sends `indices` (one slot's commands).
    fn group(&self, slot: Option<u16>, indices: &[usize]) -> Group {
        let commands: Vec<&Cmd> = self.pipeline.cmd_iter().collect();
        let mut pipeline = Pipeline::with_capacity(indices.len() + 1);
        pipeline.atomic();
        // Each reply is decoded on its own, so one failed command must not
        // hide the others' replies.
        pipeline.ignore_errors();
        let mut sent = Vec::with_capacity(indices.len() + 1);
        let mut bodies_sent: Vec<&'static str> = Vec::new();
        let mut loaded: Vec<usize> = Vec::new();
        for &index in indices {
            let Some(&command) = commands.get(index) else {
                continue;
            };
            let mut command = command;
            if let Some(Entry::Script(script)) = self.entries.get(index) {
                if let Some(load) = self.load_entry(&Entry::Script(script))
                    && !loaded.contains(&load)
                    && let Some(&load_command) = commands.get(load)
                {
                    loaded.push(load);
                    pipeline.add_command(load_command.clone());
                    sent.push(Sent::Load(load));
                }
                if let Some(Some(evalsha)) = self.by_sha1.get(index) {
                    if bodies_sent.contains(&script.sha1()) {
                        command = evalsha;
                    } else {
                        bodies_sent.push(script.sha1());
                    }
                }
            }
            pipeline.add_command(command.clone());
            sent.push(Sent::Queued(index));
        }
        let failure_retries =
            self.failure_retries_of(indices.iter().filter_map(|index| self.entries.get(*index)));
        Group {
            slot,
            pipeline,
            sent,
            failure_retries,
        }
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
    // Per slot, its transactions, sent one after the other.
    let slots: Vec<Vec<Group>> = batch
        .slot_groups()
        .into_iter()
        .map(|(slot, indices)| {
            indices
                .chunks(batch.slot_transaction_limit)
                .map(|chunk| batch.group(slot, chunk))
                .collect()
        })
        .collect();
    let runs = slots.iter().map(|transactions| {
        let mut connection = connection.clone();
        async move {
            let mut outcomes = Vec::with_capacity(transactions.len());
            for transaction in transactions {
                outcomes.push(run_group(&mut connection, transaction).await);
            }
            outcomes
        }
    });
    let deadline = batch.deadline;
    let outcomes = crate::timer::within(deadline, futures_util::future::join_all(runs))
        .await
        .ok_or_else(|| Error::Timeout {
            operation: BATCH,
            source: redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the batch's deadline of {deadline:?} passed"),
            )),
        })?;
    let queued = batch.entries.len();
    let mut values = vec![Value::Nil; queued];
    let mut failed: Vec<Option<redis::RedisError>> = vec![None; queued];
    let mut load_of: Vec<Option<usize>> = vec![None; queued];
    let sent = slots.iter().flatten().zip(outcomes.into_iter().flatten());
    for (group, outcome) in sent {
        match outcome {
            Ok(replies) => {
                let mut group_load: Vec<(usize, usize)> = Vec::new();
                for (sent, value) in group.sent.iter().zip(replies) {
                    match *sent {
                        Sent::Queued(index) => {
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
                    if let Sent::Queued(index) = sent
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
    Ok(Replies {
        batch: batch.id,
        values,
        entries: batch.entries.clone(),
        load_of,
        failed,
    })
}

/// Sends one slot's transaction to the slot's primary: the replies of its
/// commands, or why the request failed. A transaction the node refused
/// whole for a redirection ran nothing and is sent again: to the node a
/// `MOVED` names, or after a wait to the same node for `ASK`/`TRYAGAIN`.
async fn run_group(
    connection: &mut ClusterConnection,
    group: &Group,
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
            .route_pipeline(group.pipeline.clone(), 0, count + 2, route.clone())
            .await
        {
            Ok(replies) => replies,
            Err(error) if failures < group.failure_retries => {
                tracing::debug!(%error, "a slot's transaction of exactly-once calls is sent again");
                crate::timer::sleep(crate::retry::backoff(
                    super::FAILURE_RETRY_FIRST_DELAY,
                    super::FAILURE_RETRY_MAX_DELAY,
                    failures,
                ))
                .await;
                failures += 1;
                continue;
            }
            Err(error) => return Err(error),
        };
        let queued = replies.get(1..=count).unwrap_or_default();
        match replies.last() {
            Some(Value::Array(values)) if values.len() == count => return Ok(values.clone()),
            Some(Value::ServerError(error)) if error.code() == "EXECABORT" => {
                let redirected = queued.iter().find_map(|reply| match reply {
                    Value::ServerError(queued)
                        if matches!(
                            queued.code(),
                            "MOVED" | "ASK" | "TRYAGAIN" | "CLUSTERDOWN"
                        ) =>
                    {
                        Some(queued)
                    }
                    _ => None,
                });
                if let Some(redirected) = redirected
                    && attempt < REDIRECTED_RETRIES
                {
                    // `MOVED <slot> <host>:<port>`: the slot's new node.
                    // (A slot being moved answers `ASK` or `TRYAGAIN` until
                    // it is done: wait, and ask the same node again.)
                    if redirected.code() == "MOVED"
                        && let Some((host, port)) = redirected
                            .details()
                            .and_then(|details| details.split(' ').nth(1))
                            .and_then(|address| address.rsplit_once(':'))
                            .and_then(|(host, port)| Some((host.to_owned(), port.parse().ok()?)))
                    {
                        route = SingleNodeRoutingInfo::ByAddress { host, port };
                    }
                    crate::timer::sleep(crate::retry::backoff(
                        super::FAILURE_RETRY_FIRST_DELAY,
                        super::FAILURE_RETRY_MAX_DELAY,
                        attempt,
                    ))
                    .await;
                    attempt += 1;
                    continue;
                }
                // Nothing ran: each command gets the reason it was refused
                // (its own error while queued, or the abort).
                return Ok(queued
                    .iter()
                    .map(|reply| match reply {
                        Value::ServerError(_) => reply.clone(),
                        _ => Value::ServerError(error.clone()),
                    })
                    .collect());
            }
            other => {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "the replies of EXEC",
                    format!("{other:?}"),
                )));
            }
        }
    }
}
