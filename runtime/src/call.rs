//! One prepared script invocation and its round trips.

mod attempts;
mod keys;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, Pipeline, Value};
use redis_script_codes::once;
use tracing::Instrument as _;

use crate::error::{Error, truncate_for_display};
use crate::exactly_once::{CallId, ExactlyOnce};
use crate::library::Library;
use crate::replicas::{self, ReadFrom};
use crate::retry::RetryRefusals;
use crate::script::Script;
use crate::shape::Shape;
use crate::slot::key_slot;
use crate::telemetry;
use attempts::{Attempts, Next, Reconnects};
pub(crate) use attempts::{decode_reply, not_deployed, not_found_after_load};
pub use keys::Keys;
use keys::{PrefixCheck, Routing};

/// A script call with its keys and arguments encoded, ready to send.
///
/// Every `#[redis_script]` function `f` has a companion `f::call(...)` with
/// the same parameters (without the connection) that returns a `Call`; the
/// function itself is `f::call(...).invoke(conn)`. The keys and arguments
/// are encoded once; each command of the call is rendered from them:
/// `EVALSHA <sha> <numkeys> <keys…> <args…>` (or `EVALSHA_RO` for a
/// read-only script), with the SHA computed at compile time, and on a cold
/// server `EVAL <body> …` with the same keys and arguments. A function of
/// a `#[redis_library]` is called the same way with
/// `FCALL <function> <numkeys> <keys…> <args…>` (or `FCALL_RO` for a
/// function with the `no-writes` flag).
///
/// `E` is the error type of the call: [`Error`], or
/// [`Failure<E>`](crate::Failure) for a script declared with `errors = E`.
pub struct Call<T, E = Error> {
    script: &'static Script,
    /// The script's own keys, then its ARGV parameters.
    encoded: Keys,
    /// How many of `encoded` are keys.
    key_count: usize,
    /// An exactly-once call's record: one more key, and its TTL as the
    /// first argument.
    record: Option<Record>,
    routing: Routing,
    /// What the key prefixes the script builds keys from say about the
    /// call's slot.
    prefixes: PrefixCheck,
    /// The first argument that could not be encoded: the call fails with
    /// it before sending.
    argument_problem: Option<Box<(String, crate::ArgumentProblem)>>,
    /// The call's id, for a script declared `exactly_once`.
    call_id: Option<CallId>,
    /// The reply type's shape, when it describes itself, for the reply tag
    /// in telemetry.
    reply_shape: Option<fn() -> Shape>,
    reply: PhantomData<fn() -> Result<T, E>>,
}

impl<T, E> std::fmt::Debug for Call<T, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and arguments may carry secrets: show only their count.
        f.debug_struct("Call")
            .field("script", &self.script.name())
            .field("sha1", &self.script.sha1())
            .field("keys", &self.key_count)
            .field("arguments", &(self.encoded.count() - self.key_count))
            .field("exactly_once", &self.call_id.is_some())
            .finish()
    }
}

/// How one round trip ended, before decoding.
enum Answer {
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

/// Scripts (by name and SHA1) the process learned something about from a
/// server, kept per script, so that one script's lesson changes nothing
/// for the others: each pays its discovery once.
struct ScriptSet {
    scripts: Mutex<Vec<(&'static str, &'static str)>>,
    /// Whether it holds any script: while it does not, as on most servers,
    /// a call reads only this.
    any: AtomicBool,
}

impl ScriptSet {
    const fn new() -> Self {
        Self {
            scripts: Mutex::new(Vec::new()),
            any: AtomicBool::new(false),
        }
    }

    fn scripts(&self) -> MutexGuard<'_, Vec<(&'static str, &'static str)>> {
        self.scripts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn holds(&self, script: &Script) -> bool {
        self.any.load(Ordering::Relaxed) && contains(&self.scripts(), script)
    }

    /// Adds `script`; `false` when it was there already.
    fn insert(&self, script: &'static Script) -> bool {
        let mut scripts = self.scripts();
        if contains(&scripts, script) {
            return false;
        }
        scripts.push((script.name(), script.sha1()));
        self.any.store(true, Ordering::Relaxed);
        true
    }
}

/// Whether `scripts` (names and SHA1s) holds `script`.
fn contains(scripts: &[(&'static str, &'static str)], script: &Script) -> bool {
    scripts
        .iter()
        .any(|&(name, sha1)| name == script.name() && sha1 == script.sha1())
}

/// The read-only scripts (and functions) a server answered "unknown
/// command" for `EVALSHA_RO`, `EVAL_RO` or `FCALL_RO` (servers before 7.0,
/// or an operator who renamed them): from then on they use `EVALSHA`/`EVAL`
/// and `FCALL`, which every server with scripts (or functions) has.
static WITHOUT_READ_ONLY_COMMANDS: ScriptSet = ScriptSet::new();

/// The scripts (and functions) whose load a server refused (`NOPERM` to
/// `EVAL` or `FUNCTION LOAD`: a user allowed to call, not to load): from
/// then on a cache miss ends as [`Error::NotDeployed`] without trying the
/// load again.
static LOADING_REFUSED: ScriptSet = ScriptSet::new();

/// Whether `script` is sent with the `_RO` commands.
fn uses_read_only_commands(script: &Script) -> bool {
    script.is_read_only() && !WITHOUT_READ_ONLY_COMMANDS.holds(script)
}

/// The server answered "unknown command" for `script`'s `_RO` command:
/// from now on it is sent with `EVALSHA`/`EVAL` or `FCALL`.
pub(crate) fn forget_read_only_commands(script: &'static Script) {
    if WITHOUT_READ_ONLY_COMMANDS.insert(script) {
        tracing::info!(
            script = script.name(),
            "the server does not know the _RO commands: this read-only script uses EVALSHA and FCALL from now on"
        );
    }
}

/// Whether a server refused to load `script` before.
pub(crate) fn loading_refused(script: &Script) -> bool {
    // (Also read by a batch, which then sends `EVALSHA` and no load.)
    LOADING_REFUSED.holds(script)
}

/// A server refused to load `script` (`NOPERM`): its cache misses no
/// longer try.
pub(crate) fn refuse_loading(script: &'static Script) {
    if LOADING_REFUSED.insert(script) {
        tracing::warn!(
            script = script.name(),
            sha1 = script.sha1(),
            "the server refused to load this script (NOPERM): it must be loaded by a user allowed to; its calls no longer try"
        );
    }
}

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

/// Used by generated code: starts a call with its keys already encoded,
/// in a list from [`Keys::for_call`] sized for the ARGV parameters that
/// follow. A call of an `exactly_once` script gets a new [`CallId`].
pub fn start_call<T, E>(script: &'static Script, keys: Keys) -> Call<T, E> {
    let call_id = script.exactly_once().map(|_| CallId::generate());
    start(script, keys, call_id)
}

/// Used by generated code: [`start_call`] of an `exactly_once` script with
/// the caller's id (ignored for any other script).
pub fn start_call_with_id<T, E>(
    script: &'static Script,
    keys: Keys,
    call_id: CallId,
) -> Call<T, E> {
    start(script, keys, Some(call_id))
}

fn start<T, E>(script: &'static Script, keys: Keys, call_id: Option<CallId>) -> Call<T, E> {
    // One key cannot span slots: its slot is computed only when asked.
    let mut routing = if keys.count() == 1 && !script.builds_keys_from_keys() {
        Routing::OneKey
    } else {
        keys.routing(script.allows_cross_slot_keys())
    };
    let mut prefixes = PrefixCheck::default();
    // Most scripts build no key from their KEYS: no walk over the keys.
    if let Routing::Slot(slot) = routing
        && script.builds_keys_from_keys()
    {
        for (index, key) in keys.iter().enumerate() {
            if script.builds_keys_from(index + 1) {
                prefixes.check(key, || format!("KEYS[{}]", index + 1), Some(slot));
            }
        }
    }
    // An exactly-once call sends its record as one more key, in the slot of
    // the call's keys; a keyless call is routed by its record.
    // The layout the wrapper reads: the record after the script's keys,
    // its TTL before the script's arguments (see `render`).
    const _: () = assert!(
        matches!(once::RECORD_KEY, once::Position::Last)
            && matches!(once::TTL_MS, once::Position::First)
    );
    let (call_id, record) = match (script.exactly_once(), call_id) {
        (Some(once), Some(call_id)) => {
            let record = record_of(script, once, &call_id, &keys, &mut routing);
            (Some(call_id), Some(record))
        }
        _ => (None, None),
    };
    Call {
        script,
        key_count: keys.count(),
        encoded: keys,
        record,
        routing,
        prefixes,
        argument_problem: None,
        call_id,
        reply_shape: None,
        reply: PhantomData,
    }
}

/// An exactly-once call's record, in the slot of the call's keys; a
/// keyless call, or one with a single key, is then routed to that slot.
/// Out of line: most scripts are not exactly-once, and their calls need
/// not carry this code.
#[cold]
#[inline(never)]
fn record_of(
    script: &Script,
    once: &ExactlyOnce,
    call_id: &CallId,
    keys: &Keys,
    routing: &mut Routing,
) -> Record {
    let slot = match &*routing {
        Routing::Slot(slot) => *slot,
        Routing::OneKey => keys.get(0).map_or(0, key_slot),
        Routing::AnyNode => key_slot(call_id.as_str().as_bytes()),
        Routing::CrossSlot(keys) => keys.first().map_or(0, |key| key.slot),
    };
    if matches!(routing, Routing::AnyNode | Routing::OneKey) {
        *routing = Routing::Slot(slot);
    }
    Record {
        key: once.record_key(script.name(), call_id.as_str().as_bytes(), slot),
        ttl_ms: call_id.ttl_ms(once),
    }
}

/// Used by generated code: the shape of the call's reply type, so that
/// telemetry can name a tagged reply's tag.
pub fn set_reply_shape<T, E>(call: &mut Call<T, E>, shape: fn() -> Shape) {
    call.reply_shape = Some(shape);
}

/// Used by generated code: appends one ARGV parameter. A [`Json`] value
/// serde_json cannot write leaves the call failing with
/// [`Error::Argument`] before anything is sent.
///
/// [`Json`]: crate::Json
pub fn push_argument<T, E, A: redis::ToRedisArgs>(call: &mut Call<T, E>, argument: &A) {
    #[cfg(feature = "json")]
    crate::json::watch_arguments();
    #[cfg(feature = "json")]
    let first = call.encoded.count();
    argument.write_redis_args(&mut call.encoded);
    #[cfg(feature = "json")]
    if let Some((index, problem)) = crate::json::argument_failure() {
        call.argument_failed(first, index, problem);
    }
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
    let first_part = call.encoded.count();
    argument.write_redis_args(&mut call.encoded);
    let slot = match (&call.routing, call.key_count) {
        (_, 0) => None,
        (Routing::Slot(_) | Routing::OneKey, _) => call.keys_slot(),
        // Cross-slot keys are refused anyway.
        _ => return,
    };
    if let Some(prefix) = call.encoded.get(first_part) {
        call.prefixes
            .check(prefix, || format!("ARGV[{position}]"), slot);
    }
}

/// How a call is invoked: what [`Call::retry_refusals`] and
/// [`Call::deadline`] set.
#[derive(Debug, Clone, Copy)]
struct Options {
    retry_refusals: Option<RetryRefusals>,
    /// How long the call may take, retries included.
    deadline: Duration,
    /// A cache miss may load the script (`EVAL`) or the library
    /// (`FUNCTION LOAD`).
    loads: bool,
    /// Where the call reads, when it says.
    read_from: Option<ReadFrom>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            retry_refusals: None,
            deadline: DEFAULT_DEADLINE,
            loads: true,
            read_from: None,
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
            .field("loads", &self.options.loads)
            .field("read_from", &self.options.read_from)
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

    /// Sends only `EVALSHA` (`FCALL` for a function) and never loads: when
    /// the server does not have the script (or the function's library),
    /// the call ends with [`Error::NotDeployed`], which names it and its
    /// SHA1, instead of sending `EVAL` (or `FUNCTION LOAD`). For an
    /// application user whose ACL allows calling scripts but not loading
    /// them (`-eval -script -function`), after a deploy by another user
    /// ([`preload`](crate::preload), [`Library::deploy`]).
    ///
    /// A call without it learns the same from the server: when `EVAL` or
    /// `FUNCTION LOAD` is refused with `NOPERM`, the call ends with
    /// [`Error::NotDeployed`], and the script's later calls in this
    /// process no longer try to load it.
    ///
    /// ```no_run
    /// # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
    /// use redis_script::{Error, redis_script};
    ///
    /// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
    /// async fn release_lock(lock: &str, token: &str) -> i64;
    ///
    /// match release_lock::call("lock:{a}", "token-1")
    ///     .without_loading()
    ///     .invoke(connection)
    ///     .await
    /// {
    ///     Ok(released) => println!("released: {released}"),
    ///     Err(Error::NotDeployed { sha1, .. }) => eprintln!("deploy the script {sha1} first"),
    ///     Err(error) => return Err(error),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn without_loading(self) -> Invocation<T, E> {
        Invocation::of(self).without_loading()
    }

    /// Where the call reads: on the primary, or on a replica of a connection
    /// that has them ([`Replicas`](crate::Replicas)), overriding the
    /// script's `read_from` and the connection's own policy. A policy that
    /// reads replicas is only for a script that writes nothing (sent as
    /// `EVALSHA_RO`) or a `no-writes` function: for any other call the call
    /// ends with [`Error::NotReadOnly`] before anything is sent.
    /// [`ReadFrom::Primary`] sends the call without `_RO`, so that it reads
    /// the primary on any connection: read your own writes with it.
    ///
    /// ```no_run
    /// # async fn demo(replicas: &mut redis_script::Replicas) -> Result<(), redis_script::Error> {
    /// use redis_script::{ReadFrom, redis_script};
    ///
    /// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
    /// async fn versioned_get(document: &str) -> Option<(u64, String)>;
    ///
    /// // A report that may lag: never on the primary.
    /// let document = versioned_get::call("profile:{7}")
    ///     .read_from(ReadFrom::ReplicaOnly)
    ///     .invoke(replicas)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn read_from(self, read_from: ReadFrom) -> Invocation<T, E> {
        Invocation::of(self).read_from(read_from)
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
        self.prefixes.allow_untagged();
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

    /// The command as it will be sent first: `EVALSHA` (or `EVALSHA_RO`);
    /// `FCALL` (or `FCALL_RO`) for a function of a library.
    pub fn command(&self) -> Cmd {
        self.first_command().1
    }

    /// [`Self::command`] with its name, for telemetry.
    pub(crate) fn first_command(&self) -> (&'static str, Cmd) {
        let (name, second) = match self.script.function_name() {
            Some(function) => (fcall_name(self.script), function),
            None => (evalsha_name(self.script), self.script.sha1()),
        };
        (name, self.render(name, second))
    }

    /// Records that the argument written from element `first` of the
    /// encoded list failed (its `index`th `Json` value, for a variadic
    /// parameter): the first such problem is the call's error.
    #[cold]
    #[inline(never)]
    fn argument_failed(&mut self, first: usize, index: usize, problem: crate::ArgumentProblem) {
        if self.argument_problem.is_none() {
            let position = (first + index).saturating_sub(self.key_count) + 1;
            self.argument_problem = Some(Box::new((format!("ARGV[{position}]"), problem)));
        }
    }

    /// `Err(Error::Argument)` when an argument could not be encoded.
    pub(crate) fn check_arguments(&self) -> Result<(), Error> {
        match self.argument_problem.as_deref() {
            None => Ok(()),
            Some((parameter, problem)) => Err(Error::Argument {
                operation: self.script.name(),
                parameter: parameter.clone(),
                problem: problem.clone(),
            }),
        }
    }

    /// `Err(Error::CrossSlot)` when the keys hash to different cluster
    /// slots (and the script did not declare `allow-cross-slot-keys`).
    pub fn check_slots(&self) -> Result<(), Error> {
        if let Some(error) = self.prefixes.error(self.script.name(), || self.first_key()) {
            return Err(error);
        }
        match &self.routing {
            Routing::CrossSlot(keys) => Err(Error::CrossSlot {
                operation: self.script.name(),
                keys: keys.clone(),
            }),
            Routing::AnyNode | Routing::OneKey | Routing::Slot(_) => Ok(()),
        }
    }

    /// The cluster slot of the call's keys (`None` without keys), or
    /// `Err(Error::CrossSlot)` when they do not share one.
    pub fn slot(&self) -> Result<Option<u16>, Error> {
        self.check_slots()?;
        Ok(self.keys_slot())
    }

    /// The slot the keys share (hashing a single key now), if they share one.
    fn keys_slot(&self) -> Option<u16> {
        match &self.routing {
            Routing::Slot(slot) => Some(*slot),
            Routing::OneKey => self.first_key_bytes().map(key_slot),
            Routing::AnyNode | Routing::CrossSlot(_) => None,
        }
    }

    /// The first of the script's own keys, as sent.
    fn first_key_bytes(&self) -> Option<&[u8]> {
        self.encoded.get(0).filter(|_| self.key_count > 0)
    }

    /// The first key, for error messages.
    pub(crate) fn first_key(&self) -> Option<String> {
        self.first_key_bytes().map(truncate_for_display)
    }

    /// The same call as `EVAL <source> …`, for the cold path: `EVAL_RO`
    /// for a read-only script where the server has it. A function of a
    /// library has no `EVAL` form: for one, this is the call as `FCALL`.
    pub fn eval_command(&self) -> Cmd {
        self.cold_command().1
    }

    /// [`Self::eval_command`] with its name, for telemetry.
    pub(super) fn cold_command(&self) -> (&'static str, Cmd) {
        if self.script.is_function() {
            return ("FCALL", self.plain_fcall());
        }
        let name = eval_name(self.script);
        (name, self.render(name, self.script.source()))
    }

    /// The first command without the `_RO` variants, for servers that lack
    /// them.
    pub(super) fn without_read_only_commands(&self) -> (&'static str, Cmd) {
        if self.script.is_function() {
            ("FCALL", self.plain_fcall())
        } else {
            ("EVALSHA", self.plain_evalsha())
        }
    }

    /// The call as `EVALSHA <sha> …`, whatever the script's flags: batches
    /// go to a primary as a whole, where the `_RO` variants add nothing.
    pub(crate) fn plain_evalsha(&self) -> Cmd {
        self.render("EVALSHA", self.script.sha1())
    }

    /// The call as `EVAL <source> …` (see [`Self::plain_evalsha`]).
    pub(crate) fn plain_eval(&self) -> Cmd {
        self.render("EVAL", self.script.source())
    }

    /// A function's call as `FCALL <function> …`, whatever its flags: a
    /// batch or a load goes to a primary, where `FCALL_RO` adds nothing
    /// (and, on a replica, `FUNCTION LOAD` would be refused).
    pub(crate) fn plain_fcall(&self) -> Cmd {
        self.render("FCALL", self.script.function_name().unwrap_or_default())
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

    /// The command `name` (`EVALSHA`, `EVAL_RO`, `FCALL`, …) of the call:
    /// `second` (the SHA1, the body or the function name), then the keys
    /// and arguments.
    fn render(&self, name: &str, second: &str) -> Cmd {
        let (record_keys, record_size) = self
            .record
            .as_ref()
            .map_or((0, 0), |record| (1, record.key.len() + 20));
        let mut command = Cmd::with_capacity(
            3 + self.encoded.count() + 2 * record_keys,
            name.len() + second.len() + 8 + self.encoded.encoded_len() + record_size,
        );
        command
            .arg(name)
            .arg(second)
            .arg(self.key_count + record_keys);
        let mut encoded = self.encoded.iter();
        for key in encoded.by_ref().take(self.key_count) {
            command.arg(key);
        }
        if let Some(record) = &self.record {
            command.arg(&record.key).arg(record.ttl_ms);
        }
        for argument in encoded {
            command.arg(argument);
        }
        command
    }
}

/// An exactly-once call's record key, sent after the script's keys, and
/// its TTL in milliseconds, sent before the script's arguments.
#[derive(Debug)]
struct Record {
    key: Vec<u8>,
    ttl_ms: u64,
}

/// `EVAL_RO` for a read-only script on servers that have it.
fn eval_name(script: &Script) -> &'static str {
    if uses_read_only_commands(script) {
        "EVAL_RO"
    } else {
        "EVAL"
    }
}

/// `EVALSHA_RO` for a read-only script on servers that have it.
fn evalsha_name(script: &Script) -> &'static str {
    if uses_read_only_commands(script) {
        "EVALSHA_RO"
    } else {
        "EVALSHA"
    }
}

/// `FCALL_RO` for a `no-writes` function on servers that have it.
fn fcall_name(script: &Script) -> &'static str {
    if uses_read_only_commands(script) {
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
    /// function is called by a name that carries a hash of its library's
    /// code ([`Script::function_name`]), so a call never runs another
    /// version of the library: it finds no function, loads nothing over
    /// the other version, and fails with [`Error::LibraryConflict`].
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
    pub fn invoke<C>(&self, connection: &mut C) -> impl Future<Output = Result<T, E>>
    where
        C: ConnectionLike + ?Sized,
    {
        self.invoke_with(Options::default(), connection)
    }

    // `invoke` and `Invocation::invoke` return this future itself rather
    // than awaiting it in an `async fn` of their own, and the deadline
    // wraps the sends in place: each layer would hold another copy of the
    // call's state, moved on every call.
    async fn invoke_with<C>(&self, options: Options, connection: &mut C) -> Result<T, E>
    where
        C: ConnectionLike + ?Sized,
    {
        let span = telemetry::call_span(self.script, connection.get_db(), self.first_key_bytes());
        let mut attempts = Attempts::new(self, options, Reconnects::Maybe, span.clone());
        let ended = crate::timer::within(options.deadline, async {
            let mut next = attempts.start();
            loop {
                next = match next {
                    Next::Send(command) => {
                        let reply = match attempts.replica_read() {
                            None => connection.req_packed_command(&command).await,
                            Some(read) => {
                                replicas::reading(read, || connection.req_packed_command(&command))
                                    .await
                            }
                        };
                        attempts.received(reply)
                    }
                    Next::SendPipeline(pipeline) => {
                        let replies = connection
                            .req_packed_commands(&pipeline, 0, pipeline.len())
                            .await;
                        attempts.received_pipeline(replies)
                    }
                    Next::Wait(delay) => {
                        // Boxed: only a retry waits, and the timer would
                        // otherwise enlarge every call's state.
                        Box::pin(crate::timer::sleep(delay)).await;
                        attempts.send_again()
                    }
                    Next::Done(result) => return result,
                };
            }
        })
        .instrument(span)
        .await;
        let result = match ended {
            Ok(result) => result,
            Err(_) => Err(attempts.deadline_passed()),
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

    /// See [`Call::read_from`].
    pub fn read_from(mut self, read_from: ReadFrom) -> Self {
        self.options.read_from = Some(read_from);
        self
    }

    /// See [`Call::without_loading`].
    pub fn without_loading(mut self) -> Self {
        self.options.loads = false;
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
    pub fn invoke<C>(&self, connection: &mut C) -> impl Future<Output = Result<T, E>>
    where
        C: ConnectionLike + ?Sized,
    {
        self.call.invoke_with(self.options, connection)
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
