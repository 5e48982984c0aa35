//! Scripts (and plain commands) sent together: a pipeline, or a
//! `MULTI`/`EXEC` transaction.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, Value};

use crate::call::{
    Call, DEFAULT_DEADLINE, FAILURE_RETRY_FIRST_DELAY, FAILURE_RETRY_MAX_DELAY, decode_reply,
    function_load, loading_refused, not_deployed, not_found_after_load, refuse_loading,
};
use crate::error::{Error, KeySlot, Origin};
use crate::library::Library;
use crate::refusal;
use crate::reply::render_reply;
use crate::script::Script;
use crate::telemetry;
use redis_script_codes::{NOPERM, NOSCRIPT, is_refusal};

mod bodies;
#[cfg(feature = "cluster")]
pub(crate) mod cluster_connection;
#[cfg(feature = "cluster")]
mod engine;
#[cfg(feature = "cluster")]
pub(crate) mod node_connections;
#[cfg(feature = "cluster")]
mod transactions;

/// Label used in errors about the batch as a whole.
const BATCH: &str = "batch";
/// Label used in errors of a batch's plain commands.
const COMMAND: &str = "command";

/// The id the next batch gets: its handles and replies carry it, so that
/// a handle cannot read the replies of another batch.
static NEXT_BATCH: AtomicU64 = AtomicU64::new(1);

pub use bodies::KnownScripts;

/// Several script calls and commands sent in one round trip.
///
/// A batch never fails with `NOSCRIPT` and never reorders commands:
///
/// - in a [`transaction`](Batch::transaction) the first use of each script
///   is sent as `EVAL` with the body (which also caches it), later uses as
///   `EVALSHA`: nothing can flush the cache between them, since the server
///   runs the transaction as one;
/// - in a [`pipeline`](Batch::pipeline) too, except that a script the
///   server is known to have ([`Batch::known_scripts`]) is sent with no
///   body at all. A pipeline is not atomic: a `SCRIPT FLUSH` (or a
///   restart, or a failover) between two of its commands makes a later
///   `EVALSHA` answer `NOSCRIPT`, and that call did not run. When nothing
///   queued after the first such call ran, those calls go again, in their
///   order, with the body; otherwise they end with
///   [`Error::ScriptCacheLost`], which says they did not run. A pipeline
///   never runs a call twice, nor out of the order queued (see the
///   [runtime guide](crate::guide::runtime)).
///
/// A function of a library (`FCALL`) is preceded, before the first call of
/// each library in the batch, by a `FUNCTION LOAD` of that library's code
/// (never `REPLACE`). The batch's own replies hide it: its "already
/// exists" answer is the usual one, and when the load failed for another
/// reason, that library's calls report why ([`Error::LibraryConflict`],
/// [`Error::FunctionNameTaken`], [`Error::LoadFailed`]). The cost is the
/// library's code on the wire once per batch, and a `FUNCTION LOAD` that
/// the server answers after reading the `#!lua name=` line, without
/// compiling: about 2–7 µs of server time (Redis 7.0.15 and Valkey 8.1.8,
/// code of 0.7 to 21 KB), next to about 3 µs for an `FCALL`. Libraries,
/// unlike the script cache, survive until deleted, so later calls of the
/// library in the same batch are plain `FCALL`s; only a `FUNCTION DELETE`
/// or `FUNCTION FLUSH` between two commands of a pipeline could make a
/// later one fail, with `Function not found`.
///
/// A batch for a user allowed to call scripts but not to load them
/// ([`without_loading`](Batch::without_loading)) sends every script call
/// as `EVALSHA` and no `FUNCTION LOAD`: a script or library that is not
/// deployed ends its call's reply with [`Error::NotDeployed`]. A pipeline
/// whose `EVAL` or `FUNCTION LOAD` the server refuses (`NOPERM`) ends that
/// call the same way, and the script's later batches (and calls) load
/// nothing. A transaction with a command the user may not run is refused
/// whole (`EXECABORT`): give it `without_loading` from the start.
///
/// A transaction's keys must share one cluster slot, checked when each
/// call is added (on a standalone server too, so that a transaction that
/// could never run on a cluster fails in development). A pipeline's calls
/// may be in any slots: on a cluster, send it with
/// [`NodeConnections::run_batch`](crate::cluster::NodeConnections::run_batch)
/// (one request per primary, each script's body at most once per node) or
/// [`cluster::run_batch`](crate::cluster::run_batch) (one request per
/// slot, through the cluster connection). Either sends each slot's calls to
/// its primary in one transaction, all nodes at once, and hands back the
/// replies in the order queued. Calls of one slot run in the order queued; calls of different
/// slots run on different nodes, in no promised order. A plain command goes
/// with the call queued before it (keep its keys in that call's slot). A
/// pipeline across slots sent with [`Batch::run`] on a cluster connection
/// is refused before anything is sent ([`Error::BatchAcrossSlots`]); on a
/// standalone server it is one request, as always.
///
/// ```no_run
/// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
/// use redis_script::{Batch, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let mut batch = Batch::transaction();
/// let first = batch.add(release_lock::call("lock:{a}:1", "token-1"))?;
/// let second = batch.add(release_lock::call("lock:{a}:2", "token-2"))?;
/// let mut replies = batch.run(connection).await?;
/// let released: i64 = replies.take(first)? + replies.take(second)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Batch {
    /// This batch's id (see [`NEXT_BATCH`]).
    id: u64,
    pipeline: redis::Pipeline,
    /// Per command of the pipeline (the loads the batch adds included):
    /// what it is. A handle's index is its command's place here.
    entries: Vec<Entry>,
    /// Per command: the cluster slot of its keys (`None` without keys).
    slots: Vec<Option<u16>>,
    /// The first key of a slot other than the first call's, for the error
    /// of a pipeline across slots sent where redis-rs routes it to one
    /// node.
    other_slot: Option<KeySlot>,
    /// The libraries the batch loads, each with its load's place in
    /// `entries`.
    loads: Vec<(&'static Library, usize)>,
    /// `MULTI`/`EXEC`: the first use of a script caches it for the rest.
    atomic: bool,
    /// What the server answered before ([`Batch::known_scripts`]).
    known: Option<KnownScripts>,
    /// SHA1s of the scripts already sent with their body in this batch.
    bodies_sent: Vec<&'static str>,
    /// The slot of the batch's first keyed call, and that call's first key.
    slot: Option<KeySlot>,
    /// How long [`Batch::run`] may take.
    deadline: Duration,
    /// Sends no `EVAL` and no `FUNCTION LOAD` ([`Batch::without_loading`]).
    loads_nothing: bool,
    /// The most commands one slot's transaction holds on a cluster
    /// ([`Batch::slot_transaction_limit`]).
    slot_transaction_limit: usize,
}

/// How many commands one slot's transaction holds at most on a cluster,
/// unless [`Batch::slot_transaction_limit`] says otherwise.
pub const DEFAULT_SLOT_TRANSACTION_LIMIT: usize = 1_000;

/// What one command of a batch is.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A plain command added with [`Batch::add_command`].
    Command,
    /// A script or function call.
    Script(&'static Script),
    /// The `FUNCTION LOAD` the batch sends before the first call of a
    /// library.
    Load,
}

/// Refers to the reply of one command of a [`Batch`], typed: `T` is the
/// reply, `E` the error ([`Failure<E>`](crate::Failure) for a script
/// declared with `errors = E`).
#[must_use = "a handle is the only way to read its command's reply"]
#[derive(Debug)]
pub struct Handle<T, E = Error> {
    /// The batch that made it.
    batch: u64,
    index: usize,
    reply: PhantomData<fn() -> Result<T, E>>,
}

/// What [`Batch::add`] takes: a prepared [`Call`]. A batch sends its calls
/// once, together, so it takes no call that carries options of its own
/// ([`Call::retry_refusals`], [`Call::deadline`] make an
/// [`Invocation`](crate::Invocation)).
#[diagnostic::on_unimplemented(
    message = "a batch takes a prepared `Call`, not `{Self}`",
    label = "this call carries options of its own, which a batch cannot honour",
    note = "a batch sends its calls once, together: add the call itself (`batch.add(f::call(…))`) and give the batch its deadline with `Batch::deadline`"
)]
pub trait Batchable<T, E>: sealed::Sealed {
    #[doc(hidden)]
    fn into_call(self) -> Call<T, E>;
}

impl<T, E> Batchable<T, E> for Call<T, E> {
    fn into_call(self) -> Call<T, E> {
        self
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T, E> Sealed for crate::Call<T, E> {}
}

impl Batch {
    /// A pipeline: commands run in order, not atomically.
    pub fn pipeline() -> Self {
        let mut pipeline = redis::Pipeline::new();
        // Each reply is decoded on its own, so one failed command must not
        // hide the others' replies.
        pipeline.ignore_errors();
        Self {
            id: NEXT_BATCH.fetch_add(1, Ordering::Relaxed),
            pipeline,
            entries: Vec::new(),
            slots: Vec::new(),
            other_slot: None,
            loads: Vec::new(),
            atomic: false,
            known: None,
            bodies_sent: Vec::new(),
            slot: None,
            deadline: DEFAULT_DEADLINE,
            loads_nothing: false,
            slot_transaction_limit: DEFAULT_SLOT_TRANSACTION_LIMIT,
        }
    }

    /// A `MULTI`/`EXEC` transaction: commands run in order, atomically.
    /// On a cluster, all keys of a transaction must be in one slot.
    pub fn transaction() -> Self {
        let mut batch = Self::pipeline();
        batch.pipeline.atomic();
        batch.atomic = true;
        batch
    }

    /// Ends [`Batch::run`] with [`Error::Timeout`] (its calls may have run)
    /// when its replies have not all arrived after `deadline`, whatever the
    /// connection's own settings; [`DEFAULT_DEADLINE`] (10 s) unless set.
    /// (A blocking run is bounded by the connection's read timeout.)
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sends the calls added after it as `EVALSHA` and `FCALL` only, with
    /// no `EVAL` and no `FUNCTION LOAD`, for a user allowed to call scripts
    /// but not to load them (see the [least-privilege
    /// guide](crate::guide::least_privilege)). A call whose script or
    /// library the server does not have ends with [`Error::NotDeployed`],
    /// which names it; in a transaction, the other commands still run.
    ///
    /// ```
    /// use redis_script::Batch;
    ///
    /// let batch = Batch::pipeline().without_loading();
    /// assert!(batch.is_empty());
    /// ```
    pub fn without_loading(mut self) -> Self {
        self.loads_nothing = true;
        self
    }

    /// Sends, in a pipeline on one server ([`Batch::run`],
    /// [`Batch::run_blocking`]), the calls of the scripts `known` says the
    /// server has as `EVALSHA`, with no body at all, and records in
    /// `known` what the server answered. Give each server its own
    /// [`KnownScripts`], shared by every batch sent there. Without it, a
    /// pipeline carries each script's body once, in its first call. A
    /// transaction, which carries each body once, and a pipeline across
    /// slots on a cluster, which goes through its own paths, do not use
    /// it.
    ///
    /// When the server lost a script since (a `SCRIPT FLUSH`, a restart, a
    /// failover), its calls answer `NOSCRIPT` and go again with the body
    /// when nothing queued after them ran; otherwise they end with
    /// [`Error::ScriptCacheLost`] (they did not run).
    pub fn known_scripts(mut self, known: &KnownScripts) -> Self {
        self.known = Some(known.clone());
        self
    }

    /// On a cluster ([`crate::cluster::run_batch`]), puts a slot's calls in
    /// transactions of at most `commands` commands each (at least 1;
    /// [`DEFAULT_SLOT_TRANSACTION_LIMIT`] unless set), sent one after the
    /// other: a node serves no other client while it runs a transaction,
    /// so this bounds how long one batch holds it. Each transaction
    /// carries each script's body once.
    ///
    /// ```
    /// use redis_script::Batch;
    ///
    /// let batch = Batch::pipeline().slot_transaction_limit(200);
    /// assert!(batch.is_empty());
    /// ```
    pub fn slot_transaction_limit(mut self, commands: usize) -> Self {
        self.slot_transaction_limit = commands.max(1);
        self
    }

    /// Queues a script call. Its arguments must have been encoded
    /// ([`Error::Argument`] otherwise, and nothing is queued); its own keys
    /// must share one cluster slot
    /// ([`Error::CrossSlot`] otherwise, and nothing is queued); in a
    /// transaction, that of the batch's other calls too. A pipeline's calls
    /// may be in any slots: [`crate::cluster::run_batch`] sends them to
    /// their nodes.
    ///
    /// A call takes no options into a batch (see [`Batchable`]); a call of
    /// an `exactly_once` script keeps its id, and a batch of only such
    /// calls is sent again after a connection failure or a timeout, as
    /// each would be on its own (see [`Batch::run`]).
    pub fn add<T: FromRedisValue, E>(
        &mut self,
        call: impl Batchable<T, E>,
    ) -> Result<Handle<T, E>, Error> {
        let call = call.into_call();
        let script = call.script();
        call.check_arguments()?;
        let slot = call.slot()?;
        if let Some(slot) = slot {
            // The key's text is kept only for error messages: render it
            // for the first keyed call and on a mismatch, not on every add.
            let first_key = || KeySlot {
                key: call.first_key().unwrap_or_default(),
                slot,
            };
            match &self.slot {
                None => self.slot = Some(first_key()),
                Some(batch_slot) if batch_slot.slot == slot => {}
                Some(batch_slot) if self.atomic => {
                    return Err(Error::CrossSlot {
                        operation: script.name(),
                        keys: vec![batch_slot.clone(), first_key()],
                    });
                }
                Some(_) => {
                    if self.other_slot.is_none() {
                        self.other_slot = Some(first_key());
                    }
                }
            }
        }
        let loads = !self.loads_nothing && !loading_refused(script);
        if let Some(library) = script.library() {
            if loads {
                self.load_once(library);
            }
            return Ok(self.queue(call.plain_fcall(), Entry::Script(script), slot));
        }
        let command = if !loads || (self.atomic && self.bodies_sent.contains(&script.sha1())) {
            call.plain_evalsha()
        } else {
            if self.atomic {
                self.bodies_sent.push(script.sha1());
            }
            call.plain_eval()
        };
        Ok(self.queue(command, Entry::Script(script), slot))
    }

    /// Queues `FUNCTION LOAD` of `library` unless the batch already loads
    /// it (the same name and code).
    fn load_once(&mut self, library: &'static Library) {
        let loaded = self
            .loads
            .iter()
            .any(|(loaded, _)| loaded.name() == library.name() && loaded.sha1() == library.sha1());
        if !loaded {
            self.loads.push((library, self.entries.len()));
            let _: Handle<Value> = self.queue(function_load(library), Entry::Load, None);
        }
    }

    /// Queues a plain redis-rs command whose reply decodes as `T`.
    ///
    /// ```
    /// use redis_script::Batch;
    ///
    /// let mut batch = Batch::transaction();
    /// let length = batch.add_command::<u64>(redis::cmd("LLEN").arg("queue:{q}").to_owned());
    /// assert_eq!(batch.len(), 1);
    /// # let _ = length;
    /// ```
    pub fn add_command<T: FromRedisValue>(&mut self, command: Cmd) -> Handle<T> {
        // No slot of its own: on a cluster it goes with the call queued
        // before it (see `crate::cluster::run_batch`).
        self.queue(command, Entry::Command, None)
    }

    /// Number of queued calls and commands (not counting the `FUNCTION
    /// LOAD`s the batch adds for libraries).
    pub fn len(&self) -> usize {
        self.entries.len() - self.loads.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn queue<T, E>(&mut self, command: Cmd, entry: Entry, slot: Option<u16>) -> Handle<T, E> {
        self.pipeline.add_command(command);
        self.entries.push(entry);
        self.slots.push(slot);
        Handle {
            batch: self.id,
            index: self.entries.len() - 1,
            reply: PhantomData,
        }
    }

    /// Sends every queued command in one round trip. Errors of single
    /// commands are reported by [`Replies::take`]; this fails only when the
    /// batch as a whole failed (connection, or an aborted transaction).
    ///
    /// A batch is sent once: its calls may hold writes that must not run
    /// twice. The exception is a batch of nothing but calls of
    /// `exactly_once` scripts: every one of them replays its recorded reply
    /// when it already ran, so after a connection failure or a timeout the
    /// whole batch is sent again, as each call would be on its own (up to
    /// the fewest `retries` among them, waiting 50 ms and doubling up to
    /// 1 s); when a later send is refused, the batch still ends saying its
    /// calls may have run. Running the same `Batch` again later is just as
    /// safe for them.
    pub async fn run<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: ConnectionLike + ?Sized,
    {
        let retries = self.failure_retries();
        let runs = async {
            let mut retried = 0;
            let mut sent_before = SentBefore::default();
            let mut rounds = (!self.atomic).then(|| bodies::Rounds::new(self));
            let first = rounds.as_mut().and_then(bodies::Rounds::request);
            let request = first.as_ref().unwrap_or(&self.pipeline);
            loop {
                let (offset, count) = self.reply_window(self.entries.len());
                let replies = connection.req_packed_commands(request, offset, count).await;
                // redis-rs's cluster connection refuses, before sending, a
                // pipeline whose commands are in several slots.
                if let (Err(error), Some(keys)) = (&replies, self.across_slots())
                    && error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::CrossSlot)
                {
                    return Err(Error::BatchAcrossSlots { keys });
                }
                match replies {
                    // A connection failure or a timeout, not an error reply.
                    Err(error) if error.code().is_none() && retried < retries => {
                        sent_before.sent_again_after(&error);
                        crate::timer::sleep(crate::retry::backoff(
                            FAILURE_RETRY_FIRST_DELAY,
                            FAILURE_RETRY_MAX_DELAY,
                            retried,
                        ))
                        .await;
                        retried += 1;
                    }
                    replies => {
                        let values = self.unpack(sent_before.truthful(replies))?;
                        let Some(mut rounds) = rounds else {
                            return self.replies(values);
                        };
                        if values.len() != rounds.pending() {
                            return self.replies(values);
                        }
                        rounds.answered(values);
                        // The calls a flush cut off, again (see `bodies`).
                        while let Some(again) = rounds.request() {
                            match connection.req_packed_commands(&again, 0, again.len()).await {
                                Ok(values) => rounds.answered(values),
                                Err(error) => rounds.failed(error),
                            }
                        }
                        return self.replies_of_rounds(rounds);
                    }
                }
            }
        };
        let deadline = self.deadline;
        let bounded = async move {
            crate::timer::within(deadline, runs)
                .await
                .unwrap_or_else(|_| Err(deadline_passed(deadline)))
        };
        telemetry::traced(self.span(), bounded).await
    }

    /// Runs `sends`, the send loop of a pipeline across slots on a
    /// cluster, within the batch's deadline and in its span: the replies
    /// in the order queued.
    #[cfg(feature = "cluster")]
    async fn run_across_slots<'b>(
        &self,
        sends: impl std::future::Future<Output = engine::Engine<'b>>,
    ) -> Result<Replies, Error> {
        let run = async {
            let engine = crate::timer::within(self.deadline, sends)
                .await
                .map_err(|_| deadline_passed(self.deadline))?;
            Ok(engine.into_replies())
        };
        telemetry::traced(self.span(), run).await
    }

    /// A key of the first slot and one of another, when the calls are in
    /// several slots.
    fn across_slots(&self) -> Option<Vec<KeySlot>> {
        let other = self.other_slot.clone()?;
        let first = self.slot.clone()?;
        Some(vec![first, other])
    }

    /// How many times [`Batch::run`] sends the batch again after a
    /// connection failure or a timeout: only when every queued command is a
    /// call of an `exactly_once` script, the fewest `retries` among them.
    fn failure_retries(&self) -> u32 {
        self.failure_retries_of(&self.entries)
    }

    /// [`Self::failure_retries`] of some of the batch's commands.
    fn failure_retries_of<'e>(&self, entries: impl IntoIterator<Item = &'e Entry>) -> u32 {
        let mut fewest = None;
        for entry in entries {
            let Entry::Script(script) = entry else {
                return 0;
            };
            let Some(once) = script.exactly_once() else {
                return 0;
            };
            fewest = Some(fewest.map_or(once.retries(), |fewest: u32| fewest.min(once.retries())));
        }
        fewest.unwrap_or(0)
    }

    /// The span of one run: `MULTI` or `PIPELINE`, how many commands and
    /// how many of them are script calls.
    fn span(&self) -> tracing::Span {
        let operation = if self.atomic { "MULTI" } else { "PIPELINE" };
        let calls = self
            .entries
            .iter()
            .filter(|entry| matches!(entry, Entry::Script(_)))
            .count();
        telemetry::batch_span(operation, self.len(), calls)
    }

    /// [`Batch::run`] on a synchronous connection, blocking the thread
    /// until every reply arrived.
    ///
    /// It sends the batch once, a batch of `exactly_once` calls included:
    /// a synchronous connection never reconnects by itself, so sending
    /// again on it after a connection failure would fail again, as
    /// [`Call::invoke_blocking`](crate::Call::invoke_blocking) does not
    /// either. Run the same `Batch` again on a new connection: its
    /// `exactly_once` calls replay what already ran.
    ///
    /// On a connection that does not pipeline but routes a batch by its
    /// first command (the synchronous cluster connection), the `FUNCTION
    /// LOAD`s of the batch's libraries are sent first, on their own
    /// (redis-rs sends each to every primary), then the rest in one round
    /// trip routed by its first call.
    pub fn run_blocking<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        telemetry::traced_blocking(self.span(), || {
            // A connection that does not pipeline routes the batch by its
            // first command, to one node (the synchronous cluster
            // connection).
            if let Some(keys) = self.across_slots()
                && !connection.supports_pipelining()
            {
                return Err(Error::BatchAcrossSlots { keys });
            }
            if !self.loads.is_empty() && !connection.supports_pipelining() {
                return self.run_blocking_loads_first(connection);
            }
            let (offset, count) = self.reply_window(self.entries.len());
            if self.atomic {
                let packed = self.pipeline.get_packed_pipeline();
                return self
                    .unpack(connection.req_packed_commands(&packed, offset, count))
                    .and_then(|values| self.replies(values));
            }
            let mut rounds = bodies::Rounds::new(self);
            let mut first = true;
            while let Some(request) = rounds.request() {
                let packed = request.get_packed_pipeline();
                let outcome = connection.req_packed_commands(&packed, 0, request.len());
                if std::mem::take(&mut first) {
                    let values = self.unpack(outcome)?;
                    if values.len() != rounds.pending() {
                        return self.replies(values);
                    }
                    rounds.answered(values);
                } else {
                    match outcome {
                        Ok(values) => rounds.answered(values),
                        Err(error) => rounds.failed(error),
                    }
                }
            }
            self.replies_of_rounds(rounds)
        })
    }

    /// The replies of a pipeline sent in rounds (see `bodies`).
    fn replies_of_rounds(&self, rounds: bodies::Rounds<'_>) -> Result<Replies, Error> {
        let (values, failed, lost) = rounds.finish();
        let mut replies = self.replies(values)?;
        replies.failed = failed;
        replies.lost = lost;
        Ok(replies)
    }

    fn run_blocking_loads_first<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        let mut loaded = Vec::with_capacity(self.loads.len());
        for (library, _) in &self.loads {
            let reply = match connection.req_command(&function_load(library)) {
                Ok(value) => value,
                Err(error) => match redis::ServerError::try_from(error) {
                    Ok(error) => Value::ServerError(error),
                    Err(error) => return Err(Error::from_failure(Origin::label(BATCH), error)),
                },
            };
            loaded.push(reply);
        }
        let mut rest = redis::Pipeline::with_capacity(self.len());
        if self.atomic {
            rest.atomic();
        }
        for (command, entry) in self.pipeline.cmd_iter().zip(&self.entries) {
            if !matches!(entry, Entry::Load) {
                rest.add_command(command.clone());
            }
        }
        let (offset, count) = self.reply_window(self.len());
        let packed = rest.get_packed_pipeline();
        let mut replies = self
            .unpack(connection.req_packed_commands(&packed, offset, count))?
            .into_iter();
        let mut loaded = loaded.into_iter();
        // The loads' replies back in their places.
        let values = self
            .entries
            .iter()
            .map(|entry| match entry {
                Entry::Load => loaded.next(),
                Entry::Command | Entry::Script(_) => replies.next(),
            })
            .collect::<Option<Vec<Value>>>()
            .unwrap_or_default();
        self.replies(values)
    }

    /// Which of the replies to `sent` commands are kept: for a transaction
    /// only `EXEC`'s (after `MULTI`'s OK and one QUEUED per command).
    fn reply_window(&self, sent: usize) -> (usize, usize) {
        if self.atomic {
            (sent + 1, 1)
        } else {
            (0, sent)
        }
    }

    /// The replies of the commands, from what the connection returned: for
    /// a transaction, the items of `EXEC`'s reply.
    fn unpack(&self, received: redis::RedisResult<Vec<Value>>) -> Result<Vec<Value>, Error> {
        let mut received =
            received.map_err(|error| Error::from_failure(Origin::label(BATCH), error))?;
        let values = if self.atomic {
            match received.pop() {
                Some(Value::Array(values)) => values,
                Some(Value::ServerError(error)) => {
                    return Err(Error::from_server(Origin::label(BATCH), &error));
                }
                other => {
                    return Err(Error::Decode {
                        operation: BATCH,
                        expected: "the replies of EXEC",
                        reply: render_reply(&other.unwrap_or_default()),
                        reason: "the transaction did not run".to_owned(),
                    });
                }
            }
        } else {
            received
        };
        Ok(values)
    }

    /// One reply per queued command.
    fn replies(&self, values: Vec<Value>) -> Result<Replies, Error> {
        if values.len() != self.entries.len() {
            return Err(Error::Decode {
                operation: BATCH,
                expected: "one reply per queued command",
                reply: render_reply(&Value::Array(values)),
                reason: format!("{} commands were queued", self.entries.len()),
            });
        }
        #[cfg(feature = "metrics")]
        for (entry, value) in self.entries.iter().zip(&values) {
            if let Entry::Script(script) = entry {
                telemetry::measures::batch_call(script, value);
            }
        }
        let load_of = self
            .entries
            .iter()
            .map(|entry| self.load_entry(entry))
            .collect();
        Ok(Replies {
            batch: self.id,
            failed: vec![None; values.len()],
            lost: vec![None; values.len()],
            values,
            entries: self.entries.clone(),
            load_of,
        })
    }

    /// The index of the `FUNCTION LOAD` the batch queued for the library
    /// of `entry`'s function, if any.
    fn load_entry(&self, entry: &Entry) -> Option<usize> {
        let Entry::Script(script) = entry else {
            return None;
        };
        let library = script.library()?;
        self.loads
            .iter()
            .find(|(loaded, _)| loaded.name() == library.name() && loaded.sha1() == library.sha1())
            .map(|(_, index)| *index)
    }
}

/// What a request of a batch came to: the replies of its commands, or why
/// it failed.
type Outcome = Result<Vec<Value>, redis::RedisError>;

/// Whether a request sent again may have run before: only a request of
/// nothing but calls of `exactly_once` scripts goes again after a failure
/// that may have run (they replay what ran), and an answer to a later send
/// that says a call did not run is then not the truth of the request.
#[derive(Debug, Default)]
struct SentBefore {
    /// The first failure after which the request went again although that
    /// send may have run.
    may_have_run: Option<redis::RedisError>,
}

impl SentBefore {
    /// The request goes again after it failed with `error`.
    fn sent_again_after(&mut self, error: &redis::RedisError) {
        if self.may_have_run.is_none()
            && Error::from_failure(Origin::label(BATCH), error.clone()).may_have_executed()
        {
            self.may_have_run = Some(error.clone());
        }
    }

    /// What the request ends with: `outcome`, unless it says that a call
    /// did not run after a send that may have run; then the failure of
    /// that send, which says the calls may have run.
    fn truthful(&mut self, outcome: Outcome) -> Outcome {
        match self.may_have_run.take() {
            Some(earlier) if says_a_call_did_not_run(&outcome) => Err(earlier),
            _ => outcome,
        }
    }
}

/// Whether `outcome` says that a call of it did not run: a failure that
/// sent nothing (a refused connection), or a reply in the server's words of
/// a refusal, among the replies or one level within them (a transaction's
/// replies come within `EXEC`'s).
fn says_a_call_did_not_run(outcome: &Outcome) -> bool {
    let refusal = |value: &Value| {
        matches!(value, Value::ServerError(error)
            if is_refusal(error.code(), error.details().unwrap_or_default()))
    };
    match outcome {
        Ok(values) => values.iter().any(|value| match value {
            Value::Array(values) => values.iter().any(refusal),
            value => refusal(value),
        }),
        Err(error) => !Error::from_failure(Origin::label(BATCH), error.clone()).may_have_executed(),
    }
}

/// The error of a batch whose replies had not all arrived by its deadline:
/// its calls may have run.
fn deadline_passed(deadline: Duration) -> Error {
    Error::Timeout {
        operation: BATCH,
        source: redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the batch's deadline of {deadline:?} passed"),
        )),
    }
}

/// The replies of a [`Batch`], read one by one through their handles.
#[derive(Debug)]
pub struct Replies {
    /// The batch they answer.
    batch: u64,
    /// One reply per queued command, then (on a cluster) the replies of
    /// the `FUNCTION LOAD`s each slot's group sent.
    values: Vec<Value>,
    entries: Vec<Entry>,
    /// Per queued command: the place in `values` of the reply of the
    /// `FUNCTION LOAD` its function's call relied on.
    load_of: Vec<Option<usize>>,
    /// Per queued command: the failure of the request that carried it
    /// (on a cluster, a slot's group can fail alone), when it has no reply.
    failed: Vec<Option<redis::RedisError>>,
    /// Per queued command: it answered `NOSCRIPT` after a flush and was not
    /// sent again, since this many commands queued after it had run.
    lost: Vec<Option<usize>>,
}

impl Replies {
    /// Decodes the reply `handle` refers to. A script's error reply becomes
    /// [`Error::Script`] (or [`Error::Refused`]) naming that script; for a
    /// call declared with `errors = E`, its declared errors come back as
    /// [`Failure::Declared`](crate::Failure::Declared).
    pub fn take<T: FromRedisValue, E: From<Error>>(
        &mut self,
        handle: Handle<T, E>,
    ) -> Result<T, E> {
        if handle.batch != self.batch {
            return Err(E::from(Error::ForeignHandle {
                handle_batch: handle.batch,
                replies_batch: self.batch,
            }));
        }
        let script = match self.entries.get(handle.index) {
            Some(Entry::Script(script)) => Some(*script),
            _ => None,
        };
        let origin = script.map_or(Origin::label(COMMAND), Origin::script);
        if let Some(Some(failure)) = self.failed.get(handle.index) {
            return Err(E::from(Error::from_failure(origin, failure.clone())));
        }
        if let (Some(Some(ran_after)), Some(script)) = (self.lost.get(handle.index), script) {
            return Err(E::from(Error::ScriptCacheLost {
                operation: script.name(),
                sha1: script.sha1(),
                ran_after: *ran_after,
            }));
        }
        let value = self
            .values
            .get_mut(handle.index)
            .map(std::mem::take)
            .unwrap_or_default();
        if let Some(script) = script {
            let load = self
                .load_of
                .get(handle.index)
                .copied()
                .flatten()
                .and_then(|index| self.values.get(index));
            if let Some(error) = not_deployed_reply(script, &value, load) {
                return Err(E::from(error));
            }
            if let Some(load) = load_before_not_found(script, &value, load) {
                return Err(E::from(not_found_after_load(script, load)));
            }
        }
        decode_reply(origin, &value).map_err(E::from)
    }
}

/// [`Error::NotDeployed`] when `value`, the reply of `script`'s call, says
/// the server does not have the script and the batch did not load it:
/// `NOSCRIPT` to an `EVALSHA`, `Function not found` with no `FUNCTION
/// LOAD` before (`load`), or `NOPERM` to the `EVAL` or `FUNCTION LOAD`
/// (from then on the script's calls load nothing).
fn not_deployed_reply(
    script: &'static Script,
    value: &Value,
    load: Option<&Value>,
) -> Option<Error> {
    let Value::ServerError(error) = value else {
        return None;
    };
    let (code, detail) = (error.code(), error.details().unwrap_or_default());
    if script.library().is_none() {
        return match code {
            NOSCRIPT => Some(not_deployed(script, None)),
            NOPERM if refusal::names_command(detail, "eval") => {
                refuse_loading(script);
                Some(not_deployed(script, Some(format!("{code} {detail}"))))
            }
            _ => None,
        };
    }
    if !refusal::is_function_not_found(code, detail) {
        return None;
    }
    match load {
        None => Some(not_deployed(script, None)),
        Some(Value::ServerError(refused))
            if refused.code() == NOPERM
                && refusal::names_command(
                    refused.details().unwrap_or_default(),
                    "function|load",
                ) =>
        {
            refuse_loading(script);
            let refusal = format!("NOPERM {}", refused.details().unwrap_or_default());
            Some(not_deployed(script, Some(refusal)))
        }
        Some(_) => None,
    }
}

/// The reply of the `FUNCTION LOAD` (`load`) of `script`'s library, when
/// `value`, the reply of the call, is the server's `Function not found`
/// (unmarked: a function's own errors are marked).
fn load_before_not_found<'v>(
    script: &'static Script,
    value: &Value,
    load: Option<&'v Value>,
) -> Option<&'v Value> {
    script.library()?;
    let Value::ServerError(error) = value else {
        return None;
    };
    if !refusal::is_function_not_found(error.code(), error.details().unwrap_or_default()) {
        return None;
    }
    load
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Keys, push_argument, start_call};
    use crate::test_support::{ALLOW, ONCE, PEEK, server_error};

    fn allow(script: &'static Script, key: &str) -> Call<i64, Error> {
        let mut keys = Keys::new();
        keys.push(&key);
        let mut call = start_call(script, keys);
        push_argument(&mut call, &5u32);
        call
    }

    fn names(batch: &Batch) -> Vec<String> {
        batch
            .pipeline
            .cmd_iter()
            .map(|command| {
                command
                    .args_iter()
                    .take(2)
                    .map(|argument| match argument {
                        redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                        _ => String::new(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn each_library_is_loaded_once_before_its_first_call() {
        for mut batch in [Batch::pipeline(), Batch::transaction()] {
            let first = batch.add(allow(&ALLOW, "{q}:a")).map(|h| h.index);
            let plain = batch.add_command::<i64>(redis::cmd("GET").arg("{q}:b").to_owned());
            let second = batch.add(allow(&ALLOW, "{q}:b")).map(|h| h.index);
            assert_eq!(
                names(&batch),
                [
                    "FUNCTION LOAD",
                    "FCALL allow_marked",
                    "GET {q}:b",
                    "FCALL allow_marked"
                ]
            );
            assert_eq!(
                (first.ok(), plain.index, second.ok()),
                (Some(1), 2, Some(3))
            );
            assert_eq!(batch.len(), 3, "the load is the batch's own");
        }
    }

    /// The handle of the command at `index` of `batch`.
    fn handle(batch: &Batch, index: usize) -> Handle<i64> {
        Handle {
            batch: batch.id,
            index,
            reply: PhantomData,
        }
    }

    #[test]
    fn without_loading_sends_evalsha_and_fcall_and_no_load() {
        for batch in [Batch::pipeline(), Batch::transaction()] {
            let mut batch = batch.without_loading();
            let mut keys = Keys::new();
            keys.push(&"{q}:a");
            let script = batch.add(start_call::<i64, Error>(&ONCE, keys));
            let function = batch.add(allow(&ALLOW, "{q}:a"));
            assert_eq!(
                names(&batch),
                [
                    format!("EVALSHA {}", ONCE.sha1()),
                    "FCALL allow_marked".to_owned()
                ]
            );
            let (Ok(script), Ok(function)) = (script, function) else {
                panic!("both calls are added");
            };
            // Neither is on the server: each call says so, with no refusal.
            let mut replies = batch
                .replies(vec![
                    server_error("NOSCRIPT No matching script. Please use EVAL."),
                    server_error("ERR Function not found"),
                ])
                .unwrap_or_else(|error| panic!("{error}"));
            match replies.take(script) {
                Err(
                    error @ Error::NotDeployed {
                        refusal: None,
                        library: None,
                        ..
                    },
                ) => {
                    assert!(!error.may_have_executed());
                }
                other => panic!("{other:?}"),
            }
            assert!(matches!(
                replies.take(function),
                Err(Error::NotDeployed {
                    refusal: None,
                    library: Some(_),
                    ..
                })
            ));
        }
    }

    #[test]
    fn already_exists_is_swallowed_and_other_load_errors_reach_the_calls() {
        let mut batch = Batch::pipeline();
        for script in [&ALLOW, &PEEK] {
            if let Err(error) = batch.add(allow(script, "{q}:a")) {
                panic!("{error}");
            }
        }
        assert_eq!(names(&batch)[0], "FUNCTION LOAD");
        let calls = [1, 2];
        let exists = || server_error("ERR Library 'quota_lib' already exists");
        let not_found = || server_error("ERR Function not found");
        let replies = |values| {
            batch
                .replies(values)
                .unwrap_or_else(|error| panic!("{error}"))
        };

        let mut taken = replies(vec![exists(), Value::Int(1), Value::Int(2)]);
        assert_eq!(taken.take(handle(&batch, calls[0])).ok(), Some(1));
        assert_eq!(taken.take(handle(&batch, calls[1])).ok(), Some(2));

        // Another version of the library is loaded: it has no function of
        // this version's names, and nothing ran.
        let mut taken = replies(vec![exists(), not_found(), not_found()]);
        for call in calls {
            match taken.take(handle(&batch, call)) {
                Err(error @ Error::LibraryConflict { .. }) => {
                    assert!(!error.may_have_executed());
                }
                other => panic!("{other:?}"),
            }
        }

        // Another library registers a function of the library's, `allow`
        // itself included: the load failed, and no function of another
        // library answers to the marked names.
        for taken_name in ["other", "allow"] {
            let mut taken = replies(vec![
                server_error(&format!("ERR Function {taken_name} already exists")),
                not_found(),
                not_found(),
            ]);
            match taken.take(handle(&batch, calls[0])) {
                Err(error @ Error::FunctionNameTaken { .. }) => {
                    assert!(!error.may_have_executed());
                    assert!(
                        matches!(error, Error::FunctionNameTaken { function, .. } if function == taken_name)
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_handle_reads_only_its_own_batchs_replies() {
        let mut first = Batch::pipeline();
        let mut second = Batch::pipeline();
        let mine = first.add_command::<i64>(redis::cmd("INCR").arg("{h}:a").to_owned());
        let theirs = second.add_command::<i64>(redis::cmd("INCR").arg("{h}:b").to_owned());
        let mut replies = first
            .replies(vec![Value::Int(7)])
            .unwrap_or_else(|error| panic!("{error}"));
        match replies.take(theirs) {
            Err(error @ Error::ForeignHandle { .. }) => {
                assert_eq!(error.kind(), "foreign_handle");
                assert!(error.to_string().contains("another"), "{error}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(replies.take(mine).ok(), Some(7));
    }

    static ONCE_MORE: Script = crate::test_support::once("count_once_more", 5);

    #[test]
    fn only_a_batch_of_exactly_once_calls_is_sent_again() {
        let once = |script: &'static Script| {
            let mut keys = Keys::new();
            keys.push(&"{h}:counter");
            start_call::<i64, Error>(script, keys)
        };
        let mut both = Batch::pipeline();
        for script in [&ONCE, &ONCE_MORE] {
            if let Err(error) = both.add(once(script)) {
                panic!("{error}");
            }
        }
        assert_eq!(both.failure_retries(), 2, "the fewest retries");
        let mut mixed = Batch::transaction();
        if let Err(error) = mixed.add(once(&ONCE)) {
            panic!("{error}");
        }
        let _plain = mixed.add_command::<i64>(redis::cmd("INCR").arg("{h}:a").to_owned());
        assert_eq!(mixed.failure_retries(), 0);
        let mut other = Batch::pipeline();
        if let Err(error) = other.add(allow(&ALLOW, "{q}:a")) {
            panic!("{error}");
        }
        assert_eq!(other.failure_retries(), 0);
        assert_eq!(Batch::pipeline().failure_retries(), 0);
    }

    /// The failures of a request, as a connection reports them.
    fn failed(kind: std::io::ErrorKind) -> Outcome {
        Err(redis::RedisError::from(std::io::Error::from(kind)))
    }

    fn may_have_run(outcome: &Outcome) -> bool {
        !says_a_call_did_not_run(outcome)
    }

    #[test]
    fn after_a_send_that_may_have_run_no_answer_says_did_not_run() {
        use std::io::ErrorKind::{ConnectionRefused, ConnectionReset, TimedOut};
        let oom = || server_error("OOM command not allowed when used memory > 'maxmemory'.");
        let noscript = || server_error("NOSCRIPT No matching script.");
        for earlier in [ConnectionReset, TimedOut] {
            for later in [
                failed(ConnectionRefused),
                Ok(vec![Value::Int(1), oom()]),
                // A transaction's: within EXEC's reply.
                Ok(vec![
                    Value::Okay,
                    Value::Array(vec![Value::Int(1), noscript()]),
                ]),
            ] {
                let mut sent_before = SentBefore::default();
                let Err(earlier) = failed(earlier) else {
                    panic!("a failure");
                };
                sent_before.sent_again_after(&earlier);
                let outcome = sent_before.truthful(later);
                assert!(may_have_run(&outcome), "{outcome:?}");
            }
        }
        // Replies that say every call ran stand; so does any answer when
        // no send before may have run.
        let mut sent_before = SentBefore::default();
        if let Err(earlier) = failed(ConnectionReset) {
            sent_before.sent_again_after(&earlier);
        }
        let ran = Ok(vec![
            Value::Int(1),
            server_error("WRONGTYPE Operation against a key"),
        ]);
        assert_eq!(sent_before.truthful(ran.clone()).ok(), ran.ok());
        let mut sent_before = SentBefore::default();
        if let Err(refused) = failed(ConnectionRefused) {
            sent_before.sent_again_after(&refused);
        }
        assert!(!may_have_run(&sent_before.truthful(Ok(vec![oom()]))));
        assert!(!may_have_run(
            &sent_before.truthful(failed(ConnectionRefused))
        ));
    }
}
