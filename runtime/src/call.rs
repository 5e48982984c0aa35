//! One prepared script invocation and its round trips.

use std::borrow::Cow;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, RedisWrite, Value};
use redis_script_codes::NOSCRIPT;

use crate::error::{Error, KeySlot, Origin, truncate_for_display};
use crate::refusal;
use crate::reply::render_reply;
use crate::retry::RetryRefusals;
use crate::script::Script;
use crate::slot::key_slot;

/// A script call with its keys and arguments encoded, ready to send.
///
/// Every `#[redis_script]` function `f` has a companion `f::call(...)` with
/// the same parameters (without the connection) that returns a `Call`; the
/// function itself is `f::call(...).invoke(conn)`. The command is built
/// once: `EVALSHA <sha> <numkeys> <keys…> <args…>` (or `EVALSHA_RO` for a
/// read-only script), with the SHA computed at compile time.
///
/// `E` is the error type of the call: [`Error`], or
/// [`Failure<E>`](crate::Failure) for a script declared with `errors = E`.
pub struct Call<T, E = Error> {
    script: &'static Script,
    command: Cmd,
    routing: Routing,
    retry_refusals: Option<RetryRefusals>,
    reply: PhantomData<fn() -> Result<T, E>>,
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
            .field("retry_refusals", &self.retry_refusals)
            .finish()
    }
}

/// Which path a call took, for tracing.
#[derive(Clone, Copy)]
enum Path {
    Warm,
    NoScriptEval,
}

impl Path {
    fn as_str(self) -> &'static str {
        match self {
            Self::Warm => "warm",
            Self::NoScriptEval => "noscript_eval",
        }
    }
}

/// How one round trip ended, before decoding.
enum Outcome {
    /// A reply that is not an error.
    Reply(Value),
    /// The server does not have the script cached: it did not run.
    NoScript,
    /// The server does not know `EVALSHA_RO`/`EVAL_RO`: it did not run.
    NoReadOnlyCommands,
    Failed(Error),
}

/// Whether the servers this process talks to know `EVALSHA_RO` and
/// `EVAL_RO` (Redis 7.0 and later, unless the operator renamed them).
/// Cleared for the whole process the first time a server answers "unknown
/// command" for them; from then on read-only scripts use `EVALSHA`/`EVAL`,
/// which every server has.
static READ_ONLY_COMMANDS: AtomicBool = AtomicBool::new(true);

/// Bytes reserved per ARGV parameter when sizing a command: enough for
/// numbers, tokens and short strings; longer values grow the buffer once.
const ARGUMENT_SIZE_GUESS: usize = 32;

/// Used by generated code: starts a call with its keys already encoded;
/// `arguments` is how many ARGV parameters will follow (sizing the command
/// once instead of growing it).
pub fn start_call<T, E>(script: &'static Script, keys: Keys, arguments: usize) -> Call<T, E> {
    let routing = keys.routing(script.allows_cross_slot_keys());
    // A script that can build a NOSCRIPT-looking reply is always sent
    // with its body: the server never answers EVAL with NOSCRIPT, so
    // such a reply cannot be mistaken for a cache miss.
    let (name, script_id) = if script.may_imitate_noscript() {
        (eval_name(script), script.source())
    } else {
        (evalsha_name(script), script.sha1())
    };
    let mut command = Cmd::with_capacity(
        3 + keys.ends.len() + arguments,
        script_id.len() + 16 + keys.data.len() + ARGUMENT_SIZE_GUESS * arguments,
    );
    command.arg(name).arg(script_id).arg(keys.ends.len());
    for key in keys.iter() {
        command.arg(key);
    }
    Call {
        script,
        command,
        routing,
        retry_refusals: None,
        reply: PhantomData,
    }
}

/// Used by generated code: appends one ARGV parameter.
pub fn push_argument<T, E, A: redis::ToRedisArgs>(call: &mut Call<T, E>, argument: &A) {
    argument.write_redis_args(&mut call.command);
}

impl<T, E> Call<T, E> {
    /// Sends the call again when the server refuses it with a refusal that
    /// passes (`LOADING`, `BUSY`, `TRYAGAIN`, …), as `policy` says. Without
    /// it, a refusal is returned at once as [`Error::Refused`].
    pub fn retry_refusals(mut self, policy: RetryRefusals) -> Self {
        self.retry_refusals = Some(policy);
        self
    }

    /// The script this call runs.
    pub fn script(&self) -> &'static Script {
        self.script
    }

    /// The command as it will be sent: `EVALSHA` (or `EVALSHA_RO`), or
    /// `EVAL` with the body for a script whose error replies are built at
    /// run time.
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
        match &self.routing {
            Routing::AnyNode => Ok(None),
            Routing::Slot(slot) => Ok(Some(*slot)),
            Routing::CrossSlot(keys) => Err(Error::CrossSlot {
                script: self.script.name(),
                keys: keys.clone(),
            }),
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
    /// for a read-only script where the server has it.
    pub fn eval_command(&self) -> Cmd {
        self.renamed(eval_name(self.script), Some(self.script.source()))
    }

    /// The first command without the `_RO` variants, for servers that lack
    /// them.
    fn without_read_only_commands(&self) -> Cmd {
        if self.script.may_imitate_noscript() {
            self.plain_eval()
        } else {
            self.plain_evalsha()
        }
    }

    /// The call as `EVALSHA <sha> …`, whatever the script's flags: batches
    /// go to a primary as a whole, where the `_RO` variants add nothing.
    pub(crate) fn plain_evalsha(&self) -> Cmd {
        self.renamed("EVALSHA", None)
    }

    /// The call as `EVAL <source> …` (see [`Self::plain_evalsha`]).
    pub(crate) fn plain_eval(&self) -> Cmd {
        self.renamed("EVAL", Some(self.script.source()))
    }

    /// The command under another name, with `body` in place of the SHA1.
    fn renamed(&self, name: &str, body: Option<&str>) -> Cmd {
        let body_length = body.map_or(self.script.sha1().len(), str::len);
        let mut command = Cmd::with_capacity(self.command.args_iter().len(), body_length + 64);
        command.arg(name);
        match body {
            Some(body) => command.arg(body),
            None => command.arg(self.script.sha1()),
        };
        for argument in self.command.args_iter().skip(2) {
            if let redis::Arg::Simple(bytes) = argument {
                command.arg(bytes);
            }
        }
        command
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

impl<T: FromRedisValue, E: From<Error>> Call<T, E> {
    /// Runs the script: one `EVALSHA` when the server has it cached; on
    /// `NOSCRIPT`, one `EVAL` with the body and the same keys (so a cluster
    /// routes it to the same node), which also caches it. Never more than
    /// two round trips, never `SCRIPT LOAD`.
    ///
    /// A read-only script is sent again once after its connection dropped
    /// (not after a timeout: it may still be running). A script that
    /// writes is never sent again after its request may have reached the
    /// server; its error says whether it may have run
    /// ([`Error::may_have_executed`]). Refusals are retried only as
    /// [`Call::retry_refusals`] asks.
    pub async fn invoke<C>(&self, connection: &mut C) -> Result<T, E>
    where
        C: ConnectionLike + ?Sized,
    {
        let mut attempts = Attempts::new(self, Reconnects::Maybe);
        let mut next = attempts.start();
        loop {
            next = match next {
                Next::Send(command) => {
                    let reply = connection.req_packed_command(&command).await;
                    attempts.received(reply)
                }
                Next::Wait(delay) => {
                    crate::retry::wait(delay).await;
                    attempts.send_again()
                }
                Next::Done(result) => return result.map_err(E::from),
            };
        }
    }

    /// [`Call::invoke`] on a synchronous connection (`redis::Connection`,
    /// an r2d2 pooled connection, the synchronous cluster connection),
    /// blocking the thread until the reply arrives.
    ///
    /// The same round trips and the same errors as [`Call::invoke`], with
    /// one difference: a read-only script is not sent again after its
    /// connection dropped, because a synchronous connection does not
    /// reconnect by itself (take a fresh one from the pool and call again).
    /// A refusal retry ([`Call::retry_refusals`]) sleeps the thread.
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
        let mut attempts = Attempts::new(self, Reconnects::Never);
        let mut next = attempts.start();
        loop {
            next = match next {
                Next::Send(command) => {
                    let reply = connection.req_command(&command);
                    attempts.received(reply)
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
    /// Wait, then call [`Attempts::send_again`].
    Wait(Duration),
    Done(Result<T, Error>),
}

/// The round trips of one call, apart from their I/O: which command to
/// send, what a reply means, whether to send again. The asynchronous and
/// the blocking call share it.
struct Attempts<'c, T, E> {
    call: &'c Call<T, E>,
    stage: Stage,
    /// A read-only call may still be sent again after a dropped connection.
    connection_retry: bool,
    refusal_retries: u32,
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
}

impl<'c, T: FromRedisValue, E> Attempts<'c, T, E> {
    fn new(call: &'c Call<T, E>, reconnects: Reconnects) -> Self {
        Self {
            call,
            stage: Stage::First,
            connection_retry: call.script.is_read_only() && reconnects == Reconnects::Maybe,
            refusal_retries: 0,
        }
    }

    fn start(&mut self) -> Next<'c, T> {
        if let Err(error) = self.call.check_slots() {
            return Next::Done(Err(error));
        }
        self.send_again()
    }

    fn send_again(&mut self) -> Next<'c, T> {
        self.stage = Stage::First;
        Next::Send(Cow::Borrowed(&self.call.command))
    }

    fn received(&mut self, reply: redis::RedisResult<Value>) -> Next<'c, T> {
        let call = self.call;
        let origin = Origin::script(call.script);
        let (stage, next) = match (self.stage, Outcome::of(reply, origin)) {
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
            (Stage::Eval, Outcome::NoReadOnlyCommands) => {
                forget_read_only_commands(call.script);
                (Stage::EvalWithoutReadOnly, call.plain_eval())
            }
            (_, Outcome::Reply(value)) => {
                return self.finish(decode_value(call.script.name(), &value));
            }
            (_, Outcome::Failed(error)) => return self.finish(Err(error)),
            // EVAL caches what it runs; EVALSHA/EVAL are known everywhere.
            (_, Outcome::NoScript | Outcome::NoReadOnlyCommands) => {
                return self.finish(Err(Error::Refused {
                    script: call.script.name(),
                    code: NOSCRIPT.to_owned(),
                    message: "the server did not run the script sent with EVAL".to_owned(),
                }));
            }
        };
        self.stage = stage;
        Next::Send(Cow::Owned(next))
    }

    /// The call's result, or another try when the error allows one.
    fn finish(&mut self, result: Result<T, Error>) -> Next<'c, T> {
        let path = match self.stage {
            Stage::First | Stage::FirstWithoutReadOnly => Path::Warm,
            Stage::Eval | Stage::EvalWithoutReadOnly => Path::NoScriptEval,
        };
        trace_outcome(self.call.script, path, &result);
        let error = match result {
            Ok(reply) => return Next::Done(Ok(reply)),
            Err(error) => error,
        };
        match &error {
            Error::Connection { source, .. }
                if self.connection_retry
                    && (source.is_connection_dropped() || source.is_connection_refusal()) =>
            {
                self.connection_retry = false;
                self.trace_retry("connection dropped");
                self.send_again()
            }
            Error::Refused { code, .. } if refusal::is_transient(code) => {
                match self.call.retry_refusals {
                    Some(policy) if self.refusal_retries < policy.retries() => {
                        let delay = policy.delay(self.refusal_retries);
                        self.refusal_retries += 1;
                        self.trace_retry("refused");
                        Next::Wait(delay)
                    }
                    _ => Next::Done(Err(error)),
                }
            }
            _ => Next::Done(Err(error)),
        }
    }

    fn trace_retry(&self, reason: &'static str) {
        tracing::debug!(
            script = self.call.script.name(),
            sha = self.call.script.sha1_prefix(),
            reason,
            "sending the script again"
        );
    }
}

/// The server answered "unknown command" for `EVALSHA_RO`/`EVAL_RO`: from
/// now on read-only scripts use `EVALSHA`/`EVAL` in this process.
fn forget_read_only_commands(script: &Script) {
    if READ_ONLY_COMMANDS.swap(false, Ordering::Relaxed) {
        tracing::info!(
            script = script.name(),
            "the server does not know EVALSHA_RO: read-only scripts use EVALSHA from now on"
        );
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

fn trace_outcome<T>(script: &Script, path: Path, result: &Result<T, Error>) {
    match result {
        Ok(_) => tracing::debug!(
            script = script.name(),
            sha = script.sha1_prefix(),
            path = path.as_str(),
            outcome = "ok",
            "script call"
        ),
        Err(error) => tracing::debug!(
            script = script.name(),
            sha = script.sha1_prefix(),
            path = path.as_str(),
            outcome = "error",
            may_have_executed = error.may_have_executed(),
            %error,
            "script call"
        ),
    }
}

impl Outcome {
    fn of(reply: redis::RedisResult<Value>, origin: Origin) -> Self {
        let error = match reply {
            Ok(Value::ServerError(error)) => Error::from_server(origin, &error),
            Ok(value) => return Self::Reply(value),
            Err(error) => Error::from_failure(origin, error),
        };
        match &error {
            // Only the server's own wording, and never a code the script can
            // return: the checker rejects `error_reply('NOSCRIPT …')`.
            Error::Refused { code, .. } if code == NOSCRIPT => Self::NoScript,
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

    static SCRIPT: Script = crate::script::new_script(
        "move_item",
        "lua/move.lua",
        "return 1",
        "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
        false,
        false,
        crate::script::returned_errors(&[], false, false),
    );

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
}
