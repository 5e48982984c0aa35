//! The one error type of every generated script call.

use std::fmt;

use redis_script_codes::EXECABORT;
use redis_script_codes::marks::{self, ScriptEnding};

use crate::refusal;
use crate::script::Script;

/// Why a script call failed, and whether the script ran.
///
/// Every variant names its operation ([`Error::operation`]: the script or
/// function, or the batch, preload or deploy), so a log line is enough to
/// find the `.lua` file. The variants say what happened; [`Error::may_have_executed`]
/// says what a caller needs before retrying:
///
/// | variant | what happened | `may_have_executed()` |
/// | --- | --- | --- |
/// | [`Refused`](Error::Refused) | the server refused the command before running the script (`BUSY`, `LOADING`, `OOM`, `READONLY`, `NOPERM`, `MOVED`, …) | `false` |
/// | [`Script`](Error::Script) | the script ended with an error: raised (`error()`, a failing `redis.call`) or returned (`redis.error_reply`) | `true` |
/// | [`Connection`](Error::Connection) | the connection failed | `false` only when nothing was sent |
/// | [`Timeout`](Error::Timeout) | no reply within the connection's response timeout or the call's deadline ([`Call::deadline`](crate::Call::deadline)) | `true` |
/// | [`Decode`](Error::Decode) | the reply does not fit the Rust type | `true` |
/// | [`CrossSlot`](Error::CrossSlot) | the keys hash to different cluster slots; nothing was sent | `false` |
/// | [`BatchAcrossSlots`](Error::BatchAcrossSlots) | a pipeline whose calls are in several cluster slots was sent on a connection that sends a batch to one node; nothing was sent | `false` |
/// | [`KeyPrefix`](Error::KeyPrefix) | a prefix the script builds keys from has no hash tag, or names no routable slot; nothing was sent | `false` |
/// | [`Argument`](Error::Argument) | an argument could not be encoded (a [`Json`](crate::Json) value serde_json cannot write); nothing was sent | `false` |
/// | [`LibraryConflict`](Error::LibraryConflict) | another version of the function's library is loaded; it was left in place | `false` |
/// | [`FunctionNameTaken`](Error::FunctionNameTaken) | another library registers a function of the same name, so the library could not be loaded | `false` |
/// | [`LoadFailed`](Error::LoadFailed) | `FUNCTION LOAD` of the function's library failed | `false` |
/// | [`NotDeployed`](Error::NotDeployed) | the script (or the function's library) is not loaded, and the call may not load it: it was asked not to ([`Invocation::without_loading`](crate::Invocation::without_loading)), or the server refused the load (`NOPERM`) | `false` |
/// | [`Unsupported`](Error::Unsupported) | the server lacks what the call needs: Redis Functions or the `#!lua` line of script flags (both Redis 7.0), or a Lua engine at all (a Valkey 9.1 without its Lua module) | `false` |
/// | [`NotReadOnly`](Error::NotReadOnly) | a replica was asked to run a script that may write ([`ReadFrom`](crate::ReadFrom)); nothing was sent | `false` |
/// | [`ScriptCacheLost`](Error::ScriptCacheLost) | a pipeline's `EVALSHA` found the server's script cache without the script (flushed, restarted, failed over), and later commands of the pipeline had run, so it was not sent again | `false` |
/// | [`ForeignHandle`](Error::ForeignHandle) | a batch handle was read from another batch's replies | `true` |
///
/// A refusal is told apart from the script's own errors by construction:
/// the source sent runs the script under `xpcall` and marks every error it
/// ends with, `~` before an error reply it returns and `^` before an error
/// it raises, with the line that raised it ([`redis_script_codes::marks`];
/// [`Error::code`] is the code without the mark). A reply without a mark
/// and in the server's own words is a refusal; any other reply is the
/// script's, whatever its words.
///
/// For a script declared `exactly_once`, "may have run" means "ran at most
/// once": its call was already sent again with the same
/// [`CallId`](crate::CallId) after connection failures and timeouts, and
/// invoking the same [`Call`](crate::Call) again (or calling
/// `f::call_with_id` with its id) returns the first execution's reply if
/// it ran, or runs it if it did not.
///
/// Match on the code to handle the errors a script raises on purpose with
/// `redis.error_reply('CODE message')`:
///
/// ```
/// # fn handle(error: redis_script::Error) {
/// match error.code() {
///     Some("CONFLICT") => { /* re-read and retry */ }
///     _ if !error.may_have_executed() => { /* safe to send again */ }
///     _ => eprintln!("{error}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server refused the command before running the script: it did
    /// not run. Some refusals pass (`LOADING`, `BUSY`, `TRYAGAIN`, …);
    /// [`RetryRefusals`](crate::RetryRefusals) retries those.
    #[error("`{operation}` was refused by the server, it did not run: {code} {message}")]
    #[non_exhaustive]
    Refused {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// The server's error code (`BUSY`, `LOADING`, `OOM`, …).
        code: String,
        /// The rest of the server's message.
        message: String,
    },

    /// The script ran and ended with an error: one it returned
    /// (`redis.error_reply('CODE …')`, `{err = …}`) or raised (`error(…)`,
    /// a failing `redis.call`, a runtime error). Redis keeps the writes it
    /// made before.
    #[error("`{operation}` failed{}: {code} {message}", DisplayLocation(location))]
    #[non_exhaustive]
    Script {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// The leading word of the error (`ERR`, `CONFLICT`, ...).
        code: String,
        /// The rest of the error message, without its location.
        message: String,
        /// Where in the `.lua` file the error was raised: the line of Lua
        /// code that raised it, also when a C function it called (such as
        /// `table.sort`) raised it.
        location: Option<ScriptLocation>,
        /// The script raised the error (`true`) or returned it as its
        /// reply (`false`).
        raised: bool,
    },

    /// The connection failed before a reply was read.
    #[error(
        "`{operation}`: connection error ({}): {source}",
        if *may_have_executed { "the script may have run" } else { "nothing was sent, the script did not run" }
    )]
    #[non_exhaustive]
    Connection {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// `false` only when the request certainly never reached the
        /// server (the connection could not be opened).
        may_have_executed: bool,
        /// The underlying client error.
        #[source]
        source: redis::RedisError,
    },

    /// No reply came in time: within the connection's response timeout
    /// (redis-rs's multiplexed connection waits 500 ms by default), or
    /// before the call's deadline ([`Call::deadline`](crate::Call::deadline),
    /// 10 s by default). The request may have been sent: the script may
    /// have run, or may still be running.
    #[error("`{operation}`: no reply in time, the script may have run: {source}")]
    #[non_exhaustive]
    Timeout {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// The underlying client error.
        #[source]
        source: redis::RedisError,
    },

    /// The reply does not have the shape the Rust return type expects.
    #[error("`{operation}`: cannot decode the reply {reply} as {expected}: {reason}")]
    #[non_exhaustive]
    Decode {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// The Rust type the reply was decoded into.
        expected: &'static str,
        /// The raw reply, truncated for display.
        reply: String,
        /// What did not fit.
        reason: String,
    },

    /// The keys of one call hash to different Redis Cluster slots. Nothing
    /// was sent: on a cluster this call could never succeed.
    #[error(
        "`{operation}`: keys hash to different cluster slots: {}; give them a common {{hash tag}}",
        DisplayKeySlots(keys)
    )]
    #[non_exhaustive]
    CrossSlot {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// Every key of the call with its slot.
        keys: Vec<KeySlot>,
    },

    /// A pipeline whose calls are in several cluster slots went to a
    /// connection that sends a batch to one node (a cluster connection's
    /// own pipelining). Nothing was sent: on a cluster, send it with
    /// [`cluster::run_batch`](crate::cluster::run_batch), which sends each
    /// slot's calls to its node.
    #[error(
        "the batch's calls are in several cluster slots ({}): a cluster connection sends a batch to one node, so nothing was sent; send it with `redis_script::cluster::run_batch`, which sends each slot's calls to its node",
        DisplayKeySlots(keys)
    )]
    #[non_exhaustive]
    BatchAcrossSlots {
        /// A key of the batch's first slot and one of another.
        keys: Vec<KeySlot>,
    },

    /// A prefix the script builds keys from (`KEYS[1] .. id`, or an
    /// argument declared `#[key_prefix]`) cannot keep those keys in the
    /// call's slot. Nothing was sent.
    ///
    /// A key built by appending to a prefix hashes to the prefix's slot
    /// only when the prefix holds a complete `{hash tag}`: without one,
    /// the script would reach keys of other slots, which a cluster
    /// refuses. On a standalone server that is harmless: opt out per call
    /// with [`Call::allow_untagged_prefixes`](crate::Call::allow_untagged_prefixes).
    #[error("`{operation}`: key prefix {prefix:?} ({parameter}) {reason}")]
    #[non_exhaustive]
    KeyPrefix {
        /// The operation: the script's or function's name, or `batch`,
        /// `command`, `preload`, `deploy`.
        operation: &'static str,
        /// The prefix as sent, truncated for display.
        prefix: String,
        /// Which parameter carries it: `KEYS[1]`, `ARGV[2]`.
        parameter: String,
        /// What is wrong with it.
        reason: KeyPrefixProblem,
    },

    /// An argument of the call could not be encoded, so nothing was sent:
    /// serde_json could not write a [`Json`](crate::Json) argument (a map
    /// whose keys are not strings or numbers, a `Serialize` impl that
    /// failed). A batch holding the call refuses it when it is added.
    ///
    /// ```
    /// # fn handle(error: redis_script::Error) {
    /// if let redis_script::Error::Argument { parameter, problem, .. } = &error {
    ///     // `ARGV[2] not sent: serde_json cannot write this `Json<…>` as JSON: key must be a string`
    ///     eprintln!("{parameter} not sent: {problem}");
    /// }
    /// # }
    /// ```
    #[error("`{operation}`: {parameter} could not be encoded, nothing was sent: {problem}")]
    #[non_exhaustive]
    Argument {
        /// The script's or function's name.
        operation: &'static str,
        /// Which parameter: `ARGV[2]`.
        parameter: String,
        /// What went wrong.
        problem: ArgumentProblem,
    },

    /// A library of the same name but with other code (another version) is
    /// loaded on the server. It was left in place, and nothing ran.
    ///
    /// A call reports it when the server has no function of its name and
    /// its library could not be loaded for this reason (the loaded version
    /// does not register the function); a deploy with
    /// [`OnConflict::Refuse`](crate::OnConflict::Refuse) reports it with the
    /// deployed version's SHA1. Replace the other version on purpose with
    /// [`Library::deploy`](crate::Library::deploy) (or
    /// `cluster::deploy`) and [`OnConflict::Replace`](crate::OnConflict::Replace).
    #[error("{}", DisplayLibraryConflict(self))]
    #[non_exhaustive]
    LibraryConflict {
        /// Name of the function the call was for; for a deploy, the library's.
        operation: &'static str,
        /// Name of the library.
        library: &'static str,
        /// `host:port` of the node that holds the other version, when known
        /// (a cluster deploy names it; a call does not know it).
        node: Option<String>,
        /// Lowercase hex SHA1 of the other version's code, when it was read
        /// (`FUNCTION LIST WITHCODE` during a deploy).
        deployed_sha1: Option<String>,
        /// Lowercase hex SHA1 of this build's code of the library.
        compiled_sha1: &'static str,
    },

    /// The library could not be loaded because another library already
    /// registers a function of the same name (Redis has one namespace of
    /// functions for all libraries). Nothing was loaded and nothing ran.
    #[error(
        "`{operation}`: library `{library}` cannot be loaded: another library already registers a function named `{function}`, nothing ran; rename the function or delete the other library"
    )]
    #[non_exhaustive]
    FunctionNameTaken {
        /// Name of the function the call was for; for a deploy, the library's.
        operation: &'static str,
        /// Name of the library that could not be loaded.
        library: &'static str,
        /// The function name another library holds.
        function: String,
    },

    /// `FUNCTION LOAD` of the library failed for a reason other than a
    /// conflict: code the server cannot compile, a sandbox violation, a
    /// missing Lua engine. Nothing was loaded and nothing ran.
    #[error(
        "`{operation}`: FUNCTION LOAD of library `{library}` failed, nothing ran: {code} {message}"
    )]
    #[non_exhaustive]
    LoadFailed {
        /// Name of the function the call was for; for a deploy, the library's.
        operation: &'static str,
        /// Name of the library.
        library: &'static str,
        /// The server's error code (`ERR`).
        code: String,
        /// The rest of the server's message.
        message: String,
    },

    /// The script is not loaded on the server (`NOSCRIPT`), or the
    /// function's library is not, and the call did not load it: it was
    /// asked not to ([`Invocation::without_loading`](crate::Invocation::without_loading)),
    /// or the server refused the load, as it does for a user whose ACL
    /// denies `EVAL` or `FUNCTION` (`NOPERM`). Nothing ran. After such a
    /// refusal the script's later calls in this process no longer try to
    /// load it: a user allowed to must deploy it
    /// ([`preload`](crate::preload), [`Library::deploy`](crate::Library::deploy)).
    #[error(
        "`{operation}` is not loaded on the server (SHA1 {sha1}{}) and {}; it did not run: load it with a user allowed to (`redis_script::preload` of the script, `Library::deploy` of a library)",
        library.map(|library| format!(", library `{library}`")).unwrap_or_default(),
        refusal.as_deref().map_or_else(|| "this call does not load it".to_owned(), |refusal| format!("the server refused to load it: {refusal}"))
    )]
    #[non_exhaustive]
    NotDeployed {
        /// Name of the script or function.
        operation: &'static str,
        /// The SHA1 the call sent `EVALSHA` for; for a function, its
        /// library's.
        sha1: &'static str,
        /// The function's library, `None` for a script.
        library: Option<&'static str>,
        /// The server's refusal of the load (`NOPERM …`), `None` when the
        /// call did not try.
        refusal: Option<String>,
    },

    /// The server lacks what the call needs, a feature a later release
    /// added ([`ServerFeature`]): Redis Functions (`FUNCTION`, `FCALL`) for
    /// a function of a library, or the `#!lua` line of script flags for a
    /// script that starts with one; Redis 7.0 added both, so Redis 6.0 and
    /// 6.2 answer this way. Nothing ran, and the call was not sent again:
    /// the same server would refuse it again.
    ///
    /// ```
    /// # fn handle(error: redis_script::Error) {
    /// use redis_script::{Error, ServerFeature};
    ///
    /// if let Error::Unsupported { feature: ServerFeature::Functions, .. } = &error {
    ///     eprintln!("this server predates {}: {error}", error.operation());
    /// }
    /// # }
    /// ```
    #[error(
        "`{operation}` needs {feature}, which this server does not have ({}); it did not run: the server answered {refusal}",
        feature.since()
    )]
    #[non_exhaustive]
    Unsupported {
        /// The script's or function's name; for a deploy, the library's.
        operation: &'static str,
        /// What the server lacks.
        feature: ServerFeature,
        /// The server's answer, code first.
        refusal: String,
    },

    /// A call was asked to read from a replica
    /// ([`ReadFrom::PreferReplica`](crate::ReadFrom::PreferReplica) or
    /// [`ReadFrom::ReplicaOnly`](crate::ReadFrom::ReplicaOnly)), and its
    /// script may write: a replica refuses writes, and a write there would
    /// never reach the primary. Nothing was sent. Only a script the
    /// analysis proves read-only (sent as `EVALSHA_RO`) or a function
    /// declaring `no-writes` (`FCALL_RO`) may run on a replica.
    #[error(
        "`{operation}` may write, so it runs on the primary only: ReadFrom::{read_from:?} is for scripts that write nothing and `no-writes` functions; nothing was sent"
    )]
    #[non_exhaustive]
    NotReadOnly {
        /// The script's or function's name.
        operation: &'static str,
        /// The read policy the call was given.
        read_from: crate::ReadFrom,
    },

    /// A call of a [`Batch::pipeline`](crate::Batch::pipeline) went as
    /// `EVALSHA` and the server answered `NOSCRIPT`: its script cache lost
    /// the script (a `SCRIPT FLUSH`, a restart or a failover), during the
    /// pipeline or since the script was last seen there. Nothing of the
    /// call ran. Commands queued after the first such call had run
    /// (`ran_after` of them), so sending the call again would run it after
    /// them, out of the order queued: it was not sent again. Run it again
    /// if that order does not matter, or queue the calls whose order
    /// matters in a [`Batch::transaction`](crate::Batch::transaction),
    /// which no flush can cut (see the [runtime
    /// guide](crate::guide::runtime)).
    #[error(
        "`{operation}` did not run: the server's script cache lost it (SHA1 {sha1}) during the pipeline (SCRIPT FLUSH, restart or failover), and {ran_after} command(s) queued after it had already run, so it was not sent again out of order: run it again, or use `Batch::transaction()` for calls whose order matters"
    )]
    #[non_exhaustive]
    ScriptCacheLost {
        /// Name of the script.
        operation: &'static str,
        /// The SHA1 the call sent `EVALSHA` for.
        sha1: &'static str,
        /// How many commands queued after the first call that found no
        /// script had run.
        ran_after: usize,
    },

    /// A [`Handle`](crate::batch::Handle) was read from the replies of another
    /// batch: a handle belongs to the batch that made it, and reads only
    /// that batch's replies. The handle's call may have run with its own
    /// batch.
    #[error(
        "a handle of one batch was read from the replies of another (batch {handle_batch}, replies of batch {replies_batch}): read each reply from the replies of the batch that made its handle"
    )]
    #[non_exhaustive]
    ForeignHandle {
        /// The batch that made the handle.
        handle_batch: u64,
        /// The batch whose replies it was read from.
        replies_batch: u64,
    },
}

/// A line of a `.lua` file, where a script raised its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScriptLocation {
    /// The script's path, as written in the attribute.
    pub path: &'static str,
    /// The 1-based line in that file.
    pub line: u32,
}

impl fmt::Display for ScriptLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path, self.line)
    }
}

/// The message of [`Error::LibraryConflict`]: names the node when known and
/// both versions.
struct DisplayLibraryConflict<'a>(&'a Error);

impl fmt::Display for DisplayLibraryConflict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Error::LibraryConflict {
            operation,
            library,
            node,
            deployed_sha1,
            compiled_sha1,
        } = self.0
        else {
            return Ok(());
        };
        write!(f, "`{operation}`: ")?;
        match node {
            Some(node) => write!(f, "node {node}")?,
            None => f.write_str("the server")?,
        }
        write!(f, " holds another version of library `{library}` (")?;
        match deployed_sha1 {
            Some(deployed) => write!(f, "SHA1 {deployed}")?,
            None => f.write_str("code unknown")?,
        }
        write!(
            f,
            ", this build has SHA1 {compiled_sha1}); it was left in place and nothing ran: \
             replace it with a deploy using OnConflict::Replace"
        )
    }
}

struct DisplayLocation<'a>(&'a Option<ScriptLocation>);

impl fmt::Display for DisplayLocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(location) => write!(f, " at {location}"),
            None => Ok(()),
        }
    }
}

/// Who a failed request was for: a script, whose compile-time facts decide
/// how its error replies read, or a plain label (a batch, a preload).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    name: &'static str,
    script: Option<&'static Script>,
}

impl Origin {
    pub(crate) fn script(script: &'static Script) -> Self {
        Self {
            name: script.name(),
            script: Some(script),
        }
    }

    /// A request that runs no script of its own: none of its error replies
    /// can be forged.
    pub(crate) fn label(name: &'static str) -> Self {
        Self { name, script: None }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

impl Error {
    /// An error reply to a request for `origin`. redis-rs has split it into
    /// code and details as `split_error_reply` does (a test checks that),
    /// so the code is the one the analysis and the derive mean.
    pub(crate) fn from_server(origin: Origin, error: &redis::ServerError) -> Self {
        Self::from_reply_text(origin, error.code(), error.details().unwrap_or_default())
    }

    pub(crate) fn from_reply_text(origin: Origin, code: &str, detail: &str) -> Self {
        let operation = origin.name;
        // What the script ended with: the source sent marks every error
        // it returns or raises, so it reads as the script wrote it.
        if let Some(script) = origin.script
            && let Some(ending) = marks::read(code, detail)
        {
            return match ending {
                ScriptEnding::Returned { code, message } => Self::Script {
                    operation,
                    code: code.strip_prefix('-').unwrap_or(code).to_owned(),
                    message: message.to_owned(),
                    location: None,
                    raised: false,
                },
                ScriptEnding::Raised {
                    code,
                    message,
                    line,
                } => Self::Script {
                    operation,
                    code: code.to_owned(),
                    message: message.to_owned(),
                    location: line.map(|line| ScriptLocation {
                        path: script.path(),
                        line,
                    }),
                    raised: true,
                },
            };
        }
        if let Some(feature) = refusal::missing_feature(origin.script, code, detail) {
            return Self::Unsupported {
                operation,
                feature,
                refusal: format!("{code} {detail}"),
            };
        }
        if redis_script_codes::is_refusal(code, detail) {
            return Self::Refused {
                operation,
                code: code.to_owned(),
                message: detail.to_owned(),
            };
        }
        // Not in the server's words of a refusal: an error of the script
        // that escaped the mark (a script killed by `SCRIPT KILL` raises
        // again on each line it runs, the wrapper's included), or a plain
        // command's own error.
        Self::Script {
            operation,
            code: code.to_owned(),
            message: refusal::without_raise_suffix(detail).to_owned(),
            location: None,
            raised: origin.script.is_some(),
        }
    }

    /// A request for `origin` that failed: an error reply (one of the
    /// server's or the script's), a timeout, or a connection failure.
    pub(crate) fn from_failure(origin: Origin, source: redis::RedisError) -> Self {
        let operation = origin.name;
        if source.code() == Some(EXECABORT) && source.detail().is_none() {
            return Self::aborted_transaction(origin, source);
        }
        if let Some(code) = source.code() {
            return Self::from_reply_text(origin, code, source.detail().unwrap_or_default());
        }
        if source.is_timeout() {
            return Self::Timeout { operation, source };
        }
        Self::Connection {
            operation,
            may_have_executed: !source.is_connection_refusal(),
            source,
        }
    }

    /// A transaction the server discarded at `EXEC` (`EXECABORT`: nothing
    /// of it ran), which redis-rs reports with the refusals of its queued
    /// commands instead of the server's text: the first refusal that names
    /// a feature the server lacks (a library's `FUNCTION LOAD` or `FCALL`
    /// on Redis 6.x) is [`Error::Unsupported`], anything else a refusal
    /// naming the first queued command's.
    #[cold]
    fn aborted_transaction(origin: Origin, source: redis::RedisError) -> Self {
        let operation = origin.name;
        let queued = source
            .into_server_errors()
            .unwrap_or_else(|| Vec::new().into());
        let refusals = queued
            .iter()
            .map(|(_, error)| (error.code(), error.details().unwrap_or_default()));
        let mut first = None;
        for (code, detail) in refusals {
            if let Some(feature) = refusal::missing_feature(origin.script, code, detail) {
                return Self::Unsupported {
                    operation,
                    feature,
                    refusal: format!("{EXECABORT}, as the transaction queued {code} {detail}"),
                };
            }
            first.get_or_insert((code, detail));
        }
        let message = match first {
            Some((code, detail)) => {
                format!("Transaction discarded because of previous errors: {code} {detail}")
            }
            None => "Transaction discarded because of previous errors".to_owned(),
        };
        Self::Refused {
            operation,
            code: EXECABORT.to_owned(),
            message,
        }
    }

    /// What failed: the name of the script (or function of a library) for
    /// a call, the library's name for a deploy of one, and `batch`,
    /// `command`, `preload` or `deploy` for the rest: the name the
    /// metrics' `operation` label carries
    /// ([`telemetry`](crate::telemetry)).
    pub fn operation(&self) -> &'static str {
        match self {
            Self::Refused { operation, .. }
            | Self::Script { operation, .. }
            | Self::Connection { operation, .. }
            | Self::Timeout { operation, .. }
            | Self::Decode { operation, .. }
            | Self::CrossSlot { operation, .. }
            | Self::KeyPrefix { operation, .. }
            | Self::Argument { operation, .. }
            | Self::LibraryConflict { operation, .. }
            | Self::FunctionNameTaken { operation, .. }
            | Self::LoadFailed { operation, .. }
            | Self::NotDeployed { operation, .. }
            | Self::Unsupported { operation, .. }
            | Self::NotReadOnly { operation, .. }
            | Self::ScriptCacheLost { operation, .. } => operation,
            Self::ForeignHandle { .. } | Self::BatchAcrossSlots { .. } => "batch",
        }
    }

    /// The library of the errors about one: a conflict, a name taken, a
    /// failed load. `None` for other errors, those of functions
    /// included (see [`Script::library`](crate::Script::library)).
    pub fn library(&self) -> Option<&'static str> {
        match self {
            Self::LibraryConflict { library, .. }
            | Self::FunctionNameTaken { library, .. }
            | Self::LoadFailed { library, .. } => Some(library),
            Self::NotDeployed { library, .. } => *library,
            _ => None,
        }
    }

    /// Whether the script may have run on the server despite the error.
    ///
    /// `false` means it certainly did not run: a caller may send any
    /// script again, one that writes included. `true` means it may have
    /// run, in part or in full (Redis does not roll back a script's writes
    /// when it fails): send a script that writes again only if it is
    /// idempotent, or declared `exactly_once` and sent with the same call
    /// id (the same [`Call`](crate::Call)): then it runs at most once.
    pub fn may_have_executed(&self) -> bool {
        match self {
            Self::Refused { .. }
            | Self::CrossSlot { .. }
            | Self::BatchAcrossSlots { .. }
            | Self::KeyPrefix { .. }
            | Self::Argument { .. }
            | Self::LibraryConflict { .. }
            | Self::FunctionNameTaken { .. }
            | Self::LoadFailed { .. }
            | Self::NotDeployed { .. }
            | Self::Unsupported { .. }
            | Self::NotReadOnly { .. }
            | Self::ScriptCacheLost { .. } => false,
            Self::Connection {
                may_have_executed, ..
            } => *may_have_executed,
            Self::Script { .. }
            | Self::Timeout { .. }
            | Self::Decode { .. }
            | Self::ForeignHandle { .. } => true,
        }
    }

    /// The error code of a refusal or a script error (`CONFLICT` for
    /// `redis.error_reply('CONFLICT ...')`, `BUSY` for a busy server),
    /// `None` for other errors.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Refused { code, .. } | Self::Script { code, .. } => Some(code),
            _ => None,
        }
    }

    /// The message after the code of a refusal or a script error.
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::Refused { message, .. } | Self::Script { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Where the script raised its error: the line of the `.lua` file.
    pub fn location(&self) -> Option<ScriptLocation> {
        match self {
            Self::Script { location, .. } => *location,
            _ => None,
        }
    }

    /// The variant's name in snake case (`refused`, `script`,
    /// `connection`, `timeout`, `decode`, `cross_slot`, `key_prefix`, `argument`, `library_conflict`,
    /// `function_name_taken`, `load_failed`, `not_deployed`, `unsupported`, `not_read_only`, `script_cache_lost`,
    /// `foreign_handle`, `batch_across_slots`):
    /// the `error.type`
    /// of a call's span and the `kind` label of its error metric.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Refused { .. } => "refused",
            Self::Script { .. } => "script",
            Self::Connection { .. } => "connection",
            Self::Timeout { .. } => "timeout",
            Self::Decode { .. } => "decode",
            Self::CrossSlot { .. } => "cross_slot",
            Self::BatchAcrossSlots { .. } => "batch_across_slots",
            Self::KeyPrefix { .. } => "key_prefix",
            Self::Argument { .. } => "argument",
            Self::LibraryConflict { .. } => "library_conflict",
            Self::FunctionNameTaken { .. } => "function_name_taken",
            Self::LoadFailed { .. } => "load_failed",
            Self::NotDeployed { .. } => "not_deployed",
            Self::Unsupported { .. } => "unsupported",
            Self::NotReadOnly { .. } => "not_read_only",
            Self::ScriptCacheLost { .. } => "script_cache_lost",
            Self::ForeignHandle { .. } => "foreign_handle",
        }
    }

    /// True for [`Error::Refused`]: the server did not run the script.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Refused { .. })
    }

    /// True for [`Error::Timeout`].
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }
}

/// A key of a call and the cluster slot it hashes to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeySlot {
    /// The key, lossily decoded as UTF-8 and truncated for display.
    pub key: String,
    /// Its hash slot.
    pub slot: u16,
}

/// A feature of the servers that some releases lack: what
/// [`Error::Unsupported`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerFeature {
    /// Redis Functions: `FUNCTION LOAD`, `FCALL` and `FCALL_RO`, which a
    /// `#[redis_library]` function needs.
    Functions,
    /// Script flags: a script's first line `#!lua flags=…` (or a bare
    /// `#!lua`), which a server without them reads as Lua and cannot
    /// compile.
    ScriptFlags,
    /// A Lua engine at all: Valkey 9.1 runs Lua as a module an operator can
    /// unload (`MODULE UNLOAD lua`) or build without, and then answers
    /// every script and library with "no scripting engine".
    LuaEngine,
}

impl ServerFeature {
    /// The releases that added the feature; an operator may also have
    /// renamed its commands away on a later one.
    pub const fn since(self) -> &'static str {
        match self {
            Self::Functions => {
                "Redis Functions came with Redis 7.0 and Valkey 7.2, unless an operator renamed their commands away"
            }
            Self::ScriptFlags => {
                "script flags came with Redis 7.0 and Valkey 7.2: remove the `#!lua` line to run the script on Redis 6.x"
            }
            Self::LuaEngine => {
                "since Valkey 9.1 Lua is a module the server may run without: load it (`MODULE LOAD` of the Lua module, or `loadmodule` in the configuration)"
            }
        }
    }
}

impl fmt::Display for ServerFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Functions => "Redis Functions (`FUNCTION LOAD`, `FCALL`)",
            Self::ScriptFlags => "script flags (its first line is `#!lua …`)",
            Self::LuaEngine => "a Lua scripting engine",
        })
    }
}

/// Why a key prefix cannot keep the keys built from it in the call's slot:
/// the `reason` of [`Error::KeyPrefix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyPrefixProblem {
    /// It holds no complete `{hash tag}`, so a key built by appending to
    /// it hashes by its whole text, to any slot.
    NoHashTag,
    /// The call has no keys: a cluster routes a script by its KEYS, so
    /// nothing sends the call to the prefix's slot.
    NoKeys,
}

impl fmt::Display for KeyPrefixProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoHashTag => {
                "has no {hash tag}: the keys the script builds by appending to it hash to other cluster slots; put the part that names the slot in braces, e.g. \"queue:{emails}:\" (on a standalone server only, `allow_untagged_prefixes()` lets the call go)"
            }
            Self::NoKeys => {
                "names the slot of a call without keys: a cluster routes a script by its KEYS, so pass at least one key in the prefix's slot"
            }
        })
    }
}

/// Why an argument could not be encoded: the `problem` of
/// [`Error::Argument`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgumentProblem {
    /// serde_json could not write the value of a [`Json`](crate::Json)
    /// argument.
    #[non_exhaustive]
    Json {
        /// The argument's type, without module paths: `Json<Job>`.
        type_name: String,
        /// serde_json's message: `key must be a string`.
        message: String,
    },
}

impl ArgumentProblem {
    /// A [`Json`](crate::Json) argument of type `type_name` that
    /// serde_json could not write, with its message.
    pub(crate) fn json(type_name: String, message: String) -> Self {
        Self::Json { type_name, message }
    }
}

impl fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json { type_name, message } => write!(
                f,
                "serde_json cannot write this `{type_name}` as JSON: {message}"
            ),
        }
    }
}

struct DisplayKeySlots<'a>(&'a [KeySlot]);

impl fmt::Display for DisplayKeySlots<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, KeySlot { key, slot }) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{key:?} → slot {slot}")?;
        }
        Ok(())
    }
}

/// Longest key or reply text kept in an error, in characters.
pub(crate) const DISPLAY_LIMIT: usize = 64;

/// Lossy UTF-8 of `bytes`, cut at [`DISPLAY_LIMIT`] characters with `…`.
pub(crate) fn truncate_for_display(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(DISPLAY_LIMIT).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_slot_message_names_keys_and_slots() {
        let error = Error::CrossSlot {
            operation: "move_item",
            keys: vec![
                KeySlot {
                    key: "a".into(),
                    slot: 15495,
                },
                KeySlot {
                    key: "b".into(),
                    slot: 3300,
                },
            ],
        };
        assert_eq!(
            error.to_string(),
            "`move_item`: keys hash to different cluster slots: \"a\" → slot 15495, \"b\" → slot 3300; give them a common {hash tag}"
        );
        assert!(!error.may_have_executed());
    }

    /// A script at `lua/test.lua`.
    static SCRIPT: Script = crate::script::new_script(
        "test",
        "lua/test.lua",
        "return 1",
        "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
        false,
        false,
    );

    const BUSY: &str =
        "Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.";
    const NOSCRIPT: &str = "No matching script. Please use EVAL.";

    fn classify(code: &str, detail: &str) -> Error {
        Error::from_reply_text(Origin::script(&SCRIPT), code, detail)
    }

    #[test]
    fn the_servers_wording_without_a_mark_is_a_refusal() {
        let refused = classify("BUSY", BUSY);
        assert!(
            refused.is_refusal() && !refused.may_have_executed(),
            "{refused:?}"
        );
        assert_eq!(
            (refused.code(), refused.message()),
            (Some("BUSY"), Some(BUSY))
        );
        assert!(classify("NOSCRIPT", NOSCRIPT).is_refusal());
        for (code, detail) in [
            // Other wording: not a refusal of the server.
            ("BUSY", "come back later"),
            ("NOSCRIPT", "gone"),
            // A code the server never refuses with.
            ("CONFLICT", "expected 3"),
        ] {
            let error = classify(code, detail);
            assert!(
                matches!(
                    error,
                    Error::Script {
                        location: None,
                        raised: true,
                        ..
                    }
                ),
                "{error:?}"
            );
            assert!(error.may_have_executed());
        }
    }

    #[test]
    fn a_marked_reply_is_the_scripts_own_whatever_its_wording() {
        for (code, detail) in [
            ("~NOSCRIPT", NOSCRIPT),
            ("~BUSY", BUSY),
            ("~MOVED", "3999 127.0.0.1:6381"),
            ("~ERR", "Function not found"),
            ("~CONFLICT", "expected 3"),
        ] {
            let error = classify(code, detail);
            match &error {
                Error::Script {
                    code: read,
                    message,
                    location: None,
                    raised: false,
                    ..
                } => {
                    assert_eq!(read, &code[1..]);
                    assert_eq!(message, detail);
                }
                other => panic!("{code}: {other:?}"),
            }
            assert!(error.may_have_executed());
        }
        // `{err = '-X y'}` reaches the client as `--X y`: the code is `X`.
        assert_eq!(classify("~-X", "y").code(), Some("X"));
        // Only a script's reply carries the mark.
        assert!(Error::from_reply_text(Origin::label("batch"), "~X", "y").code() == Some("~X"));
    }

    #[test]
    fn raised_errors_ran_and_point_into_the_lua_file() {
        for (code, detail) in [
            (
                "^OOM",
                "command not allowed when used memory > 'maxmemory'. @7",
            ),
            ("^NOSCRIPT", "No matching script. Please use EVAL. @7"),
            ("^BUSY", "Valkey is busy running a script. @7"),
        ] {
            let error = classify(code, detail);
            assert_eq!(
                error.location(),
                Some(ScriptLocation {
                    path: "lua/test.lua",
                    line: 7
                })
            );
            assert!(matches!(error, Error::Script { raised: true, .. }));
            assert!(error.may_have_executed());
        }
        assert_eq!(
            classify(
                "^OOM",
                "command not allowed when used memory > 'maxmemory'. @7"
            )
            .to_string(),
            "`test` failed at lua/test.lua:7: OOM command not allowed when used memory > 'maxmemory'."
        );
        let unknown_line = classify("^ERR", "error in error handling @?");
        assert_eq!(unknown_line.location(), None);
        assert_eq!(unknown_line.message(), Some("error in error handling"));
    }

    #[test]
    fn an_error_past_the_mark_ran_and_keeps_no_line_of_the_wrapper() {
        // `SCRIPT KILL` makes the server raise again on each line run, the
        // wrapper's included: its suffix names a line of the wrapper.
        for (detail, message) in [
            (
                "Script killed by user with SCRIPT KILL... script: c64e417713643f86da27001a23b8e586f2b6f653, on @user_script:6.",
                "Script killed by user with SCRIPT KILL...",
            ),
            (
                "Script killed by user with SCRIPT KILL. script: on @user_script:6.",
                "Script killed by user with SCRIPT KILL.",
            ),
        ] {
            let error = classify("ERR", detail);
            assert!(error.may_have_executed(), "{error:?}");
            assert_eq!(error.location(), None);
            assert_eq!(error.message(), Some(message));
        }
    }

    #[test]
    fn plain_commands_cannot_forge_refusals() {
        let error = Error::from_reply_text(
            Origin::label("batch"),
            "EXECABORT",
            "Transaction discarded because of previous errors.",
        );
        assert!(error.is_refusal());
    }

    #[test]
    fn long_keys_are_truncated() {
        let long = "k".repeat(100);
        let shown = truncate_for_display(long.as_bytes());
        assert_eq!(shown.chars().count(), DISPLAY_LIMIT + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(truncate_for_display(b"short"), "short");
    }

    #[test]
    fn the_client_splits_error_replies_as_the_shared_definition_does() {
        for text in [
            "CONFLICT expected 3 found 4",
            "GONE",
            "ERR boom",
            "NOSCRIPT No matching script. Please use EVAL.",
            "MOVED 3999 127.0.0.1:6381",
            "A  two spaces",
            "lower case",
        ] {
            let reply = format!("-{text}\r\n");
            let error = match redis::parse_redis_value(reply.as_bytes()) {
                Ok(redis::Value::ServerError(error)) => error,
                other => panic!("{text:?} parsed as {other:?}"),
            };
            assert_eq!(
                (error.code(), error.details().unwrap_or_default()),
                redis_script_codes::split_error_reply(text),
                "{text:?}"
            );
        }
    }
}
