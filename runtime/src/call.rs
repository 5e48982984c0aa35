//! One prepared script invocation and its round trips.

use std::borrow::Cow;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, Pipeline, RedisWrite, Value};
use redis_script_codes::{NOSCRIPT, once};
use tracing::Instrument as _;

use crate::error::{Error, KeySlot, Origin, truncate_for_display};
use crate::exactly_once::CallId;
use crate::library::{Library, load_error};
use crate::refusal;
use crate::reply::render_reply;
use crate::retry::{RetryRefusals, backoff};
use crate::script::Script;
use crate::shape::Shape;
use crate::slot::{has_hash_tag, key_slot};
use crate::telemetry::{self, CallSummary, Path, Started};

/// A script call with its keys and arguments encoded, ready to send.
///
/// Every `#[redis_script]` function `f` has a companion `f::call(...)` with
/// the same parameters (without the connection) that returns a `Call`; the
/// function itself is `f::call(...).invoke(conn)`. The command is built
/// once: `EVALSHA <sha> <numkeys> <keys…> <args…>` (or `EVALSHA_RO` for a
/// read-only script), with the SHA computed at compile time. A function of
/// a `#[redis_library]` is called the same way with
/// `FCALL <function> <numkeys> <keys…> <args…>` (or `FCALL_RO` for a
/// function with the `no-writes` flag).
///
/// `E` is the error type of the call: [`Error`], or
/// [`Failure<E>`](crate::Failure) for a script declared with `errors = E`.
pub struct Call<T, E = Error> {
    script: &'static Script,
    command: Cmd,
    routing: Routing,
    /// What the key prefixes the script builds keys from say about the
    /// call's slot.
    prefixes: PrefixCheck,
    /// The call's id, for a script declared `exactly_once`.
    call_id: Option<CallId>,
    /// How many of the keys are the script's own (not the record).
    key_count: usize,
    /// The reply type's shape, when it describes itself, for the reply tag
    /// in telemetry.
    reply_shape: Option<fn() -> Shape>,
    reply: PhantomData<fn() -> Result<T, E>>,
}

/// The key prefixes of one call: the first that cannot keep the keys
/// built from it in the call's slot, found as the keys and arguments are
/// encoded, and whether the caller lets untagged prefixes go.
#[derive(Debug, Clone, Default)]
struct PrefixCheck {
    problem: Option<PrefixProblem>,
    allow_untagged: bool,
}

#[derive(Debug, Clone)]
enum PrefixProblem {
    Unroutable {
        prefix: String,
        parameter: String,
        reason: crate::KeyPrefixProblem,
    },
    /// A prefix in another slot than the keys: the keys and the prefix.
    OtherSlot(Vec<KeySlot>),
}

impl PrefixCheck {
    /// Checks one prefix against the call's slot (`None`: no keys).
    fn check(
        &mut self,
        prefix: &[u8],
        parameter: impl FnOnce() -> String,
        slot: Option<u16>,
        first_key: Option<&[u8]>,
    ) {
        if self.problem.is_some() {
            return;
        }
        let unroutable = |reason| PrefixProblem::Unroutable {
            prefix: truncate_for_display(prefix),
            parameter: parameter(),
            reason,
        };
        self.problem = if !has_hash_tag(prefix) {
            Some(unroutable(crate::KeyPrefixProblem::NoHashTag))
        } else {
            match (slot, first_key) {
                (None, _) => Some(unroutable(crate::KeyPrefixProblem::NoKeys)),
                (Some(slot), Some(key)) if key_slot(prefix) != slot => {
                    Some(PrefixProblem::OtherSlot(vec![
                        KeySlot {
                            key: truncate_for_display(key),
                            slot,
                        },
                        KeySlot {
                            key: truncate_for_display(prefix),
                            slot: key_slot(prefix),
                        },
                    ]))
                }
                _ => None,
            }
        };
    }

    fn error(&self, script: &'static str) -> Option<Error> {
        if self.allow_untagged {
            return None;
        }
        Some(match self.problem.clone()? {
            PrefixProblem::Unroutable {
                prefix,
                parameter,
                reason,
            } => Error::KeyPrefix {
                script,
                prefix,
                parameter,
                reason,
            },
            PrefixProblem::OtherSlot(keys) => Error::CrossSlot { script, keys },
        })
    }
}

/// Where a cluster sends a call, decided from its keys before sending.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Routing {
    /// No keys: any node may run it.
    AnyNode,
    /// Every key (or, with `allow-cross-slot-keys`, the first) is in this slot.
    Slot(u16),
    /// The keys span several slots: refused without a round trip.
    CrossSlot(Vec<KeySlot>),
}

impl<T, E> std::fmt::Debug for Call<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and arguments may carry secrets: show only their count.
        f.debug_struct("Call")
            .field("script", &self.script.name())
            .field("sha1", &self.script.sha1())
            .field(
                "arguments",
                &self.command.args_iter().len().saturating_sub(3),
            )
            .field("exactly_once", &self.call_id.is_some())
            .finish()
    }
}

/// How one round trip ended, before decoding.
enum Outcome {
    /// A reply that is not an error.
    Reply(Value),
    /// The server does not have the script cached: it did not run.
    NoScript,
    /// The server has no function of this name: it did not run.
    NoFunction,
    /// The server does not know `EVALSHA_RO`/`EVAL_RO`/`FCALL_RO`: it did
    /// not run.
    NoReadOnlyCommands,
    Failed(Error),
}

/// Whether the servers this process talks to know `EVALSHA_RO`, `EVAL_RO`
/// and `FCALL_RO` (Redis 7.0 and later, unless the operator renamed them).
/// Cleared for the whole process the first time a server answers "unknown
/// command" for one of them; from then on read-only scripts use
/// `EVALSHA`/`EVAL` and read-only functions `FCALL`, which every server
/// with scripts (or functions) has.
static READ_ONLY_COMMANDS: AtomicBool = AtomicBool::new(true);

/// How long a call may take by default, retries included: then it ends
/// with [`Error::Timeout`] (the script may have run), whatever the
/// connection's own timeouts. Twice the servers' default
/// `busy-reply-threshold` (5 s), after which a script that still runs makes
/// the server answer `BUSY` to everyone. Set another with
/// [`Call::deadline`] (and [`Batch::deadline`](crate::Batch::deadline)).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// The wait before an exactly-once call's first retry after a failed
/// connection or a timeout; it doubles up to [`FAILURE_RETRY_MAX_DELAY`].
pub(crate) const FAILURE_RETRY_FIRST_DELAY: Duration = Duration::from_millis(50);
pub(crate) const FAILURE_RETRY_MAX_DELAY: Duration = Duration::from_secs(1);

/// Bytes reserved per ARGV parameter when sizing a command: enough for
/// numbers, tokens and short strings; longer values grow the buffer once.
const ARGUMENT_SIZE_GUESS: usize = 32;

/// Used by generated code: starts a call with its keys already encoded;
/// `arguments` is how many ARGV parameters will follow (sizing the command
/// once instead of growing it). A call of an `exactly_once` script gets a
/// new [`CallId`].
pub fn start_call<T, E>(script: &'static Script, keys: Keys, arguments: usize) -> Call<T, E> {
    let call_id = script.exactly_once().map(|_| CallId::generate());
    start(script, keys, arguments, call_id)
}

/// Used by generated code: [`start_call`] of an `exactly_once` script with
/// the caller's id (ignored for any other script).
pub fn start_call_with_id<T, E>(
    script: &'static Script,
    keys: Keys,
    arguments: usize,
    call_id: CallId,
) -> Call<T, E> {
    start(script, keys, arguments, Some(call_id))
}

fn start<T, E>(
    script: &'static Script,
    keys: Keys,
    arguments: usize,
    call_id: Option<CallId>,
) -> Call<T, E> {
    let mut routing = keys.routing(script.allows_cross_slot_keys());
    let mut prefixes = PrefixCheck::default();
    if let Routing::Slot(slot) = routing {
        for (index, key) in keys.iter().enumerate() {
            if script.builds_keys_from(index + 1) {
                prefixes.check(key, || format!("KEYS[{}]", index + 1), Some(slot), None);
            }
        }
    }
    // An exactly-once call sends its record as one more key, in the slot of
    // the call's keys; a keyless call is routed by its record.
    let record = match (script.exactly_once(), call_id) {
        (Some(once), Some(call_id)) => {
            let slot = match &routing {
                Routing::Slot(slot) => *slot,
                Routing::AnyNode => key_slot(call_id.as_str().as_bytes()),
                Routing::CrossSlot(keys) => keys.first().map_or(0, |key| key.slot),
            };
            if routing == Routing::AnyNode {
                routing = Routing::Slot(slot);
            }
            let key = once.record_key(script.name(), call_id.as_str().as_bytes(), slot);
            let ttl_ms = call_id.ttl_ms(once);
            Some((call_id, key, ttl_ms))
        }
        _ => None,
    };
    // A script that can raise a NOSCRIPT-looking error is always sent
    // with its body: the server never answers EVAL with NOSCRIPT, so such
    // a reply cannot be mistaken for a cache miss.
    let (name, script_id) = if script.is_function() {
        (fcall_name(script), script.name())
    } else if script.may_forge_refusals() {
        (eval_name(script), script.source())
    } else {
        (evalsha_name(script), script.sha1())
    };
    let key_count = keys.ends.len();
    let record_size = record.as_ref().map_or(0, |(_, key, _)| key.len() + 20);
    let mut command = Cmd::with_capacity(
        5 + keys.ends.len() + arguments,
        script_id.len() + 16 + keys.data.len() + record_size + ARGUMENT_SIZE_GUESS * arguments,
    );
    command
        .arg(name)
        .arg(script_id)
        .arg(keys.ends.len() + usize::from(record.is_some()));
    for key in keys.iter() {
        command.arg(key);
    }
    // The layout the wrapper reads: the record after the script's keys,
    // its TTL before the script's arguments (pushed after this).
    const _: () = assert!(
        matches!(once::RECORD_KEY, once::Position::Last)
            && matches!(once::TTL_MS, once::Position::First)
    );
    let call_id = record.map(|(call_id, key, ttl_ms)| {
        command.arg(key).arg(ttl_ms);
        call_id
    });
    Call {
        script,
        command,
        routing,
        prefixes,
        call_id,
        key_count,
        reply_shape: None,
        reply: PhantomData,
    }
}

/// Used by generated code: the shape of the call's reply type, so that
/// telemetry can name a tagged reply's tag.
pub fn set_reply_shape<T, E>(call: &mut Call<T, E>, shape: fn() -> Shape) {
    call.reply_shape = Some(shape);
}

/// Used by generated code: appends one ARGV parameter.
pub fn push_argument<T, E, A: redis::ToRedisArgs>(call: &mut Call<T, E>, argument: &A) {
    argument.write_redis_args(&mut call.command);
}

/// Used by generated code: appends the ARGV parameter at `position`
/// (1-based), which the declaration names a key prefix (`#[key_prefix]`):
/// the script builds keys by appending to it, so it must hold a hash tag
/// in the slot of the call's keys.
pub fn push_key_prefix<T, E, A: redis::ToRedisArgs>(
    call: &mut Call<T, E>,
    argument: &A,
    position: usize,
) {
    let encoded = argument.to_redis_args();
    for part in &encoded {
        call.command.arg(part);
    }
    let slot = match (&call.routing, call.key_count) {
        (_, 0) => None,
        (Routing::Slot(slot), _) => Some(*slot),
        // Cross-slot keys are refused anyway.
        _ => return,
    };
    let first_key = call.first_key_bytes().map(<[u8]>::to_vec);
    if let Some(prefix) = encoded.first() {
        call.prefixes.check(
            prefix,
            || format!("ARGV[{position}]"),
            slot,
            first_key.as_deref(),
        );
    }
}

/// How a call is invoked: what [`Call::retry_refusals`] and
/// [`Call::deadline`] set.
#[derive(Debug, Clone, Copy)]
struct Options {
    retry_refusals: Option<RetryRefusals>,
    /// How long the call may take, retries included.
    deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            retry_refusals: None,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// A [`Call`] with invocation options: what [`Call::retry_refusals`] and
/// [`Call::deadline`] return. It is invoked like the call itself; it cannot
/// be added to a [`Batch`](crate::Batch), which sends its calls once,
/// together, and could not honour one call's options (a batch has a
/// deadline of its own: [`Batch::deadline`](crate::Batch::deadline)).
pub struct Invocation<T, E = Error> {
    call: Call<T, E>,
    options: Options,
}

impl<T, E> std::fmt::Debug for Invocation<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invocation")
            .field("call", &self.call)
            .field("retry_refusals", &self.options.retry_refusals)
            .field("deadline", &self.options.deadline)
            .finish()
    }
}

impl<T, E> Call<T, E> {
    /// Sends the call again when the server refuses it with a refusal that
    /// passes (`LOADING`, `BUSY`, `TRYAGAIN`, …), as `policy` says. Without
    /// it, a refusal is returned at once as [`Error::Refused`].
    pub fn retry_refusals(self, policy: RetryRefusals) -> Invocation<T, E> {
        Invocation::of(self).retry_refusals(policy)
    }

    /// Ends the call with [`Error::Timeout`] (the script may have run) when
    /// it has not ended after `deadline`, retries and the cold path
    /// included, whatever the connection's own settings: redis-rs's cluster
    /// connection, for one, waits for a node that stopped answering for as
    /// long as the node stays up. [`DEFAULT_DEADLINE`] (10 s) unless set.
    ///
    /// On async connections the call is dropped at the deadline, wherever
    /// it is. A blocking call ([`Call::invoke_blocking`]) cannot be
    /// interrupted: it sends nothing more after its deadline, and each send
    /// is bounded by the connection's read timeout
    /// (`redis::Connection::set_read_timeout`).
    ///
    /// ```no_run
    /// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
    /// use std::time::Duration;
    /// use redis_script::redis_script;
    ///
    /// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
    /// async fn release_lock(lock: &str, token: &str) -> i64;
    ///
    /// let released = release_lock::call("lock:{a}", "token-1")
    ///     .deadline(Duration::from_millis(250))
    ///     .invoke(connection)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn deadline(self, deadline: Duration) -> Invocation<T, E> {
        Invocation::of(self).deadline(deadline)
    }

    /// Lets the call go when a prefix the script builds keys from has no
    /// hash tag, or names the slot of a call without keys
    /// ([`Error::KeyPrefix`]), or lies in another slot than the keys: for a
    /// standalone server only, where every key is local. Without it such
    /// a call fails before sending, so that the code is ready for the day
    /// the service moves to a cluster.
    ///
    /// ```no_run
    /// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
    /// use redis_script::redis_script;
    ///
    /// #[redis_script(path = "../lua/enqueue_job.lua", keys = 1)]
    /// async fn enqueue_job(queue: &str, job_id: &str, payload: &str) -> i64;
    ///
    /// // "jobs:" has no hash tag: refused unless the server is standalone.
    /// let length = enqueue_job::call("jobs:", "job-1", "{}")
    ///     .allow_untagged_prefixes()
    ///     .invoke(connection)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn allow_untagged_prefixes(mut self) -> Self {
        self.prefixes.allow_untagged = true;
        self
    }

    /// The script this call runs.
    pub fn script(&self) -> &'static Script {
        self.script
    }

    /// The id of this call of an `exactly_once` script (`None` for other
    /// scripts). The id is fixed when the call is made: every send of
    /// this `Call`, by [`Call::invoke`]'s own retries or by invoking it
    /// again, is the same logical call, so the script runs at most once
    /// and every send gets the first execution's reply.
    pub fn call_id(&self) -> Option<&CallId> {
        self.call_id.as_ref()
    }

    /// The command as it will be sent: `EVALSHA` (or `EVALSHA_RO`), or
    /// `EVAL` with the body for a script that could raise an error past
    /// Redis's mark; `FCALL` (or `FCALL_RO`) for a function of a library.
    pub fn command(&self) -> &Cmd {
        &self.command
    }

    /// `Err(Error::CrossSlot)` when the keys hash to different cluster
    /// slots (and the script did not declare `allow-cross-slot-keys`).
    pub fn check_slots(&self) -> Result<(), Error> {
        self.slot().map(|_| ())
    }

    /// The cluster slot of the call's keys (`None` without keys), or
    /// `Err(Error::CrossSlot)` when they do not share one.
    pub fn slot(&self) -> Result<Option<u16>, Error> {
        if let Some(error) = self.prefixes.error(self.script.name()) {
            return Err(error);
        }
        match &self.routing {
            Routing::AnyNode => Ok(None),
            Routing::Slot(slot) => Ok(Some(*slot)),
            Routing::CrossSlot(keys) => Err(Error::CrossSlot {
                script: self.script.name(),
                keys: keys.clone(),
            }),
        }
    }

    /// The first of the script's own keys, as sent.
    fn first_key_bytes(&self) -> Option<&[u8]> {
        if self.key_count == 0 {
            return None;
        }
        match self.command.args_iter().nth(3) {
            Some(redis::Arg::Simple(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// The first key, for error messages.
    pub(crate) fn first_key(&self) -> Option<String> {
        // EVALSHA <sha> <numkeys> <key>…
        match self.command.args_iter().nth(3) {
            Some(redis::Arg::Simple(bytes)) if !matches!(self.routing, Routing::AnyNode) => {
                Some(truncate_for_display(bytes))
            }
            _ => None,
        }
    }

    /// The same call as `EVAL <source> …`, for the cold path: `EVAL_RO`
    /// for a read-only script where the server has it. A function of a
    /// library has no `EVAL` form: for one, this is the call as `FCALL`.
    pub fn eval_command(&self) -> Cmd {
        if self.script.is_function() {
            return self.plain_fcall();
        }
        self.renamed(eval_name(self.script), self.script.source())
    }

    /// The first command without the `_RO` variants, for servers that lack
    /// them.
    fn without_read_only_commands(&self) -> Cmd {
        if self.script.is_function() {
            self.plain_fcall()
        } else if self.script.may_forge_refusals() {
            self.plain_eval()
        } else {
            self.plain_evalsha()
        }
    }

    /// The call as `EVALSHA <sha> …`, whatever the script's flags: batches
    /// go to a primary as a whole, where the `_RO` variants add nothing.
    pub(crate) fn plain_evalsha(&self) -> Cmd {
        self.renamed("EVALSHA", self.script.sha1())
    }

    /// The call as `EVAL <source> …` (see [`Self::plain_evalsha`]).
    pub(crate) fn plain_eval(&self) -> Cmd {
        self.renamed("EVAL", self.script.source())
    }

    /// A function's call as `FCALL <function> …`, whatever its flags: a
    /// batch or a load goes to a primary, where `FCALL_RO` adds nothing
    /// (and, on a replica, `FUNCTION LOAD` would be refused).
    pub(crate) fn plain_fcall(&self) -> Cmd {
        self.renamed("FCALL", self.script.name())
    }

    /// The cold path of a function: `FUNCTION LOAD <code>` (never
    /// `REPLACE`: another version is left alone) and the call as `FCALL`,
    /// in one pipeline. The async cluster connection routes a pipeline by
    /// its first keyed command (`FUNCTION LOAD` has none), so the load
    /// lands on the node that runs the call.
    fn load_and_call(&self, library: &Library) -> Pipeline {
        let mut pipeline = Pipeline::with_capacity(2);
        pipeline.add_command(function_load(library));
        pipeline.add_command(self.plain_fcall());
        pipeline
    }

    /// The command under another name, with `second` (the SHA1, the body
    /// or the function name) in place of its first argument.
    fn renamed(&self, name: &str, second: &str) -> Cmd {
        let mut command = Cmd::with_capacity(self.command.args_iter().len(), second.len() + 64);
        command.arg(name).arg(second);
        for argument in self.command.args_iter().skip(2) {
            if let redis::Arg::Simple(bytes) = argument {
                command.arg(bytes);
            }
        }
        command
    }
}

/// The name of a call's command, as sent.
fn command_name(command: &Cmd) -> &'static str {
    const NAMES: [&str; 6] = [
        "EVALSHA",
        "EVALSHA_RO",
        "EVAL",
        "EVAL_RO",
        "FCALL",
        "FCALL_RO",
    ];
    match command.args_iter().next() {
        Some(redis::Arg::Simple(name)) => NAMES
            .into_iter()
            .find(|known| known.as_bytes() == name)
            .unwrap_or("EVALSHA"),
        _ => "EVALSHA",
    }
}

/// `EVAL_RO` for a read-only script on servers that have it.
fn eval_name(script: &Script) -> &'static str {
    if script.is_read_only() && READ_ONLY_COMMANDS.load(Ordering::Relaxed) {
        "EVAL_RO"
    } else {
        "EVAL"
    }
}

/// `EVALSHA_RO` for a read-only script on servers that have it.
fn evalsha_name(script: &Script) -> &'static str {
    if script.is_read_only() && READ_ONLY_COMMANDS.load(Ordering::Relaxed) {
        "EVALSHA_RO"
    } else {
        "EVALSHA"
    }
}

/// `FCALL_RO` for a `no-writes` function on servers that have it.
fn fcall_name(script: &Script) -> &'static str {
    if script.is_read_only() && READ_ONLY_COMMANDS.load(Ordering::Relaxed) {
        "FCALL_RO"
    } else {
        "FCALL"
    }
}

/// `FUNCTION LOAD <code>` of a library.
pub(crate) fn function_load(library: &Library) -> Cmd {
    let mut command = Cmd::with_capacity(3, library.source().len() + 16);
    command.arg("FUNCTION").arg("LOAD").arg(library.source());
    command
}

impl<T: FromRedisValue, E: From<Error>> Call<T, E> {
    /// Runs the script: one `EVALSHA` when the server has it cached; on
    /// `NOSCRIPT`, one `EVAL` with the body and the same keys (so a cluster
    /// routes it to the same node), which also caches it. Never more than
    /// two round trips, never `SCRIPT LOAD`.
    ///
    /// A function of a library runs with one `FCALL` (`FCALL_RO`) when the
    /// server has its library. On `ERR Function not found`, one pipeline
    /// `[FUNCTION LOAD <code>, FCALL …]` loads the library and runs the
    /// call (on a cluster, on the node of the call's keys): two round trips
    /// cold, then warm. The load never replaces anything: when another
    /// version of the library is loaded and lacks the function, the call
    /// fails with [`Error::LibraryConflict`]; when another library holds
    /// one of its function names, with [`Error::FunctionNameTaken`]. A
    /// function that could raise `ERR Function not found` past Redis's mark
    /// (see [`Error::Script`]) is never loaded on the way: it fails with
    /// [`Error::NotLoaded`] until its library is deployed
    /// ([`Library::deploy`]).
    ///
    /// A read-only script is sent again once after its connection dropped
    /// (not after a timeout: it may still be running). A script that
    /// writes is never sent again after its request may have reached the
    /// server; its error says whether it may have run
    /// ([`Error::may_have_executed`]). Refusals are retried only as
    /// [`Call::retry_refusals`] asks.
    ///
    /// A script declared `exactly_once` is the exception: its call carries
    /// a [`CallId`], and after a connection failure or a timeout it is sent
    /// again with the same id, up to the script's `retries` (3 by default),
    /// waiting 50 ms before the first retry and doubling up to 1 s. A send
    /// that reaches a server where the call already ran returns the
    /// recorded reply, so the script runs at most once and every send gets
    /// the first execution's reply. When the retries run out, the error
    /// still says the script may have run, also when the last send was
    /// refused; invoking this same `Call` again later is safe.
    pub async fn invoke<C>(&self, connection: &mut C) -> Result<T, E>
    where
        C: ConnectionLike + ?Sized,
    {
        self.invoke_with(Options::default(), connection).await
    }

    async fn invoke_with<C>(&self, options: Options, connection: &mut C) -> Result<T, E>
    where
        C: ConnectionLike + ?Sized,
    {
        let span = telemetry::call_span(self.script, connection.get_db(), self.first_key_bytes());
        let mut attempts = Attempts::new(self, options, Reconnects::Maybe, span.clone());
        let calls = async {
            let mut next = attempts.start();
            loop {
                next = match next {
                    Next::Send(command) => {
                        let reply = connection.req_packed_command(&command).await;
                        attempts.received(reply)
                    }
                    Next::SendPipeline(pipeline) => {
                        let replies = connection
                            .req_packed_commands(&pipeline, 0, pipeline.len())
                            .await;
                        attempts.received_pipeline(replies)
                    }
                    Next::Wait(delay) => {
                        crate::timer::sleep(delay).await;
                        attempts.send_again()
                    }
                    Next::Done(result) => return result,
                };
            }
        };
        let ended = crate::timer::within(options.deadline, calls)
            .instrument(span)
            .await;
        let result = match ended {
            Some(result) => result,
            None => Err(attempts.deadline_passed()),
        };
        result.map_err(E::from)
    }

    /// [`Call::invoke`] on a synchronous connection (`redis::Connection`,
    /// an r2d2 pooled connection, the synchronous cluster connection),
    /// blocking the thread until the reply arrives.
    ///
    /// The same round trips and the same errors as [`Call::invoke`], with
    /// one difference: a read-only script is not sent again after its
    /// connection dropped, and an `exactly_once` call not after a failure
    /// or a timeout, because a synchronous connection does not reconnect by
    /// itself, and after a timeout the late reply would be read as the
    /// next one (take a fresh connection from the pool and invoke the same
    /// `Call` again: its id makes that safe).
    /// A refusal retry ([`Call::retry_refusals`]) sleeps the thread.
    ///
    /// On a connection that does not pipeline (the synchronous cluster
    /// connection), the cold path of a function sends its `FUNCTION LOAD`
    /// on its own first (redis-rs sends that one to every primary), then
    /// the `FCALL`.
    ///
    /// ```no_run
    /// use redis_script::redis_script;
    ///
    /// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
    /// async fn release_lock(lock: &str, token: &str) -> i64;
    ///
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1/")?;
    /// let mut connection = client.get_connection()?;
    /// let released = release_lock::call("lock:{a}", "token-1").invoke_blocking(&mut connection)?;
    /// # Ok(()) }
    /// ```
    pub fn invoke_blocking<C>(&self, connection: &mut C) -> Result<T, E>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        self.invoke_blocking_with(Options::default(), connection)
    }

    fn invoke_blocking_with<C>(&self, options: Options, connection: &mut C) -> Result<T, E>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        let span = telemetry::call_span(self.script, connection.get_db(), self.first_key_bytes());
        let _entered = span.enter();
        let began = std::time::Instant::now();
        let mut attempts = Attempts::new(self, options, Reconnects::Never, span.clone());
        let mut next = attempts.start();
        loop {
            let sends = matches!(next, Next::Send(_) | Next::SendPipeline(_));
            if sends && began.elapsed() >= options.deadline {
                return Err(E::from(attempts.deadline_passed()));
            }
            next = match next {
                Next::Send(command) => {
                    let reply = connection.req_command(&command);
                    attempts.received(reply)
                }
                Next::SendPipeline(pipeline) => {
                    let replies = if connection.supports_pipelining() {
                        let packed = pipeline.get_packed_pipeline();
                        connection.req_packed_commands(&packed, 0, pipeline.len())
                    } else {
                        one_by_one(connection, &pipeline)
                    };
                    attempts.received_pipeline(replies)
                }
                Next::Wait(delay) => {
                    std::thread::sleep(delay);
                    attempts.send_again()
                }
                Next::Done(result) => return result.map_err(E::from),
            };
        }
    }
}

/// The call with the default options, to which options can then be added
/// one by one (`if let Some(policy) = retry { invocation =
/// invocation.retry_refusals(policy) }`).
impl<T, E> From<Call<T, E>> for Invocation<T, E> {
    fn from(call: Call<T, E>) -> Self {
        Self::of(call)
    }
}

impl<T, E> Invocation<T, E> {
    fn of(call: Call<T, E>) -> Self {
        Self {
            call,
            options: Options::default(),
        }
    }

    /// See [`Call::retry_refusals`].
    pub fn retry_refusals(mut self, policy: RetryRefusals) -> Self {
        self.options.retry_refusals = Some(policy);
        self
    }

    /// See [`Call::deadline`].
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.options.deadline = deadline;
        self
    }

    /// The call this invokes.
    pub fn call(&self) -> &Call<T, E> {
        &self.call
    }
}

impl<T: FromRedisValue, E: From<Error>> Invocation<T, E> {
    /// [`Call::invoke`] with these options. Invoking the same
    /// `Invocation` again is invoking the same call again (for an
    /// `exactly_once` script, with the same [`CallId`]).
    pub async fn invoke<C>(&self, connection: &mut C) -> Result<T, E>
    where
        C: ConnectionLike + ?Sized,
    {
        self.call.invoke_with(self.options, connection).await
    }

    /// [`Call::invoke_blocking`] with these options.
    pub fn invoke_blocking<C>(&self, connection: &mut C) -> Result<T, E>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        self.call.invoke_blocking_with(self.options, connection)
    }
}

/// The commands of `pipeline` sent one after the other, for a synchronous
/// connection that does not pipeline; an error reply is kept in its place,
/// any other failure ends the sequence.
fn one_by_one<C>(connection: &mut C, pipeline: &Pipeline) -> redis::RedisResult<Vec<Value>>
where
    C: redis::ConnectionLike + ?Sized,
{
    let mut replies = Vec::with_capacity(pipeline.len());
    for command in pipeline.cmd_iter() {
        let reply = match connection.req_command(command) {
            Ok(value) => value,
            Err(error) => Value::ServerError(redis::ServerError::try_from(error)?),
        };
        replies.push(reply);
    }
    Ok(replies)
}

/// Whether the connection a call is sent on may reconnect by itself after
/// it dropped, so that sending a read-only script again can help.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reconnects {
    Maybe,
    Never,
}

/// What the driver of one call does next.
enum Next<'c, T> {
    /// Send this command and hand its reply to [`Attempts::received`].
    Send(Cow<'c, Cmd>),
    /// Send these commands in one pipeline and hand their replies to
    /// [`Attempts::received_pipeline`].
    SendPipeline(Pipeline),
    /// Wait, then call [`Attempts::send_again`].
    Wait(Duration),
    Done(Result<T, Error>),
}

/// The round trips of one call, apart from their I/O: which command to
/// send, what a reply means, whether to send again. The asynchronous and
/// the blocking call share it.
struct Attempts<'c, T, E> {
    call: &'c Call<T, E>,
    options: Options,
    stage: Stage,
    /// A read-only call may still be sent again after a dropped connection.
    connection_retry: bool,
    refusal_retries: u32,
    /// How many times an exactly-once call may be sent again after a
    /// failed connection or a timeout (0 for any other call), and how many
    /// times it was.
    failure_retry_limit: u32,
    failure_retries: u32,
    /// The first error after which the call was sent again although that
    /// send may have run.
    may_have_run: Option<Error>,
    /// What telemetry reports when the call ends.
    span: tracing::Span,
    started: Started,
    attempts: u32,
    retries: u32,
    command: &'static str,
    reply_tag: Option<&'static str>,
}

/// Which command of the call is in flight.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The call's own command (`EVALSHA`, `EVALSHA_RO`, or `EVAL` for a
    /// script that may imitate NOSCRIPT).
    First,
    /// The first command again without `_RO`, the server lacking it.
    FirstWithoutReadOnly,
    /// `EVAL` (or `EVAL_RO`) with the body, after NOSCRIPT.
    Eval,
    /// `EVAL` after the server did not know `EVAL_RO`.
    EvalWithoutReadOnly,
    /// `[FUNCTION LOAD, FCALL]` after `Function not found`.
    LoadAndCall,
}

impl<'c, T: FromRedisValue, E> Attempts<'c, T, E> {
    fn new(
        call: &'c Call<T, E>,
        options: Options,
        reconnects: Reconnects,
        span: tracing::Span,
    ) -> Self {
        Self {
            call,
            options,
            stage: Stage::First,
            connection_retry: call.script.is_read_only() && reconnects == Reconnects::Maybe,
            refusal_retries: 0,
            failure_retry_limit: match (call.script.exactly_once(), &call.call_id, reconnects) {
                (Some(once), Some(_), Reconnects::Maybe) => once.retries(),
                _ => 0,
            },
            failure_retries: 0,
            may_have_run: None,
            span,
            started: Started::now(),
            attempts: 0,
            retries: 0,
            command: "",
            reply_tag: None,
        }
    }

    fn start(&mut self) -> Next<'c, T> {
        if let Err(error) = self.call.check_slots() {
            return self.done(Err(error));
        }
        self.send_again()
    }

    fn send_again(&mut self) -> Next<'c, T> {
        self.stage = Stage::First;
        self.send(Cow::Borrowed(&self.call.command))
    }

    fn send(&mut self, command: Cow<'c, Cmd>) -> Next<'c, T> {
        self.attempts += 1;
        self.command = command_name(&command);
        Next::Send(command)
    }

    /// The call did not end before its deadline: it ends now, as a
    /// timeout (a send may be in flight, or may have run).
    fn deadline_passed(&mut self) -> Error {
        let script = self.call.script.name();
        let deadline = self.options.deadline;
        let source = redis::RedisError::from(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the call's deadline of {deadline:?} passed"),
        ));
        let error = self.truthful(Error::Timeout { script, source });
        self.report(Some(&error));
        error
    }

    /// The call ends: telemetry reports it.
    fn done(&mut self, result: Result<T, Error>) -> Next<'c, T> {
        self.report(result.as_ref().err());
        Next::Done(result)
    }

    /// Telemetry of the call's end (`failure`: how it failed, if it did).
    fn report(&mut self, failure: Option<&Error>) {
        let path = match self.stage {
            Stage::First => Path::Warm,
            Stage::FirstWithoutReadOnly => Path::ReadOnlyFallback,
            Stage::Eval | Stage::EvalWithoutReadOnly => Path::NoScriptEval,
            Stage::LoadAndCall => Path::FunctionLoad,
        };
        let summary = CallSummary {
            command: self.command,
            path,
            attempts: self.attempts,
            retries: self.retries,
            reply_tag: self.reply_tag,
        };
        telemetry::call_finished(
            &self.span,
            self.call.script,
            &summary,
            self.started,
            failure,
        );
    }

    fn received(&mut self, reply: redis::RedisResult<Value>) -> Next<'c, T> {
        let call = self.call;
        let (stage, next) = match (self.stage, Outcome::of(reply, call.script)) {
            (Stage::First, Outcome::NoReadOnlyCommands) => {
                forget_read_only_commands(call.script);
                (
                    Stage::FirstWithoutReadOnly,
                    call.without_read_only_commands(),
                )
            }
            (Stage::First | Stage::FirstWithoutReadOnly, Outcome::NoScript) => {
                (Stage::Eval, call.eval_command())
            }
            (Stage::First | Stage::FirstWithoutReadOnly, Outcome::NoFunction) => {
                if let Some(library) = call.script.library() {
                    self.stage = Stage::LoadAndCall;
                    self.attempts += 1;
                    self.command = "FCALL";
                    return Next::SendPipeline(call.load_and_call(library));
                }
                return self.finish(Err(self.unexpected_refusal()));
            }
            (Stage::Eval, Outcome::NoReadOnlyCommands) => {
                forget_read_only_commands(call.script);
                (Stage::EvalWithoutReadOnly, call.plain_eval())
            }
            (_, Outcome::Reply(value)) => {
                self.reply_tag = telemetry::reply_tag(call.reply_shape, &value);
                return self.finish(decode_value(call.script.name(), &value));
            }
            (_, Outcome::Failed(error)) => return self.finish(Err(error)),
            // EVAL caches what it runs; EVALSHA/EVAL are known everywhere.
            (_, Outcome::NoScript | Outcome::NoFunction | Outcome::NoReadOnlyCommands) => {
                return self.finish(Err(self.unexpected_refusal()));
            }
        };
        self.stage = stage;
        self.send(Cow::Owned(next))
    }

    /// The replies of `[FUNCTION LOAD, FCALL]`: the call's reply is the
    /// `FCALL`'s, whatever the load answered (`already exists` included:
    /// someone else loaded the library meanwhile). Only when the function
    /// is still not found does the load's reply say why.
    fn received_pipeline(&mut self, replies: redis::RedisResult<Vec<Value>>) -> Next<'c, T> {
        let call = self.call;
        let script = call.script;
        let replies = match replies {
            Ok(replies) => replies,
            Err(error) => {
                return self.finish(Err(Error::from_failure(Origin::script(script), error)));
            }
        };
        let [load, reply] = match <[Value; 2]>::try_from(replies) {
            Ok(pair) => pair,
            // Whether the call ran is unknown: Decode says it may have.
            Err(replies) => {
                return self.finish(Err(Error::Decode {
                    script: script.name(),
                    expected: "the replies of FUNCTION LOAD and FCALL",
                    reply: render_reply(&Value::Array(replies)),
                    reason: "the pipeline did not return two replies".to_owned(),
                }));
            }
        };
        trace_load(script, &load);
        match Outcome::of(Ok(reply), script) {
            Outcome::Reply(value) => {
                self.reply_tag = telemetry::reply_tag(call.reply_shape, &value);
                self.finish(decode_value(script.name(), &value))
            }
            Outcome::Failed(error) => self.finish(Err(error)),
            Outcome::NoFunction => self.finish(Err(not_found_after_load(script, &load))),
            Outcome::NoScript | Outcome::NoReadOnlyCommands => {
                self.finish(Err(self.unexpected_refusal()))
            }
        }
    }

    /// A cache miss or unknown command after the command that cannot
    /// cause one: `EVAL` caches what it runs, `FUNCTION LOAD` loads, and
    /// `EVALSHA`/`EVAL`/`FCALL` are known wherever scripts are.
    fn unexpected_refusal(&self) -> Error {
        let script = self.call.script;
        let (code, message) = if script.is_function() {
            ("ERR", refusal::FUNCTION_NOT_FOUND)
        } else {
            (NOSCRIPT, "the server did not run the script sent with EVAL")
        };
        Error::Refused {
            script: script.name(),
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }

    /// The call's result, or another try when the error allows one.
    fn finish(&mut self, result: Result<T, Error>) -> Next<'c, T> {
        let error = match result {
            Ok(reply) => return self.done(Ok(reply)),
            Err(error) => error,
        };
        let retry = match &error {
            Error::Connection { source, .. }
                if self.connection_retry
                    && (source.is_connection_dropped() || source.is_connection_refusal()) =>
            {
                self.connection_retry = false;
                Some((Duration::ZERO, "connection_dropped"))
            }
            // The same id: a send that ran returns the recorded reply.
            Error::Connection { .. } | Error::Timeout { .. }
                if self.failure_retries < self.failure_retry_limit =>
            {
                let delay = backoff(
                    FAILURE_RETRY_FIRST_DELAY,
                    FAILURE_RETRY_MAX_DELAY,
                    self.failure_retries,
                );
                self.failure_retries += 1;
                Some((
                    delay,
                    if error.is_timeout() {
                        "timeout"
                    } else {
                        "connection_failed"
                    },
                ))
            }
            Error::Refused { code, .. } if refusal::is_transient(code) => {
                match self.options.retry_refusals {
                    Some(policy) if self.refusal_retries < policy.retries() => {
                        let delay = policy.delay(self.refusal_retries);
                        self.refusal_retries += 1;
                        Some((delay, "refused"))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((delay, reason)) = retry else {
            let error = self.truthful(error);
            return self.done(Err(error));
        };
        if error.may_have_executed() && self.may_have_run.is_none() {
            self.may_have_run = Some(error);
        }
        self.retries += 1;
        telemetry::call_retried(self.call.script, reason);
        if delay.is_zero() {
            self.send_again()
        } else {
            Next::Wait(delay)
        }
    }

    /// The error a call ends with. After a send that may have run, a later
    /// send refused (or not sent at all) does not make "did not run" true:
    /// the call then ends with the error of that earlier send.
    fn truthful(&mut self, error: Error) -> Error {
        match self.may_have_run.take() {
            Some(earlier) if !error.may_have_executed() => earlier,
            _ => error,
        }
    }
}

/// The server answered "unknown command" for `EVALSHA_RO`/`EVAL_RO`/
/// `FCALL_RO`: from now on read-only scripts use `EVALSHA`/`EVAL` and
/// read-only functions `FCALL` in this process.
fn forget_read_only_commands(script: &Script) {
    if READ_ONLY_COMMANDS.swap(false, Ordering::Relaxed) {
        tracing::info!(
            script = script.name(),
            "the server does not know the _RO commands: read-only scripts use EVALSHA and FCALL from now on"
        );
    }
}

/// Why `FCALL` of `script` still answered `Function not found` after
/// `FUNCTION LOAD` of its library answered `load`, in the same request.
pub(crate) fn not_found_after_load(script: &'static Script, load: &Value) -> Error {
    match (load, script.library()) {
        (Value::ServerError(error), Some(library)) => {
            let (code, detail) = (error.code(), error.details().unwrap_or_default());
            if refusal::load_refusal(code, detail)
                == refusal::LoadRefusal::FunctionExists(script.name())
            {
                // Another library registers this very name: FCALL found and
                // ran its function, and the reply is that function's own.
                return Error::Script {
                    script: script.name(),
                    code: code.to_owned(),
                    message: refusal::FUNCTION_NOT_FOUND.to_owned(),
                    location: None,
                };
            }
            load_error(script.name(), library, code, detail)
        }
        // Loaded, yet the function is not found: the loaded code does not
        // register it (or it was deleted in between). Nothing ran.
        _ => Error::Refused {
            script: script.name(),
            code: "ERR".to_owned(),
            message: refusal::FUNCTION_NOT_FOUND.to_owned(),
        },
    }
}

/// What the cold path's `FUNCTION LOAD` did, for tracing.
fn trace_load(script: &Script, load: &Value) {
    let library = script.library().map_or("", Library::name);
    match load {
        Value::ServerError(error) => tracing::debug!(
            script = script.name(),
            library,
            load = error.details().unwrap_or_default(),
            "FUNCTION LOAD did not load the library"
        ),
        _ => tracing::debug!(
            script = script.name(),
            library,
            "FUNCTION LOAD loaded the library"
        ),
    }
}

/// Decodes one reply of `origin`; an error reply becomes [`Error::Refused`]
/// or [`Error::Script`].
pub(crate) fn decode_reply<T: FromRedisValue>(origin: Origin, value: &Value) -> Result<T, Error> {
    if let Value::ServerError(error) = value {
        return Err(Error::from_server(origin, error));
    }
    decode_value(origin.name(), value)
}

/// Decodes a reply that is not an error.
fn decode_value<T: FromRedisValue>(script: &'static str, value: &Value) -> Result<T, Error> {
    T::from_redis_value_ref(value).map_err(|error| Error::Decode {
        script,
        expected: std::any::type_name::<T>(),
        reply: render_reply(value),
        reason: crate::decode::reason(&error),
    })
}

impl Outcome {
    fn of(reply: redis::RedisResult<Value>, script: &'static Script) -> Self {
        let origin = Origin::script(script);
        let error = match reply {
            // An error reply the script returned (its code is marked):
            // whatever its words, the script ran.
            Ok(Value::ServerError(error))
                if redis_script_codes::unmarked(error.code()).is_some() =>
            {
                return Self::Failed(Error::from_server(origin, &error));
            }
            Ok(Value::ServerError(error)) => Error::from_server(origin, &error),
            Ok(value) => return Self::Reply(value),
            Err(error) => Error::from_failure(origin, error),
        };
        let function_not_found = script.is_function()
            && error.location().is_none()
            && matches!(error, Error::Refused { .. } | Error::Script { .. })
            && refusal::is_function_not_found(
                error.code().unwrap_or_default(),
                error.message().unwrap_or_default(),
            );
        if function_not_found {
            return match script.library() {
                Some(library) if script.may_forge_refusals() => Self::Failed(Error::NotLoaded {
                    script: script.name(),
                    library: library.name(),
                }),
                _ => Self::NoFunction,
            };
        }
        match &error {
            // Only the server's own wording, and never a code the script can
            // return: the checker rejects `error_reply('NOSCRIPT …')`.
            // Functions are never cached scripts: for one, this is a reply.
            Error::Refused { code, .. } if code == NOSCRIPT && !script.is_function() => {
                Self::NoScript
            }
            Error::Refused { code, message, .. }
                if code == "ERR" && names_read_only_command(message) =>
            {
                Self::NoReadOnlyCommands
            }
            _ => Self::Failed(error),
        }
    }
}

/// `unknown command 'EVALSHA_RO', with args beginning with: …`
fn names_read_only_command(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.starts_with("unknown command 'evalsha_ro'")
        || lower.starts_with("unknown command 'eval_ro'")
        || lower.starts_with("unknown command 'fcall_ro'")
}

/// The encoded keys of one call, in one buffer.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Keys {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    /// An empty key list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the argument(s) `key` encodes to.
    pub fn push<K: redis::ToRedisArgs>(&mut self, key: &K) {
        key.write_redis_args(self);
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .filter_map(|(start, end)| self.data.get(start..end))
    }

    /// The slot every key shares, or every key with its slot when they do
    /// not share one (unless cross-slot keys are allowed: then the first
    /// key's slot, which is where a cluster sends the call).
    fn routing(&self, allow_cross_slot_keys: bool) -> Routing {
        let mut slots = self.iter().map(key_slot);
        let Some(first) = slots.next() else {
            return Routing::AnyNode;
        };
        if allow_cross_slot_keys || slots.all(|slot| slot == first) {
            return Routing::Slot(first);
        }
        Routing::CrossSlot(
            self.iter()
                .map(|key| KeySlot {
                    key: truncate_for_display(key),
                    slot: key_slot(key),
                })
                .collect(),
        )
    }
}

impl RedisWrite for Keys {
    fn write_arg(&mut self, arg: &[u8]) {
        self.data.extend_from_slice(arg);
        self.ends.push(self.data.len());
    }

    fn writer_for_next_arg(&mut self) -> impl io::Write + '_ {
        self.ends.push(self.data.len());
        KeyWriter { keys: self }
    }
}

/// Writes one key in pieces, keeping its end offset current.
struct KeyWriter<'a> {
    keys: &'a mut Keys,
}

impl io::Write for KeyWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.keys.data.extend_from_slice(bytes);
        if let Some(end) = self.keys.ends.last_mut() {
            *end = self.keys.data.len();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVE_ITEM: Script = crate::script::new_script(
        "move_item",
        "lua/move.lua",
        "return 1",
        "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
        false,
        false,
        false,
    );

    static SCRIPT: Script = MOVE_ITEM;

    fn keys(names: &[&str]) -> Keys {
        let mut keys = Keys::new();
        for name in names {
            keys.push(name);
        }
        keys
    }

    fn arguments(command: &Cmd) -> Vec<Vec<u8>> {
        command
            .args_iter()
            .map(|argument| match argument {
                redis::Arg::Simple(bytes) => bytes.to_vec(),
                _ => b"<cursor>".to_vec(),
            })
            .collect()
    }

    #[test]
    fn evalsha_command_layout() {
        let mut call = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a", "{q}:b"]), 2);
        push_argument(&mut call, &"x");
        push_argument(&mut call, &7u32);
        let expected: Vec<Vec<u8>> = ["EVALSHA", SCRIPT.sha1(), "2", "{q}:a", "{q}:b", "x", "7"]
            .iter()
            .map(|part| part.as_bytes().to_vec())
            .collect();
        assert_eq!(arguments(call.command()), expected);
        let eval = arguments(&call.eval_command());
        assert_eq!(eval[0], b"EVAL");
        assert_eq!(eval[1], b"return 1");
        assert_eq!(eval[2..], expected[2..]);
        assert!(call.check_slots().is_ok());
    }

    #[test]
    fn slice_keys_spread_into_many_keys() {
        let mut list = Keys::new();
        list.push(&["{t}:1", "{t}:2", "{t}:3"].as_slice());
        assert_eq!(list.iter().count(), 3);
        let call = start_call::<(), Error>(&SCRIPT, list, 0);
        assert_eq!(arguments(call.command())[2], b"3");
    }

    #[test]
    fn cross_slot_keys_are_refused_before_sending() {
        let call = start_call::<(), Error>(&SCRIPT, keys(&["a", "b"]), 0);
        match call.check_slots() {
            Err(Error::CrossSlot { script, keys }) => {
                assert_eq!(script, "move_item");
                assert_eq!(
                    keys,
                    vec![
                        KeySlot {
                            key: "a".into(),
                            slot: key_slot(b"a")
                        },
                        KeySlot {
                            key: "b".into(),
                            slot: key_slot(b"b")
                        },
                    ]
                );
            }
            other => panic!("expected CrossSlot, got {other:?}"),
        }
    }

    /// `move_item` building keys from its first key.
    static PREFIXED: Script = crate::script::with_key_prefixes(MOVE_ITEM, &[1], false);

    fn prefix_error(call: &Call<(), Error>) -> Option<(String, String, crate::KeyPrefixProblem)> {
        match call.check_slots() {
            Err(Error::KeyPrefix {
                prefix,
                parameter,
                reason,
                ..
            }) => Some((prefix, parameter, reason)),
            Ok(()) => None,
            Err(other) => panic!("expected KeyPrefix, got {other:?}"),
        }
    }

    #[test]
    fn key_prefixes_need_a_hash_tag_in_the_call_slot() {
        use crate::KeyPrefixProblem::{NoHashTag, NoKeys};
        let tagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:{emails}:"]), 0);
        assert_eq!(prefix_error(&tagged), None);
        let untagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:", "x"]), 0);
        // Keys in different slots are refused as such first.
        assert!(matches!(
            untagged.check_slots(),
            Err(Error::CrossSlot { .. })
        ));
        let untagged = start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:"]), 0);
        assert_eq!(
            prefix_error(&untagged),
            Some(("queue:emails:".into(), "KEYS[1]".into(), NoHashTag))
        );
        // An empty tag is no tag: the whole key is hashed.
        let empty = start_call::<(), Error>(&PREFIXED, keys(&["queue:{}:"]), 0);
        assert!(prefix_error(&empty).is_some());
        // Only the declared positions are prefixes.
        let second = start_call::<(), Error>(&PREFIXED, keys(&["{q}:a", "{q}b"]), 0);
        assert_eq!(prefix_error(&second), None);

        // An argument declared a key prefix: tag, slot, and keys.
        let mut argument = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]), 1);
        push_key_prefix(&mut argument, &"jobs:{x}:", 1);
        assert_eq!(prefix_error(&argument), None);
        assert_eq!(arguments(argument.command())[4], b"jobs:{x}:");
        let mut untagged = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]), 1);
        push_key_prefix(&mut untagged, &"jobs:", 1);
        assert_eq!(
            prefix_error(&untagged),
            Some(("jobs:".into(), "ARGV[1]".into(), NoHashTag))
        );
        let mut elsewhere = start_call::<(), Error>(&SCRIPT, keys(&["count:{x}"]), 1);
        push_key_prefix(&mut elsewhere, &"jobs:{y}:", 1);
        match elsewhere.check_slots() {
            Err(Error::CrossSlot { keys, .. }) => assert_eq!(
                keys.iter().map(|key| key.slot).collect::<Vec<_>>(),
                [key_slot(b"count:{x}"), key_slot(b"jobs:{y}:")]
            ),
            other => panic!("expected CrossSlot, got {other:?}"),
        }
        let mut keyless = start_call::<(), Error>(&SCRIPT, Keys::new(), 1);
        push_key_prefix(&mut keyless, &"jobs:{x}:", 1);
        assert_eq!(
            prefix_error(&keyless),
            Some(("jobs:{x}:".into(), "ARGV[1]".into(), NoKeys))
        );

        // A standalone server: the caller lets them all go.
        let allowed = start_call::<(), Error>(&PREFIXED, keys(&["queue:emails:"]), 0)
            .allow_untagged_prefixes();
        assert_eq!(
            allowed.slot().ok().flatten(),
            Some(key_slot(b"queue:emails:"))
        );
        let allowed = elsewhere.allow_untagged_prefixes();
        assert!(allowed.check_slots().is_ok());
    }

    static LIBRARY: Library = crate::library::new_library(
        "quota_lib",
        "lua/quota_lib.lua",
        "#!lua name=quota_lib\nredis.register_function('allow', function(keys, args) return 1 end)\n",
        "0000000000000000000000000000000000000000",
        &["allow", "peek"],
    );
    static ALLOW: Script = crate::script::new_function(&LIBRARY, "allow", false, false, false);
    static PEEK: Script = crate::script::new_function(&LIBRARY, "peek", true, false, false);
    /// A function that can raise errors Redis does not mark.
    static COMPUTED: Script = crate::script::new_function(&LIBRARY, "allow", false, false, true);

    fn texts(command: &Cmd) -> Vec<String> {
        arguments(command)
            .into_iter()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .collect()
    }

    fn server_error(text: &str) -> Value {
        match redis::parse_redis_value(format!("-{text}\r\n").as_bytes()) {
            Ok(value) => value,
            Err(error) => panic!("{text}: {error}"),
        }
    }

    fn function_call(script: &'static Script) -> Call<i64, Error> {
        let mut call = start_call::<i64, Error>(script, keys(&["rl:{t}"]), 2);
        push_argument(&mut call, &10u32);
        push_argument(&mut call, &60u64);
        call
    }

    #[test]
    fn fcall_command_layout() {
        let call = function_call(&ALLOW);
        assert_eq!(
            texts(call.command()),
            ["FCALL", "allow", "1", "rl:{t}", "10", "60"]
        );
        assert_eq!(call.first_key().as_deref(), Some("rl:{t}"));
        assert_eq!(call.slot().ok().flatten(), Some(key_slot(b"rl:{t}")));
        // No EVAL form: the cold path loads the library.
        assert_eq!(texts(&call.eval_command()), texts(call.command()));
        let pipeline = call.load_and_call(&LIBRARY);
        let commands: Vec<Vec<String>> = pipeline.cmd_iter().map(texts).collect();
        assert_eq!(
            commands,
            [
                vec![
                    "FUNCTION".to_owned(),
                    "LOAD".to_owned(),
                    LIBRARY.source().to_owned()
                ],
                texts(call.command()),
            ]
        );
        assert_eq!(ALLOW.library().map(Library::name), Some("quota_lib"));
        assert_eq!(ALLOW.sha1(), LIBRARY.sha1());
        assert_eq!(ALLOW.path(), "lua/quota_lib.lua");
        assert!(SCRIPT.library().is_none());
    }

    #[test]
    fn no_writes_functions_use_fcall_ro_and_load_with_plain_fcall() {
        // READ_ONLY_COMMANDS is only cleared by a server without FCALL_RO,
        // which no unit test simulates.
        let call = function_call(&PEEK);
        assert_eq!(texts(call.command())[0], "FCALL_RO");
        let pipeline = call.load_and_call(&LIBRARY);
        let last = pipeline.cmd_iter().last().map(texts).unwrap_or_default();
        assert_eq!(last[0], "FCALL", "a load goes to a primary");
    }

    /// Drives `call` through `replies`, one per round trip, and returns
    /// the commands sent (a pipeline as its commands joined by ` | `) and
    /// the result.
    fn drive(
        call: &Call<i64, Error>,
        replies: Vec<redis::RedisResult<Vec<Value>>>,
    ) -> (Vec<String>, Option<Result<i64, Error>>) {
        let mut attempts = Attempts::new(
            call,
            Options::default(),
            Reconnects::Maybe,
            tracing::Span::none(),
        );
        let mut next = attempts.start();
        let mut sent = Vec::new();
        for reply in replies {
            // A wait takes no reply: the send after it does.
            while let Next::Wait(_) = next {
                next = attempts.send_again();
            }
            next = match next {
                Next::Send(command) => {
                    sent.push(texts(&command)[0].clone());
                    attempts.received(reply.map(|mut values| values.remove(0)))
                }
                Next::SendPipeline(pipeline) => {
                    let names: Vec<String> = pipeline
                        .cmd_iter()
                        .map(|command| texts(command)[..2].join(" "))
                        .collect();
                    sent.push(names.join(" | "));
                    attempts.received_pipeline(reply)
                }
                Next::Wait(_) => unreachable!("waits are passed above"),
                Next::Done(result) => return (sent, Some(result)),
            };
        }
        match next {
            Next::Done(result) => (sent, Some(result)),
            _ => (sent, None),
        }
    }

    fn not_found() -> redis::RedisResult<Vec<Value>> {
        Ok(vec![server_error("ERR Function not found")])
    }

    #[test]
    fn function_not_found_loads_the_library_and_calls_in_one_pipeline() {
        let (sent, result) = drive(
            &function_call(&ALLOW),
            vec![
                not_found(),
                Ok(vec![
                    Value::BulkString(b"quota_lib".to_vec()),
                    Value::Int(3),
                ]),
            ],
        );
        assert_eq!(sent, ["FCALL", "FUNCTION LOAD | FCALL allow"]);
        assert_eq!(result.map(|result| result.ok()), Some(Some(3)));

        // Someone else loaded it meanwhile: the call's reply counts.
        let (_, result) = drive(
            &function_call(&ALLOW),
            vec![
                not_found(),
                Ok(vec![
                    server_error("ERR Library 'quota_lib' already exists"),
                    Value::Int(4),
                ]),
            ],
        );
        assert_eq!(result.map(|result| result.ok()), Some(Some(4)));
    }

    #[test]
    fn a_load_that_did_not_help_says_why() {
        /// A `FUNCTION LOAD` error reply and a test of the error it leads to.
        type Case = (&'static str, fn(&Error) -> bool);
        let cases: [Case; 4] = [
            ("ERR Library 'quota_lib' already exists", |error| {
                matches!(
                    error,
                    Error::LibraryConflict {
                        library: "quota_lib",
                        node: None,
                        deployed_sha1: None,
                        ..
                    }
                )
            }),
            (
                "ERR Function peek already exists",
                |error| matches!(error, Error::FunctionNameTaken { function, .. } if function == "peek"),
            ),
            (
                "ERR Error compiling function: user_function:1: boom",
                |error| matches!(error, Error::LoadFailed { code, .. } if code == "ERR"),
            ),
            (
                "OOM command not allowed when used memory > 'maxmemory'.",
                |error| matches!(error, Error::Refused { code, .. } if code == "OOM"),
            ),
        ];
        for (load, expected) in cases {
            let (sent, result) = drive(
                &function_call(&ALLOW),
                vec![
                    not_found(),
                    Ok(vec![
                        server_error(load),
                        server_error("ERR Function not found"),
                    ]),
                ],
            );
            assert_eq!(sent.len(), 2, "{load}: never a third round trip");
            match result {
                Some(Err(error)) => {
                    assert!(expected(&error), "{load}: {error:?}");
                    assert!(!error.may_have_executed(), "{load}: {error:?}");
                    assert_eq!(error.script(), "allow");
                }
                other => panic!("{load}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_function_that_can_raise_the_reply_unmarked_is_not_loaded_on_the_way() {
        let (sent, result) = drive(&function_call(&COMPUTED), vec![not_found()]);
        assert_eq!(sent, ["FCALL"]);
        match result {
            Some(Err(error @ Error::NotLoaded { .. })) => {
                assert!(error.may_have_executed(), "the reply may be its own");
                assert_eq!(error.library(), Some("quota_lib"));
            }
            other => panic!("{other:?}"),
        }
        // Any other function cannot: its own error replies are marked.
        let (sent, _) = drive(&function_call(&PEEK), vec![not_found(), not_found()]);
        assert_eq!(sent, ["FCALL_RO", "FUNCTION LOAD | FCALL peek"]);
        let (sent, result) = drive(
            &function_call(&ALLOW),
            vec![Ok(vec![server_error("~ERR Function not found")])],
        );
        assert_eq!(
            sent,
            ["FCALL"],
            "a returned reply: never loaded and sent again"
        );
        match result {
            Some(Err(error @ Error::Script { .. })) => {
                assert!(error.may_have_executed());
                assert_eq!(error.code(), Some("ERR"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_dropped_cold_pipeline_is_resent_only_for_no_writes_functions() {
        let dropped = || -> redis::RedisResult<Vec<Value>> {
            Err(redis::RedisError::from(io::Error::from(
                io::ErrorKind::ConnectionReset,
            )))
        };
        let (sent, result) = drive(&function_call(&ALLOW), vec![not_found(), dropped()]);
        assert_eq!(sent.len(), 2);
        match result {
            Some(Err(error)) => assert!(error.may_have_executed(), "{error:?}"),
            other => panic!("{other:?}"),
        }
        let (sent, result) = drive(
            &function_call(&PEEK),
            vec![not_found(), dropped(), Ok(vec![Value::Int(7)])],
        );
        assert_eq!(sent, ["FCALL_RO", "FUNCTION LOAD | FCALL peek", "FCALL_RO"]);
        assert_eq!(result.map(|result| result.ok()), Some(Some(7)));
    }

    #[test]
    fn raised_function_errors_point_into_the_library_file() {
        let (_, result) = drive(
            &function_call(&ALLOW),
            vec![Ok(vec![server_error(
                "ERR user_function:6: kaboom script: allow, on @user_function:6.",
            )])],
        );
        match result {
            Some(Err(error)) => {
                assert_eq!(
                    error.location(),
                    Some(crate::ScriptLocation {
                        path: "lua/quota_lib.lua",
                        line: 6
                    })
                );
                assert!(error.may_have_executed());
            }
            other => panic!("{other:?}"),
        }
        // The library's own NOSCRIPT-looking reply is a reply, not a miss.
        let (sent, result) = drive(
            &function_call(&PEEK),
            vec![Ok(vec![server_error(
                "NOSCRIPT No matching script. Please use EVAL.",
            )])],
        );
        assert_eq!(sent, ["FCALL_RO"]);
        assert!(
            matches!(result, Some(Err(Error::Script { .. }))),
            "{result:?}"
        );
    }

    #[test]
    fn keys_written_in_pieces_keep_their_boundaries() {
        let mut list = Keys::new();
        {
            use std::io::Write as _;
            let mut writer = list.writer_for_next_arg();
            writer.write_all(b"{a}").ok();
            writer.write_all(b":1").ok();
        }
        list.write_arg(b"{a}:2");
        let collected: Vec<&[u8]> = list.iter().collect();
        assert_eq!(collected, vec![&b"{a}:1"[..], &b"{a}:2"[..]]);
    }

    static ONCE: Script = crate::script::with_exactly_once(
        crate::script::new_script(
            "count_once",
            "lua/count.lua",
            "return 1",
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
            false,
            false,
            false,
        ),
        crate::exactly_once::exactly_once(None, None, Some(2)),
    );

    fn timed_out() -> redis::RedisResult<Vec<Value>> {
        Err(redis::RedisError::from(io::Error::from(
            io::ErrorKind::TimedOut,
        )))
    }

    fn reset() -> redis::RedisResult<Vec<Value>> {
        Err(redis::RedisError::from(io::Error::from(
            io::ErrorKind::ConnectionReset,
        )))
    }

    #[test]
    fn an_exactly_once_call_sends_its_record_after_its_keys_and_its_ttl_first() {
        let mut call =
            start_call_with_id::<i64, Error>(&ONCE, keys(&["{q}:a"]), 1, CallId::new("id-1"));
        push_argument(&mut call, &"x");
        let sent = texts(call.command());
        let record = &sent[4];
        assert_eq!(
            sent[..4],
            ["EVALSHA", ONCE.sha1(), "2", "{q}:a"].map(str::to_owned)
        );
        assert!(
            record.starts_with("rs:once:{") && record.ends_with("}count_once:id-1"),
            "{record}"
        );
        assert_eq!(key_slot(record.as_bytes()), key_slot(b"{q}:a"));
        assert_eq!(sent[5..], ["600000", "x"].map(str::to_owned));
        assert_eq!(call.call_id().map(CallId::as_str), Some("id-1"));

        // A keyless call is routed by its record.
        let keyless = start_call_with_id::<i64, Error>(&ONCE, Keys::new(), 0, "{k}7".into());
        assert_eq!(keyless.slot().ok().flatten(), Some(key_slot(b"{k}")));
        assert_eq!(texts(keyless.command())[2], "1");
        // Each call of the generated `call` gets a new id.
        let first = start_call::<i64, Error>(&ONCE, Keys::new(), 0);
        let second = start_call::<i64, Error>(&ONCE, Keys::new(), 0);
        assert_ne!(first.call_id(), second.call_id());
        // Other scripts carry no id.
        assert_eq!(
            start_call::<i64, Error>(&SCRIPT, Keys::new(), 0).call_id(),
            None
        );
    }

    #[test]
    fn an_exactly_once_call_is_sent_again_after_timeouts_and_failures() {
        let call = start_call_with_id::<i64, Error>(&ONCE, keys(&["{q}:a"]), 0, "id".into());
        let (sent, result) = drive(&call, vec![timed_out(), reset(), Ok(vec![Value::Int(3)])]);
        assert_eq!(sent, ["EVALSHA", "EVALSHA", "EVALSHA"]);
        assert_eq!(result.map(|result| result.ok()), Some(Some(3)));

        // Two retries, then the error: it may have run (at most once).
        let (sent, result) = drive(&call, vec![timed_out(), timed_out(), timed_out()]);
        assert_eq!(sent.len(), 3);
        match result {
            Some(Err(error)) => assert!(error.is_timeout() && error.may_have_executed()),
            other => panic!("{other:?}"),
        }

        // A send that may have run, then a refusal: the call may have run.
        let moved = || Ok(vec![server_error("MOVED 7497 127.0.0.1:7001")]);
        let (sent, result) = drive(&call, vec![reset(), moved()]);
        assert_eq!(sent.len(), 2);
        match result {
            Some(Err(error)) => assert!(error.may_have_executed(), "{error:?}"),
            other => panic!("{other:?}"),
        }
        // A refusal alone says it did not run.
        let (_, result) = drive(&call, vec![moved()]);
        match result {
            Some(Err(error)) => assert!(!error.may_have_executed(), "{error:?}"),
            other => panic!("{other:?}"),
        }

        // A script without `exactly_once` that writes is never sent again.
        let plain = start_call::<i64, Error>(&SCRIPT, keys(&["{q}:a"]), 0);
        let (sent, result) = drive(&plain, vec![timed_out(), Ok(vec![Value::Int(3)])]);
        assert_eq!(sent.len(), 1);
        assert!(
            matches!(result, Some(Err(Error::Timeout { .. }))),
            "{result:?}"
        );

        // Nor is a blocking call: its connection would read the late reply.
        let mut attempts = Attempts::new(
            &call,
            Options::default(),
            Reconnects::Never,
            tracing::Span::none(),
        );
        let Next::Send(_) = attempts.start() else {
            panic!("sends first")
        };
        let next = attempts.received(Err(redis::RedisError::from(io::Error::from(
            io::ErrorKind::TimedOut,
        ))));
        assert!(matches!(next, Next::Done(Err(Error::Timeout { .. }))));
    }
}
