//! A pipeline on one server that carries each script's body at most once,
//! free of I/O: which commands the next request holds, and what the
//! answers mean.
//!
//! A pipeline is not atomic: a `SCRIPT FLUSH` (or a restart, or a
//! failover) between two of its commands makes a later `EVALSHA` of a
//! script answer `NOSCRIPT`. Such a call did not run. Sending it again is
//! safe only when that does not put it after a command queued after it
//! that ran. So, after each request, with F the first call that answered
//! `NOSCRIPT`:
//!
//! - when every command after F answered `NOSCRIPT` too (nothing after F
//!   ran), the calls that answered `NOSCRIPT` go again, in their order,
//!   each script's first with its body: the server then runs them in the
//!   order queued, as if the flush had come before F;
//! - otherwise they end with [`Error::ScriptCacheLost`](crate::Error::ScriptCacheLost),
//!   which says they did not run, and why; nothing is reordered.
//!
//! A request that goes again always carries the body of each script in
//! its first call, which runs whatever the cache holds: each request runs
//! at least one more call, so the rounds end.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use redis::{Cmd, Pipeline, Value};
use redis_script_codes::NOSCRIPT;

use super::{Batch, Entry};

/// The scripts one server answered a call of, kept between batches so
/// that a [`Batch::pipeline`] sends their calls as `EVALSHA`, with no body
/// at all ([`Batch::known_scripts`]).
///
/// Give each server its own: a script remembered of another server's
/// answers costs, when this server lacks it, that call and the calls of
/// the same script after it in the pipeline, which then end with
/// [`Error::ScriptCacheLost`](crate::Error::ScriptCacheLost) if commands
/// after them ran (never a call run out of order or twice). A `NOSCRIPT`
/// answer forgets the script, so the next pipeline carries its body.
/// Clones share what they know.
///
/// ```
/// use redis_script::{Batch, KnownScripts};
///
/// let known = KnownScripts::default();
/// let batch = Batch::pipeline().known_scripts(&known);
/// assert!(batch.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct KnownScripts(Arc<Mutex<HashSet<&'static str>>>);

impl KnownScripts {
    /// Runs `f` on the set, even after a panic elsewhere: a set that lost
    /// an update costs a body sent again, or a call that ends saying it did
    /// not run.
    fn with<R>(&self, f: impl FnOnce(&mut HashSet<&'static str>) -> R) -> R {
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut set)
    }

    /// Whether the server last answered a call of the script `sha1`
    /// without `NOSCRIPT`.
    pub fn contains(&self, sha1: &str) -> bool {
        self.with(|set| set.contains(sha1))
    }
}

/// Whether `command` is an `EVAL` (a script call sent with its body).
pub(super) fn is_eval(command: &Cmd) -> bool {
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

/// Whether `value` is the server's `NOSCRIPT`.
fn is_noscript(value: &Value) -> bool {
    matches!(value, Value::ServerError(error) if error.code() == NOSCRIPT)
}

/// The requests of one run of a pipeline on one server, and what their
/// answers came to, per queued command.
#[derive(Debug)]
pub(super) struct Rounds<'b> {
    batch: &'b Batch,
    /// The reply of each queued command so far.
    values: Vec<Value>,
    /// Per queued command: the failure of the request that carried it
    /// again, when it has no reply.
    failed: Vec<Option<redis::RedisError>>,
    /// Per queued command: it answered `NOSCRIPT` and was not sent again,
    /// since this many commands after the first such call had run.
    lost: Vec<Option<usize>>,
    /// The queued commands the current request carries, in order.
    pending: Vec<usize>,
    /// Per command of the current request: it went as `EVALSHA`, though
    /// queued with its body (a `NOSCRIPT` may go again).
    by_sha1: Vec<bool>,
    /// How many requests went so far.
    sent: usize,
}

impl<'b> Rounds<'b> {
    /// The rounds of `batch`, a pipeline (not a transaction), whose first
    /// request carries every queued command.
    pub(super) fn new(batch: &'b Batch) -> Self {
        let queued = batch.entries.len();
        Self {
            batch,
            values: vec![Value::Nil; queued],
            failed: vec![None; queued],
            lost: vec![None; queued],
            pending: (0..queued).collect(),
            by_sha1: Vec::new(),
            sent: 0,
        }
    }

    /// The next request, `None` when every command has its outcome. Each
    /// script's first call in it carries the body, unless the first
    /// request knows the server has the script ([`KnownScripts`]); the
    /// later calls of the script go as `EVALSHA`.
    pub(super) fn request(&mut self) -> Option<Pipeline> {
        if self.pending.is_empty() {
            return None;
        }
        let known = self.batch.known.as_ref().filter(|_| self.sent == 0);
        let commands: Vec<&Cmd> = self.batch.pipeline.cmd_iter().collect();
        let mut pipeline = Pipeline::with_capacity(self.pending.len());
        pipeline.ignore_errors();
        let mut bodies: Vec<&'static str> = Vec::new();
        self.by_sha1.clear();
        for &index in &self.pending {
            let Some(queued) = commands.get(index) else {
                continue;
            };
            let script = match self.batch.entries.get(index) {
                Some(Entry::Script(script)) if script.library().is_none() && is_eval(queued) => {
                    Some(*script)
                }
                _ => None,
            };
            let evalsha = script.and_then(|script| {
                let sha1 = script.sha1();
                let has_it = bodies.contains(&sha1) || known.is_some_and(|k| k.contains(sha1));
                if !has_it {
                    bodies.push(sha1);
                    return None;
                }
                as_evalsha(queued, sha1)
            });
            self.by_sha1.push(evalsha.is_some());
            match evalsha {
                Some(evalsha) => pipeline.add_command(evalsha),
                None => pipeline.add_command((*queued).clone()),
            };
        }
        self.sent += 1;
        Some(pipeline)
    }

    /// How many commands the current request carries.
    pub(super) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The current request failed as a whole with `error` (a request that
    /// went again: the first one's failure is the batch's).
    pub(super) fn failed(&mut self, error: redis::RedisError) {
        for index in std::mem::take(&mut self.pending) {
            if let Some(failed) = self.failed.get_mut(index) {
                *failed = Some(error.clone());
            }
        }
    }

    /// The replies to the current request, one per command it carried, in
    /// order: records them, and which calls go again.
    pub(super) fn answered(&mut self, replies: Vec<Value>) {
        let pending = std::mem::take(&mut self.pending);
        if replies.len() != pending.len() {
            let error = redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{} replies to a request of {} commands",
                    replies.len(),
                    pending.len()
                ),
            ));
            self.pending = pending;
            self.failed(error);
            return;
        }
        self.remember(&pending, &replies);
        let first = pending
            .iter()
            .zip(&replies)
            .zip(&self.by_sha1)
            .position(|((_, value), by_sha1)| *by_sha1 && is_noscript(value));
        let again: Vec<usize> = match first {
            None => Vec::new(),
            Some(first) => pending
                .iter()
                .zip(&replies)
                .zip(&self.by_sha1)
                .skip(first)
                .filter(|((_, value), by_sha1)| **by_sha1 && is_noscript(value))
                .map(|((index, _), _)| *index)
                .collect(),
        };
        // Commands after the first call that found no script which ran:
        // any reply but `NOSCRIPT` (an error reply too, to be safe).
        let ran_after = first.map_or(0, |first| {
            replies
                .iter()
                .skip(first + 1)
                .filter(|value| !is_noscript(value))
                .count()
        });
        for (index, value) in pending.into_iter().zip(replies) {
            if let Some(slot) = self.values.get_mut(index) {
                *slot = value;
            }
        }
        // Each request runs at least its first call (with the body), so
        // this bound is never reached; it keeps the loop finite by
        // construction.
        if ran_after == 0 && self.sent <= self.values.len() {
            self.pending = again;
        } else {
            for index in again {
                if let Some(lost) = self.lost.get_mut(index) {
                    *lost = Some(ran_after);
                }
            }
        }
    }

    /// Records in the batch's [`KnownScripts`] what the server answered
    /// the script calls of the request.
    fn remember(&self, pending: &[usize], replies: &[Value]) {
        let Some(known) = &self.batch.known else {
            return;
        };
        known.with(|set| {
            for (index, value) in pending.iter().zip(replies) {
                let Some(Entry::Script(script)) = self.batch.entries.get(*index) else {
                    continue;
                };
                if script.library().is_some() {
                    continue;
                }
                if is_noscript(value) {
                    set.remove(script.sha1());
                } else {
                    set.insert(script.sha1());
                }
            }
        });
    }

    /// The reply of each queued command, the failure of the request that
    /// carried it again, and whether it was lost to a flush.
    pub(super) fn finish(
        self,
    ) -> (
        Vec<Value>,
        Vec<Option<redis::RedisError>>,
        Vec<Option<usize>>,
    ) {
        (self.values, self.failed, self.lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::call::start_call;
    use crate::script::Script;
    use crate::test_support::{ONCE, keys, server_error};

    /// A second script, of another SHA1 than the fixtures'.
    static OTHER: Script = crate::script::new_script(
        "other",
        "lua/other.lua",
        "return 2",
        "7a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
        false,
        false,
    );

    fn noscript() -> Value {
        server_error("NOSCRIPT No matching script. Please use EVAL.")
    }

    /// A pipeline of `script` calls (`Some`) and plain commands (`None`).
    fn pipeline(order: &[Option<&'static Script>]) -> Batch {
        let mut batch = Batch::pipeline();
        for (index, script) in order.iter().enumerate() {
            match script {
                Some(script) => {
                    if let Err(error) = batch.add(start_call::<i64, Error>(script, keys(&["{k}"])))
                    {
                        panic!("{error}");
                    }
                }
                None => {
                    let _: super::super::Handle<i64> =
                        batch.add_command(redis::cmd("INCR").arg(index).to_owned());
                }
            }
        }
        batch
    }

    /// The first word of each command of `request`.
    fn names(request: &Pipeline) -> Vec<String> {
        request
            .cmd_iter()
            .map(|command| match command.args_iter().next() {
                Some(redis::Arg::Simple(name)) => String::from_utf8_lossy(name).into_owned(),
                _ => String::new(),
            })
            .collect()
    }

    #[test]
    fn each_script_s_body_goes_once_and_known_scripts_go_without() {
        let batch = pipeline(&[Some(&ONCE), None, Some(&OTHER), Some(&ONCE), Some(&OTHER)]);
        let mut rounds = Rounds::new(&batch);
        let request = rounds.request().unwrap_or_default();
        assert_eq!(
            names(&request),
            ["EVAL", "INCR", "EVAL", "EVALSHA", "EVALSHA"]
        );

        let known = KnownScripts::default();
        let batch = pipeline(&[Some(&ONCE), Some(&OTHER)]).known_scripts(&known);
        let mut rounds = Rounds::new(&batch);
        rounds.answered(vec![Value::Int(1), Value::Int(1)]);
        assert!(known.contains(ONCE.sha1()) && known.contains(OTHER.sha1()));
        let mut rounds = Rounds::new(&batch);
        let request = rounds.request().unwrap_or_default();
        assert_eq!(names(&request), ["EVALSHA", "EVALSHA"]);
        // A NOSCRIPT forgets the script.
        rounds.answered(vec![Value::Int(1), noscript()]);
        assert!(!known.contains(OTHER.sha1()));
    }

    #[test]
    fn calls_cut_off_by_a_flush_go_again_in_order_when_nothing_after_ran() {
        let batch = pipeline(&[Some(&ONCE), Some(&OTHER), Some(&ONCE), Some(&OTHER)]);
        let mut rounds = Rounds::new(&batch);
        let _ = rounds.request();
        rounds.answered(vec![Value::Int(1), Value::Int(2), noscript(), noscript()]);
        let again = rounds.request().unwrap_or_default();
        // Again, each with its body: the first call of each script runs
        // whatever the cache holds.
        assert_eq!(names(&again), ["EVAL", "EVAL"]);
        rounds.answered(vec![Value::Int(3), Value::Int(4)]);
        assert!(rounds.request().is_none());
        let (values, failed, lost) = rounds.finish();
        assert_eq!(values, (1..=4).map(Value::Int).collect::<Vec<_>>());
        assert!(failed.iter().all(Option::is_none));
        assert!(lost.iter().all(Option::is_none));
    }

    #[test]
    fn calls_cut_off_by_a_flush_end_as_lost_when_a_later_command_ran() {
        let batch = pipeline(&[Some(&ONCE), Some(&ONCE), None, Some(&ONCE)]);
        let mut rounds = Rounds::new(&batch);
        let _ = rounds.request();
        rounds.answered(vec![Value::Int(1), noscript(), Value::Int(7), noscript()]);
        assert!(rounds.request().is_none(), "nothing goes again");
        let (_, _, lost) = rounds.finish();
        assert_eq!(lost, [None, Some(1), None, Some(1)]);
        let error = Error::ScriptCacheLost {
            operation: ONCE.name(),
            sha1: ONCE.sha1(),
            ran_after: 1,
        };
        assert!(!error.may_have_executed());
        assert!(error.to_string().contains("did not run"), "{error}");
    }

    #[test]
    fn a_request_that_goes_again_and_fails_fails_only_its_calls() {
        let batch = pipeline(&[Some(&ONCE), Some(&ONCE)]);
        let mut rounds = Rounds::new(&batch);
        let _ = rounds.request();
        rounds.answered(vec![Value::Int(1), noscript()]);
        assert_eq!(rounds.pending(), 1);
        rounds.failed(redis::RedisError::from(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset,
        )));
        let (values, failed, _) = rounds.finish();
        assert_eq!(values.first(), Some(&Value::Int(1)));
        assert!(failed.first().is_some_and(Option::is_none));
        assert!(failed.get(1).is_some_and(Option::is_some));
    }

    #[test]
    fn a_later_script_s_first_call_after_the_cut_keeps_the_cut_calls_from_going_again() {
        // ONCE, ONCE, OTHER: a flush after the first call cuts the second
        // (an EVALSHA); OTHER's first call carries its body and runs, so
        // sending the second ONCE again would run it after OTHER.
        let batch = pipeline(&[Some(&ONCE), Some(&ONCE), Some(&OTHER)]);
        let mut rounds = Rounds::new(&batch);
        let request = rounds.request().unwrap_or_default();
        assert_eq!(names(&request), ["EVAL", "EVALSHA", "EVAL"]);
        rounds.answered(vec![Value::Int(1), noscript(), Value::Int(2)]);
        assert!(rounds.request().is_none(), "nothing goes again");
        let (_, _, lost) = rounds.finish();
        assert_eq!(lost, [None, Some(1), None]);
    }
}
