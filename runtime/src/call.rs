//! One prepared script invocation and its round trips.

use std::io;
use std::marker::PhantomData;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, RedisError, RedisWrite, Value};

use crate::error::{Error, KeySlot, truncate_for_display};
use crate::reply::render_reply;
use crate::script::Script;
use crate::slot::key_slot;

/// A script call with its keys and arguments encoded, ready to send.
///
/// Every `#[redis_script]` function `f` has a companion `f::call(...)` with
/// the same parameters (without the connection) that returns a `Call`; the
/// function itself is `f::call(...).invoke(conn)`. The command is built
/// once: `EVALSHA <sha> <numkeys> <keys…> <args…>` (or `EVALSHA_RO` for a
/// read-only script), with the SHA computed at compile time.
pub struct Call<T> {
    script: &'static Script,
    command: Cmd,
    routing: Routing,
    reply: PhantomData<fn() -> T>,
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

impl<T> std::fmt::Debug for Call<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keys and arguments may carry secrets: show only their count.
        f.debug_struct("Call")
            .field("script", &self.script.name())
            .field("sha1", &self.script.sha1())
            .field(
                "arguments",
                &self.command.args_iter().len().saturating_sub(3),
            )
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
    /// A reply, possibly an error reply (decoding turns it into an error).
    Reply(Value),
    NoScript,
    Failed(RedisError),
}

/// The error code of a server that does not have the script cached.
const NOSCRIPT: &str = "NOSCRIPT";

/// Bytes reserved per ARGV parameter when sizing a command: enough for
/// numbers, tokens and short strings; longer values grow the buffer once.
const ARGUMENT_SIZE_GUESS: usize = 32;

impl<T> Call<T> {
    /// Used by generated code: starts a call with its keys already encoded;
    /// `arguments` is how many ARGV parameters will follow (sizing the
    /// command once instead of growing it).
    #[doc(hidden)]
    pub fn __start(script: &'static Script, keys: Keys, arguments: usize) -> Self {
        let routing = keys.routing(script.allows_cross_slot_keys());
        let mut command = Cmd::with_capacity(
            3 + keys.ends.len() + arguments,
            script.sha1().len() + 16 + keys.data.len() + ARGUMENT_SIZE_GUESS * arguments,
        );
        command
            .arg(if script.is_read_only() {
                "EVALSHA_RO"
            } else {
                "EVALSHA"
            })
            .arg(script.sha1())
            .arg(keys.ends.len());
        for key in keys.iter() {
            command.arg(key);
        }
        Self {
            script,
            command,
            routing,
            reply: PhantomData,
        }
    }

    /// Used by generated code: appends one ARGV parameter.
    #[doc(hidden)]
    pub fn __arg<A: redis::ToRedisArgs>(&mut self, argument: &A) {
        argument.write_redis_args(&mut self.command);
    }

    /// The script this call runs.
    pub fn script(&self) -> &'static Script {
        self.script
    }

    /// The `EVALSHA` command as it will be sent.
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

    /// Consumes the call, returning its `EVALSHA` command.
    pub(crate) fn into_command(self) -> Cmd {
        self.command
    }

    /// The same call as `EVAL <source> …`, for the cold path.
    pub fn eval_command(&self) -> Cmd {
        let mut eval = Cmd::with_capacity(
            self.command.args_iter().len(),
            self.script.source().len() + 64,
        );
        eval.arg(if self.script.is_read_only() {
            "EVAL_RO"
        } else {
            "EVAL"
        })
        .arg(self.script.source());
        for argument in self.command.args_iter().skip(2) {
            if let redis::Arg::Simple(bytes) = argument {
                eval.arg(bytes);
            }
        }
        eval
    }
}

impl<T: FromRedisValue> Call<T> {
    /// Runs the script: one `EVALSHA` when the server has it cached; on
    /// `NOSCRIPT`, one `EVAL` with the body and the same keys (so a cluster
    /// routes it to the same node), which also caches it. Never more than
    /// two round trips, never `SCRIPT LOAD`.
    ///
    /// A read-only script is sent again once after a connection error; a
    /// script that writes never is, and its error tells whether it may have
    /// run ([`Error::may_have_executed`]).
    pub async fn invoke<C>(&self, connection: &mut C) -> Result<T, Error>
    where
        C: ConnectionLike + ?Sized,
    {
        self.check_slots()?;
        let mut retries_left = usize::from(self.script.is_read_only());
        loop {
            let result = self.invoke_once(connection).await;
            match result {
                Err(Error::Connection { .. }) if retries_left > 0 => {
                    retries_left -= 1;
                    tracing::debug!(
                        script = self.script.name(),
                        sha = self.script.sha1_prefix(),
                        "retrying read-only script after a connection error"
                    );
                }
                other => return other,
            }
        }
    }

    async fn invoke_once<C>(&self, connection: &mut C) -> Result<T, Error>
    where
        C: ConnectionLike + ?Sized,
    {
        let (outcome, path) = match round_trip(connection, &self.command).await {
            Outcome::NoScript => {
                let eval = self.eval_command();
                (round_trip(connection, &eval).await, Path::NoScriptEval)
            }
            outcome => (outcome, Path::Warm),
        };
        let result = match outcome {
            Outcome::Reply(value) => decode_reply(self.script.name(), &value),
            Outcome::NoScript => Err(Error::Script {
                script: self.script.name(),
                code: NOSCRIPT.to_owned(),
                message: "the server did not cache the script sent with EVAL".to_owned(),
            }),
            Outcome::Failed(source) => Err(Error::failed_request(self.script.name(), source)),
        };
        trace_outcome(self.script, path, &result);
        result
    }
}

/// Decodes one reply of `script`; an error reply becomes [`Error::Script`].
pub(crate) fn decode_reply<T: FromRedisValue>(
    script: &'static str,
    value: &Value,
) -> Result<T, Error> {
    if let Value::ServerError(error) = value {
        return Err(Error::server_reply(script, error));
    }
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
            %error,
            "script call"
        ),
    }
}

async fn round_trip<C>(connection: &mut C, command: &Cmd) -> Outcome
where
    C: ConnectionLike + ?Sized,
{
    match connection.req_packed_command(command).await {
        Ok(Value::ServerError(error)) if error.code() == NOSCRIPT => Outcome::NoScript,
        Ok(value) => Outcome::Reply(value),
        Err(error) if error.code() == Some(NOSCRIPT) => Outcome::NoScript,
        Err(error) => Outcome::Failed(error),
    }
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

    static SCRIPT: Script = Script::__new(
        "move_item",
        "lua/move.lua",
        "return 1",
        "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
        false,
        false,
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
        let mut call = Call::<i64>::__start(&SCRIPT, keys(&["{q}:a", "{q}:b"]), 2);
        call.__arg(&"x");
        call.__arg(&7u32);
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
        let call = Call::<()>::__start(&SCRIPT, list, 0);
        assert_eq!(arguments(call.command())[2], b"3");
    }

    #[test]
    fn cross_slot_keys_are_refused_before_sending() {
        let call = Call::<()>::__start(&SCRIPT, keys(&["a", "b"]), 0);
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
