//! A pipeline across slots, cut into one transaction per slot (or several,
//! past [`Batch::slot_transaction_limit`]), and the replies of those
//! transactions put back in the order the commands were queued.
//!
//! Each slot's calls go in one `MULTI`/`EXEC`, in the order they were
//! queued: a script's first call in it is `EVAL` with the body and the
//! later ones `EVALSHA`, and a library's `FUNCTION LOAD` comes before its
//! first function call. Nothing runs between the commands of a
//! transaction, so a `SCRIPT FLUSH` (or a failover) cannot make a later
//! `EVALSHA` of the same transaction fail, nor put another command between
//! two calls of one slot.

use std::collections::HashMap;

use redis::{Cmd, Pipeline, Value};

use super::bodies::{as_evalsha, is_eval};
use super::{Batch, Entry, Outcome, Replies};

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
#[derive(Debug)]
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
    /// It holds nothing but calls of read-only scripts and `no-writes`
    /// functions (no library load): a replica may run it.
    pub(super) read_only: bool,
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

    /// How many commands it sends (`MULTI` and `EXEC` aside).
    pub(super) fn len(&self) -> usize {
        self.sent.len()
    }

    /// Whether it is one script call, and nothing else.
    pub(super) fn is_lone_call(&self) -> bool {
        matches!(
            (self.sent.as_slice(), self.by_sha1),
            ([Sent::Queued(_)], Some(_))
        )
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
        let read_only = sent.iter().all(|sent| !matches!(sent, Sent::Load(_)))
            && indices.iter().all(|index| {
                matches!(self.entries.get(*index), Some(Entry::Script(script)) if script.is_read_only())
            });
        Group {
            slot,
            sent,
            failure_retries,
            bodies: bodies_sent,
            by_sha1,
            read_only,
        }
    }
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
        lost: vec![None; failed.len()],
        failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Keys, push_argument, start_call};
    use crate::error::Error;
    use crate::test_support::ONCE;

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
