//! Reads on replicas: where a call that writes nothing may run, and a
//! connection to a primary and its replicas that sends it there.
//!
//! Only this crate can move script calls to replicas safely: the analysis
//! proves a script writes nothing, and such a script is sent as
//! `EVALSHA_RO` (a `no-writes` function as `FCALL_RO`). The calls of those
//! are the reads; every other command is a write and goes to the primary.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use redis::aio::ConnectionLike;
use redis::{Cmd, RedisError, RedisFuture, RedisResult, Value};

use crate::error::Error;
use crate::script::Script;

/// Where a call that writes nothing runs: on the primary, or on a replica.
///
/// Set per connection ([`Replicas::new`]; on a Redis Cluster, the client's
/// read routing strategy), per script (`#[redis_script(…, read_from =
/// "prefer_replica")]`) or per call ([`Call::read_from`](crate::Call::read_from)),
/// the narrower setting winning. A replica may lag behind its primary: a
/// read there can miss a write the same caller just made. Read your own
/// writes with [`ReadFrom::Primary`].
///
/// Only a script the analysis proves read-only (sent as `EVALSHA_RO`) or
/// a function declaring the `no-writes` flag (`FCALL_RO`) may be sent to a
/// replica: asking it of another call is a build error where the attribute
/// says it, and [`Error::NotReadOnly`] before anything is sent otherwise.
///
/// ```no_run
/// # async fn demo(replicas: &mut redis_script::Replicas) -> Result<(), redis_script::Error> {
/// use redis_script::{ReadFrom, redis_script};
///
/// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
/// async fn versioned_get(document: &str) -> Option<(u64, String)>;
///
/// // Right after this caller's own write: read it on the primary.
/// let document = versioned_get::call("profile:{7}")
///     .read_from(ReadFrom::Primary)
///     .invoke(replicas)
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadFrom {
    /// The primary, always. For a call, the command is sent without its
    /// `_RO` form, so that every connection sends it to the primary,
    /// redis-rs's cluster connection with a replica read strategy included.
    Primary,
    /// A replica; the primary when no replica is given, or when the
    /// replica is unreachable, still loading its data (`LOADING`), or has
    /// lost its link to the primary and serves no stale data
    /// (`MASTERDOWN`).
    PreferReplica,
    /// A replica, and never the primary: each replica is tried once, in
    /// turn, while they are unreachable, `LOADING` or `MASTERDOWN`; then
    /// the call fails with the last replica's answer (a refusal that
    /// [`RetryRefusals`](crate::RetryRefusals) may retry, or a connection
    /// error). Without replicas, it fails with [`Error::Connection`]:
    /// nothing was sent.
    ReplicaOnly,
}

impl ReadFrom {
    /// Whether a call with this policy may run on a replica.
    pub const fn reads_replicas(self) -> bool {
        !matches!(self, ReadFrom::Primary)
    }

    /// `Err(Error::NotReadOnly)` when `script` may write and this policy
    /// asks for a replica.
    pub(crate) fn check(self, script: &'static Script) -> Result<(), Error> {
        if self.reads_replicas() && !script.is_read_only() {
            return Err(Error::NotReadOnly {
                operation: script.name(),
                read_from: self,
            });
        }
        Ok(())
    }
}

/// What a call tells the connection about the command it hands over: a
/// read-only script's call, to route as the connection's own policy says
/// or as the call's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallRead {
    /// The call has no policy of its own.
    AsConnectionSays,
    /// The call's (or its script's) policy.
    From(ReadFrom),
}

thread_local! {
    /// The read-only call whose request is being made or polled.
    /// `ConnectionLike` carries nothing but the command, and a read-only
    /// script may be sent without `_RO` (on Redis 6.x, which lacks it), so
    /// this is how [`Replicas`] knows a read. It is set on the thread that
    /// makes the request and around each poll of it ([`Reading`]), so a
    /// connection wrapped in another that calls [`Replicas`] only once
    /// polled still sees it.
    static CALL_READ: Cell<Option<CallRead>> = const { Cell::new(None) };
}

/// Runs `f` with `read` visible to [`Replicas`].
fn with_call_read<R>(read: CallRead, f: impl FnOnce() -> R) -> R {
    /// Restores the outer value also when `f` unwinds.
    struct Restore(Option<CallRead>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CALL_READ.set(self.0);
        }
    }
    let _restore = Restore(CALL_READ.replace(Some(read)));
    f()
}

/// Makes the request `send` returns as the read-only call `read`: the
/// call is visible to [`Replicas`] while the request is made and each time
/// it is polled.
pub(crate) fn reading<F: Future>(read: CallRead, send: impl FnOnce() -> F) -> Reading<F> {
    Reading {
        read,
        request: with_call_read(read, send),
    }
}

pin_project_lite::pin_project! {
    /// A request of a read-only call (see [`reading`]).
    pub(crate) struct Reading<F> {
        read: CallRead,
        #[pin]
        request: F,
    }
}

impl<F: Future> Future for Reading<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        with_call_read(*this.read, || this.request.poll(cx))
    }
}

/// A primary and its replicas, as one connection: the calls of read-only
/// scripts and `no-writes` functions go to the replicas as its
/// [`ReadFrom`] says (or the call's own), taking them in turn; every other
/// command, pipelines included, goes to the primary. A call tells it that
/// it reads, also through a connection that wraps it, and also on Redis
/// 6.x, where a read-only script is sent without `_RO`; a command sent by
/// hand reads when it is `EVALSHA_RO`, `EVAL_RO` or `FCALL_RO`.
///
/// `C` is any async connection: redis-rs's `ConnectionManager` reconnects
/// by itself after a node restarts, a `MultiplexedConnection` does not.
/// Clones share the turn.
///
/// Each replica keeps its own script cache. A replica that lacks a script
/// answers `NOSCRIPT`, and the call sends `EVAL_RO`, which a replica runs
/// and caches, with the same promises as on a primary;
/// [`Replicas::preload`] loads scripts on every node at start-up. A
/// library is loaded on the primary ([`Library::deploy`](crate::Library::deploy)
/// sends `FUNCTION LOAD` there), and replication brings it to the
/// replicas; until then a replica answers that the function is not found,
/// and the call loads the library and runs once on the primary.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use redis_script::{ReadFrom, Replicas, redis_script};
///
/// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
/// async fn versioned_get(document: &str) -> Option<(u64, String)>;
///
/// let primary = redis::Client::open("redis://10.0.0.1/")?;
/// let replica = redis::Client::open("redis://10.0.0.2/")?;
/// let mut connection = Replicas::new(
///     primary.get_multiplexed_async_connection().await?,
///     vec![replica.get_multiplexed_async_connection().await?],
///     ReadFrom::PreferReplica,
/// );
/// // Read-only: sent as EVALSHA_RO, to the replica.
/// let document = versioned_get(&mut connection, "profile:{7}").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Replicas<C = redis::aio::MultiplexedConnection> {
    primary: C,
    replicas: Vec<C>,
    read_from: ReadFrom,
    /// The replica that takes the next call's read, shared by clones.
    turn: Arc<AtomicUsize>,
    /// The replica this handle read from last. A call's `EVAL_RO` after
    /// `NOSCRIPT` goes there, so that the replica which lacked the script
    /// caches it; a handle serves one call at a time (`&mut self`).
    last_replica: Option<usize>,
}

impl<C> Replicas<C> {
    /// A primary and its replicas; reads go where `read_from` says, unless
    /// a call or its script says otherwise.
    pub fn new(primary: C, replicas: Vec<C>, read_from: ReadFrom) -> Self {
        Self {
            primary,
            replicas,
            read_from,
            turn: Arc::new(AtomicUsize::new(0)),
            last_replica: None,
        }
    }

    /// Where reads go unless a call or its script says otherwise.
    pub fn read_from(&self) -> ReadFrom {
        self.read_from
    }

    /// The connection to the primary.
    pub fn primary(&mut self) -> &mut C {
        &mut self.primary
    }

    /// The connections to the replicas.
    pub fn replicas(&mut self) -> &mut [C] {
        &mut self.replicas
    }
}

impl<C: ConnectionLike + Send> Replicas<C> {
    /// Loads `scripts` on the primary and on every replica (each has its
    /// own script cache; `SCRIPT LOAD` is allowed on a replica), as
    /// [`preload`](crate::preload) does on one server: each node's report,
    /// the primary's first, then the replicas' in order. Every node is
    /// tried; the first error is returned.
    pub async fn preload(
        &mut self,
        scripts: &[&'static Script],
    ) -> Result<Vec<crate::Preloaded>, Error> {
        let mut reports = Vec::with_capacity(1 + self.replicas.len());
        let mut first_error = None;
        for node in std::iter::once(&mut self.primary).chain(self.replicas.iter_mut()) {
            match crate::preload(node, scripts).await {
                Ok(report) => reports.push(report),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        first_error.map_or(Ok(reports), Err)
    }
}

impl<C: ConnectionLike + Send> ConnectionLike for Replicas<C> {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let read_from = match CALL_READ.get() {
            Some(CallRead::From(read_from)) => read_from,
            Some(CallRead::AsConnectionSays) => self.read_from,
            // A command sent by hand: `EVALSHA_RO` is a read.
            None if is_read(cmd) => self.read_from,
            None => ReadFrom::Primary,
        };
        let replica_count = self.replicas.len();
        if read_from == ReadFrom::Primary
            || read_from == ReadFrom::PreferReplica && replica_count == 0
        {
            return self.primary.req_packed_command(cmd);
        }
        let first = match self.last_replica {
            Some(last) if is_cold_read(cmd) => last,
            _ => self.turn.fetch_add(1, Ordering::Relaxed),
        };
        let Self {
            primary,
            replicas,
            last_replica,
            ..
        } = self;
        Box::pin(async move {
            let tries = match read_from {
                ReadFrom::ReplicaOnly => replica_count,
                _ => 1,
            };
            let mut last = None;
            for offset in 0..tries {
                let index = first.wrapping_add(offset) % replica_count;
                let Some(replica) = replicas.get_mut(index) else {
                    break;
                };
                let reply = replica.req_packed_command(cmd).await;
                if !replica_unavailable(&reply) {
                    *last_replica = Some(index);
                    return reply;
                }
                last = Some(reply);
            }
            match (read_from, last) {
                (ReadFrom::PreferReplica, _) => primary.req_packed_command(cmd).await,
                (_, Some(reply)) => reply,
                (_, None) => Err(no_replica()),
            }
        })
    }

    /// Pipelines go to the primary: a batch sends its calls there as a
    /// whole, and a function's cold path loads its library with the call.
    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        self.primary.req_packed_commands(pipeline, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.primary.get_db()
    }
}

/// Whether `cmd` is a read a replica may serve: a read-only script's or a
/// `no-writes` function's call.
fn is_read(cmd: &Cmd) -> bool {
    let Some(redis::Arg::Simple(name)) = cmd.args_iter().next() else {
        return false;
    };
    [&b"EVALSHA_RO"[..], b"EVAL_RO", b"FCALL_RO"]
        .iter()
        .any(|read| name.eq_ignore_ascii_case(read))
}

/// Whether `cmd` is a read's cold path: `EVAL_RO` (or, where the server
/// lacks it, `EVAL`) with the body.
fn is_cold_read(cmd: &Cmd) -> bool {
    matches!(
        cmd.args_iter().next(),
        Some(redis::Arg::Simple(name))
            if name.eq_ignore_ascii_case(b"EVAL_RO") || name.eq_ignore_ascii_case(b"EVAL")
    )
}

/// Whether a replica's answer says it cannot serve reads now, so another
/// node may be asked: it is unreachable, still loading its data, or lost
/// its primary. A read that failed there is safe to send again: it wrote
/// nothing.
fn replica_unavailable(reply: &RedisResult<Value>) -> bool {
    let code = match reply {
        Ok(Value::ServerError(error)) => error.code(),
        Ok(_) => return false,
        Err(error) if error.code().is_some() => error.code().unwrap_or_default(),
        Err(error) => {
            return unreachable(error);
        }
    };
    serves_no_reads(code)
}

/// Whether `error` says the node did not answer: the connection failed,
/// dropped or timed out.
pub(crate) fn unreachable(error: &RedisError) -> bool {
    error.is_io_error() || error.is_connection_dropped() || error.is_timeout()
}

/// Whether a replica's refusal `code` says it serves no reads now: it is
/// loading its data (`LOADING`), or lost its primary and serves no stale
/// data (`MASTERDOWN`). Nothing ran.
pub(crate) fn serves_no_reads(code: &str) -> bool {
    matches!(code, "LOADING" | "MASTERDOWN")
}

/// A call that may run only on a replica, on a connection without one.
/// A connection refusal: nothing was sent.
fn no_replica() -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::ConnectionRefused,
        "no replica to read from (ReadFrom::ReplicaOnly), and the call may not run on the primary",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_read_only_script_commands_are_reads() {
        for (name, read) in [
            ("EVALSHA_RO", true),
            ("evalsha_ro", true),
            ("EVAL_RO", true),
            ("FCALL_RO", true),
            ("EVALSHA", false),
            ("FCALL", false),
            ("GET", false),
            ("SCRIPT", false),
        ] {
            let mut command = redis::cmd(name);
            command.arg("x");
            assert_eq!(is_read(&command), read, "{name}");
        }
    }

    #[test]
    fn loading_masterdown_and_lost_connections_pass_to_another_node() {
        let refusal = |text: &str| Ok(crate::test_support::server_error(text));
        assert!(replica_unavailable(&refusal(
            "LOADING Redis is loading the dataset in memory"
        )));
        assert!(replica_unavailable(&refusal(
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
        )));
        assert!(!replica_unavailable(&refusal(
            "NOSCRIPT No matching script. Please use EVAL."
        )));
        assert!(!replica_unavailable(&Ok(Value::Int(1))));
        let dropped = RedisError::from(io::Error::new(io::ErrorKind::BrokenPipe, "gone"));
        assert!(replica_unavailable(&Err(dropped)));
        assert!(no_replica().is_connection_refusal());
    }

    #[test]
    fn a_call_is_visible_while_its_request_is_made_and_polled() {
        assert_eq!(CALL_READ.get(), None);
        let read = CallRead::From(ReadFrom::ReplicaOnly);
        let mut made = None;
        // A request that reads the call only when polled, as a connection
        // wrapped in an `async move` block does.
        let request = reading(read, || {
            made = CALL_READ.get();
            std::future::poll_fn(|_| Poll::Ready(CALL_READ.get()))
        });
        assert_eq!(made, Some(read));
        assert_eq!(CALL_READ.get(), None);
        let mut request = std::pin::pin!(request);
        let waker = std::task::Waker::noop();
        let polled = request.as_mut().poll(&mut Context::from_waker(waker));
        assert_eq!(polled, Poll::Ready(Some(read)));
        assert_eq!(CALL_READ.get(), None);
    }
}
