//! The attempts of one call: what is sent, what the answers mean, and what
//! is sent next (the cold path, refusal and failure retries), free of I/O.

use std::io;
use std::time::Duration;

use redis::{Cmd, FromRedisValue, Pipeline, Value};
use redis_script_codes::{FUNCTION_NOT_FOUND, NOPERM, NOSCRIPT, ServerCode, server_code};

use super::{
    Answer, Call, FAILURE_RETRY_FIRST_DELAY, FAILURE_RETRY_MAX_DELAY, Options,
    forget_read_only_commands, loading_refused, refuse_loading,
};
use crate::error::{Error, Origin};
use crate::library::{Library, load_error};
use crate::refusal;
use crate::replicas::{CallRead, ReadFrom};
use crate::reply::render_reply;
use crate::retry::backoff;
use crate::script::Script;
use crate::telemetry::{self, CallSummary, Path, Started};

/// Whether the connection a call is sent on may reconnect by itself after
/// it dropped, so that sending a read-only script again can help.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reconnects {
    Maybe,
    Never,
}

/// What the driver of one call does next.
pub(super) enum Next<T> {
    /// Send this command and hand its reply to [`Attempts::received`].
    Send(Cmd),
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
pub(super) struct Attempts<'c, T, E> {
    call: &'c Call<T, E>,
    options: Options,
    stage: Stage,
    /// A read-only call may still be sent again after a dropped connection.
    connection_retry: bool,
    /// Where the call reads: its own policy, else its script's; `None`
    /// leaves it to the connection.
    read_from: Option<ReadFrom>,
    refusal_retries: u32,
    /// How many times an exactly-once call may be sent again after a
    /// failed connection or a timeout (0 for any other call), and how many
    /// times it was.
    failure_retry_limit: u32,
    failure_retries: u32,
    /// The first error after which the call was sent again although that
    /// send may have run (boxed: rare, and every call carries the field).
    may_have_run: Option<Box<Error>>,
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
pub(super) enum Stage {
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
    pub(super) fn new(
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
            read_from: options.read_from.or(call.script.read_from()),
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

    pub(super) fn start(&mut self) -> Next<T> {
        if let Err(error) = self
            .call
            .check_arguments()
            .and_then(|()| self.call.check_slots())
            .and_then(|()| {
                self.read_from
                    .map_or(Ok(()), |read| read.check(self.call.script))
            })
        {
            return self.done(Err(error));
        }
        self.send_again()
    }

    pub(super) fn send_again(&mut self) -> Next<T> {
        self.stage = Stage::First;
        if self.read_from == Some(ReadFrom::Primary) {
            // Without `_RO`, every connection sends it to the primary.
            return self.send(self.call.without_read_only_commands());
        }
        self.send(self.call.first_command())
    }

    /// `EVAL` with the body, after `NOSCRIPT`: `EVAL_RO` for a read-only
    /// script, unless the call reads on the primary.
    fn cold_command(&self) -> (&'static str, Cmd) {
        if self.read_from == Some(ReadFrom::Primary) && !self.call.script.is_function() {
            return ("EVAL", self.call.plain_eval());
        }
        self.call.cold_command()
    }

    /// What a connection reading replicas learns of this call: `None`
    /// when it may write or must read the primary.
    pub(super) fn replica_read(&self) -> Option<CallRead> {
        if !self.call.script.is_read_only() {
            return None;
        }
        match self.read_from {
            None => Some(CallRead::AsConnectionSays),
            Some(ReadFrom::Primary) => None,
            Some(read_from) => Some(CallRead::From(read_from)),
        }
    }

    /// Sends `command`, named `name` in telemetry.
    pub(super) fn send(&mut self, (name, command): (&'static str, Cmd)) -> Next<T> {
        self.attempts += 1;
        self.command = name;
        Next::Send(command)
    }

    /// The call did not end before its deadline: it ends now, as a
    /// timeout (a send may be in flight, or may have run).
    pub(super) fn deadline_passed(&mut self) -> Error {
        let script = self.call.script.name();
        let deadline = self.options.deadline;
        let source = redis::RedisError::from(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the call's deadline of {deadline:?} passed"),
        ));
        let error = self.truthful(Error::Timeout {
            operation: script,
            source,
        });
        self.report(Some(&error));
        error
    }

    /// The call ends: telemetry reports it.
    pub(super) fn done(&mut self, result: Result<T, Error>) -> Next<T> {
        self.report(result.as_ref().err());
        Next::Done(result)
    }

    /// Telemetry of the call's end (`failure`: how it failed, if it did).
    pub(super) fn report(&mut self, failure: Option<&Error>) {
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

    pub(super) fn received(&mut self, reply: redis::RedisResult<Value>) -> Next<T> {
        match reply {
            Ok(value) if !matches!(value, Value::ServerError(_)) => self.replied(&value),
            refused_or_failed => self.refused_or_failed(refused_or_failed),
        }
    }

    /// The script's reply, which is not an error: the call ends with it
    /// decoded.
    fn replied(&mut self, value: &Value) -> Next<T> {
        let call = self.call;
        if telemetry::collected(&self.span) {
            self.reply_tag = telemetry::reply_tag(call.reply_shape, value);
        }
        self.finish(decode_value(call.script.name(), value))
    }

    /// An error reply or a failure: a cache miss or an unknown read-only
    /// command to send again for, or the call's error. Out of line, so that
    /// the code a warm call runs stays together and small.
    #[cold]
    #[inline(never)]
    fn refused_or_failed(&mut self, reply: redis::RedisResult<Value>) -> Next<T> {
        let call = self.call;
        let (stage, next) = match (self.stage, Answer::of(reply, call.script)) {
            (Stage::First, Answer::NoReadOnlyCommands) => {
                forget_read_only_commands(call.script);
                (
                    Stage::FirstWithoutReadOnly,
                    call.without_read_only_commands(),
                )
            }
            (Stage::First | Stage::FirstWithoutReadOnly, Answer::NoScript | Answer::NoFunction)
                if !self.may_load() =>
            {
                return self.finish(Err(not_deployed(call.script, None)));
            }
            (Stage::First | Stage::FirstWithoutReadOnly, Answer::NoScript) => {
                (Stage::Eval, self.cold_command())
            }
            // A user who may call scripts but not load them.
            (Stage::Eval | Stage::EvalWithoutReadOnly, Answer::Failed(error))
                if is_permission_refusal(&error) =>
            {
                refuse_loading(call.script);
                let refusal = format!(
                    "{} {}",
                    error.code().unwrap_or_default(),
                    error.message().unwrap_or_default()
                );
                return self.finish(Err(not_deployed(call.script, Some(refusal))));
            }
            (Stage::First | Stage::FirstWithoutReadOnly, Answer::NoFunction) => {
                if let Some(library) = call.script.library() {
                    self.stage = Stage::LoadAndCall;
                    self.attempts += 1;
                    self.command = "FCALL";
                    return Next::SendPipeline(call.load_and_call(library));
                }
                return self.finish(Err(self.unexpected_refusal()));
            }
            (Stage::Eval, Answer::NoReadOnlyCommands) => {
                forget_read_only_commands(call.script);
                (Stage::EvalWithoutReadOnly, ("EVAL", call.plain_eval()))
            }
            (_, Answer::Reply(value)) => return self.replied(&value),
            (_, Answer::Failed(error)) => return self.finish(Err(error)),
            // EVAL caches what it runs; EVALSHA/EVAL are known everywhere.
            (_, Answer::NoScript | Answer::NoFunction | Answer::NoReadOnlyCommands) => {
                return self.finish(Err(self.unexpected_refusal()));
            }
        };
        self.stage = stage;
        self.send(next)
    }

    /// The replies of `[FUNCTION LOAD, FCALL]`: the call's reply is the
    /// `FCALL`'s, whatever the load answered (`already exists` included:
    /// someone else loaded the library meanwhile). Only when the function
    /// is still not found does the load's reply say why.
    pub(super) fn received_pipeline(&mut self, replies: redis::RedisResult<Vec<Value>>) -> Next<T> {
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
                    operation: script.name(),
                    expected: "the replies of FUNCTION LOAD and FCALL",
                    reply: render_reply(&Value::Array(replies)),
                    reason: "the pipeline did not return two replies".to_owned(),
                }));
            }
        };
        trace_load(script, &load);
        if let Value::ServerError(refused) = &load
            && refused.code() == NOPERM
        {
            refuse_loading(script);
            let refusal = format!("NOPERM {}", refused.details().unwrap_or_default());
            return self.finish(Err(not_deployed(script, Some(refusal))));
        }
        match Answer::of(Ok(reply), script) {
            Answer::Reply(value) => self.replied(&value),
            Answer::Failed(error) => self.finish(Err(error)),
            Answer::NoFunction => self.finish(Err(not_found_after_load(script, &load))),
            Answer::NoScript | Answer::NoReadOnlyCommands => {
                self.finish(Err(self.unexpected_refusal()))
            }
        }
    }

    /// Whether a cache miss may load the script or library: the call was
    /// not asked otherwise, and no server refused the load before.
    fn may_load(&self) -> bool {
        self.options.loads && !loading_refused(self.call.script)
    }

    /// A cache miss or unknown command after the command that cannot
    /// cause one: `EVAL` caches what it runs, `FUNCTION LOAD` loads, and
    /// `EVALSHA`/`EVAL`/`FCALL` are known wherever scripts are.
    pub(super) fn unexpected_refusal(&self) -> Error {
        let script = self.call.script;
        let (code, message) = if script.is_function() {
            ("ERR", FUNCTION_NOT_FOUND)
        } else {
            (NOSCRIPT, "the server did not run the script sent with EVAL")
        };
        Error::Refused {
            operation: script.name(),
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }

    /// The call's result, or another try when the error allows one.
    pub(super) fn finish(&mut self, result: Result<T, Error>) -> Next<T> {
        match result {
            Ok(reply) => self.done(Ok(reply)),
            Err(error) => self.failed(error),
        }
    }

    /// The call's error, or another try when the error allows one. Out of
    /// line, as [`Self::refused_or_failed`].
    #[cold]
    #[inline(never)]
    fn failed(&mut self, error: Error) -> Next<T> {
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
            Error::Refused { code, .. } if server_code(code).is_some_and(ServerCode::passes) => {
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
            self.may_have_run = Some(Box::new(error));
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
    pub(super) fn truthful(&mut self, error: Error) -> Error {
        match self.may_have_run.take() {
            Some(earlier) if !error.may_have_executed() => *earlier,
            _ => error,
        }
    }
}

/// Why `FCALL` of `script` still answered `Function not found` after
/// `FUNCTION LOAD` of its library answered `load`, in the same request.
pub(crate) fn not_found_after_load(script: &'static Script, load: &Value) -> Error {
    match (load, script.library()) {
        (Value::ServerError(error), Some(library)) => {
            let (code, detail) = (error.code(), error.details().unwrap_or_default());
            load_error(script.name(), library, code, detail)
        }
        // Loaded, yet the function is not found: the loaded code does not
        // register it (or it was deleted in between). Nothing ran.
        _ => Error::Refused {
            operation: script.name(),
            code: "ERR".to_owned(),
            message: FUNCTION_NOT_FOUND.to_owned(),
        },
    }
}

/// Whether `error` is the server's refusal for lack of permission.
fn is_permission_refusal(error: &Error) -> bool {
    matches!(error, Error::Refused { code, .. } if code == NOPERM)
}

/// `script` is not loaded and the call does not load it; `refusal` is the
/// server's answer to the load (`NOPERM …`), when the call tried.
pub(crate) fn not_deployed(script: &'static Script, refusal: Option<String>) -> Error {
    Error::NotDeployed {
        operation: script.name(),
        sha1: script.sha1(),
        library: script.library().map(Library::name),
        refusal,
    }
}

/// What the cold path's `FUNCTION LOAD` did, for tracing.
pub(super) fn trace_load(script: &Script, load: &Value) {
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
pub(super) fn decode_value<T: FromRedisValue>(
    script: &'static str,
    value: &Value,
) -> Result<T, Error> {
    T::from_redis_value_ref(value).map_err(|error| Error::Decode {
        operation: script,
        expected: std::any::type_name::<T>(),
        reply: render_reply(value),
        reason: crate::decode::reason(&error),
    })
}

impl Answer {
    pub(super) fn of(reply: redis::RedisResult<Value>, script: &'static Script) -> Self {
        let origin = Origin::script(script);
        let error = match reply {
            Ok(Value::ServerError(error)) => Error::from_server(origin, &error),
            Ok(value) => return Self::Reply(value),
            Err(error) => Error::from_failure(origin, error),
        };
        // Every error the script ends with is marked (an `Error::Script`
        // then): a refusal is the server's own.
        match &error {
            Error::Refused { code, message, .. }
                if script.is_function() && refusal::is_function_not_found(code, message) =>
            {
                Self::NoFunction
            }
            // Functions are never cached scripts: for one, this is no miss.
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

/// `unknown command 'EVALSHA_RO', with args beginning with: …` (Redis 7.0
/// and later with the command renamed away), or with backquotes around
/// the name (Redis 6.x, which has none of the three).
pub(super) fn names_read_only_command(message: &str) -> bool {
    refusal::unknown_command("ERR", message)
        .is_some_and(|command| matches!(command.as_str(), "evalsha_ro" | "eval_ro" | "fcall_ro"))
}
