//! Scripts (and plain commands) sent together: a pipeline, or a
//! `MULTI`/`EXEC` transaction.

use std::marker::PhantomData;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, Value};

use crate::call::{Call, decode_reply};
use crate::error::{Error, KeySlot, Origin};
use crate::reply::render_reply;
use crate::script::Script;

/// Label used in errors about the batch as a whole.
const BATCH: &str = "batch";
/// Label used in errors of a batch's plain commands.
const COMMAND: &str = "command";

/// Several script calls and commands sent in one round trip.
///
/// A batch never fails with `NOSCRIPT` and never reorders commands:
///
/// - in a [`transaction`](Batch::transaction) the first use of each script
///   is sent as `EVAL` with the body (which also caches it), later uses as
///   `EVALSHA`: nothing can flush the cache between them, since the server
///   runs the transaction as one;
/// - in a [`pipeline`](Batch::pipeline) every script call is sent as
///   `EVAL` with its body: a pipeline is not atomic, and a `SCRIPT FLUSH`
///   (or a failover) between two of its commands would make a later
///   `EVALSHA` fail. The server hashes each body again (cheap next to the
///   round trip this saves; see the README's benchmark).
///
/// All keys of a batch must share one cluster slot, checked when each call
/// is added: a transaction spanning slots is refused by Redis Cluster, and
/// redis-rs sends a cluster pipeline to a single node. The check runs on a
/// standalone server too, so a batch that could never run on a cluster
/// fails in development, not after the migration. Split such work into one
/// batch per slot (or per `{hash tag}`).
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
    pipeline: redis::Pipeline,
    /// Per queued command: the script, or `None` for a plain command.
    scripts: Vec<Option<&'static Script>>,
    /// `MULTI`/`EXEC`: the first use of a script caches it for the rest.
    atomic: bool,
    /// SHA1s of the scripts already sent with their body in this batch.
    bodies_sent: Vec<&'static str>,
    /// The slot of the batch's first keyed call, and that call's first key.
    slot: Option<KeySlot>,
}

/// Refers to the reply of one command of a [`Batch`], typed: `T` is the
/// reply, `E` the error ([`Failure<E>`](crate::Failure) for a script
/// declared with `errors = E`).
#[must_use = "a handle is the only way to read its command's reply"]
#[derive(Debug)]
pub struct Handle<T, E = Error> {
    index: usize,
    reply: PhantomData<fn() -> Result<T, E>>,
}

impl Batch {
    /// A pipeline: commands run in order, not atomically.
    pub fn pipeline() -> Self {
        let mut pipeline = redis::Pipeline::new();
        // Each reply is decoded on its own, so one failed command must not
        // hide the others' replies.
        pipeline.ignore_errors();
        Self {
            pipeline,
            scripts: Vec::new(),
            atomic: false,
            bodies_sent: Vec::new(),
            slot: None,
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

    /// Queues a script call; fails with [`Error::CrossSlot`] (and queues
    /// nothing) when its keys do not share the batch's cluster slot.
    pub fn add<T: FromRedisValue, E>(&mut self, call: Call<T, E>) -> Result<Handle<T, E>, Error> {
        let script = call.script();
        if let Some(slot) = call.slot()? {
            // The key's text is kept only for error messages: render it
            // for the first keyed call and on a mismatch, not on every add.
            let first_key = || KeySlot {
                key: call.first_key().unwrap_or_default(),
                slot,
            };
            match &self.slot {
                None => self.slot = Some(first_key()),
                Some(batch_slot) if batch_slot.slot == slot => {}
                Some(batch_slot) => {
                    return Err(Error::CrossSlot {
                        script: script.name(),
                        keys: vec![batch_slot.clone(), first_key()],
                    });
                }
            }
        }
        let command = if self.atomic && self.bodies_sent.contains(&script.sha1()) {
            call.plain_evalsha()
        } else {
            if self.atomic {
                self.bodies_sent.push(script.sha1());
            }
            call.plain_eval()
        };
        Ok(self.queue(command, Some(script)))
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
        self.queue(command, None)
    }

    /// Number of queued commands.
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    fn queue<T, E>(&mut self, command: Cmd, script: Option<&'static Script>) -> Handle<T, E> {
        self.pipeline.add_command(command);
        self.scripts.push(script);
        Handle {
            index: self.scripts.len() - 1,
            reply: PhantomData,
        }
    }

    /// Sends every queued command in one round trip. Errors of single
    /// commands are reported by [`Replies::take`]; this fails only when the
    /// batch as a whole failed (connection, or an aborted transaction).
    pub async fn run<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: ConnectionLike + ?Sized,
    {
        let (offset, count) = self.reply_window();
        let replies = connection
            .req_packed_commands(&self.pipeline, offset, count)
            .await;
        self.replies(replies)
    }

    /// [`Batch::run`] on a synchronous connection, blocking the thread
    /// until every reply arrived.
    pub fn run_blocking<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: redis::ConnectionLike + ?Sized,
    {
        let (offset, count) = self.reply_window();
        let packed = self.pipeline.get_packed_pipeline();
        self.replies(connection.req_packed_commands(&packed, offset, count))
    }

    /// Which of the replies to the sent commands are kept: for a
    /// transaction only `EXEC`'s (after `MULTI`'s OK and one QUEUED per
    /// command).
    fn reply_window(&self) -> (usize, usize) {
        if self.atomic {
            (self.scripts.len() + 1, 1)
        } else {
            (0, self.scripts.len())
        }
    }

    /// One reply per queued command, from what the connection returned.
    fn replies(&self, received: redis::RedisResult<Vec<Value>>) -> Result<Replies, Error> {
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
                        script: BATCH,
                        expected: "the replies of EXEC",
                        reply: render_reply(&other.unwrap_or_default()),
                        reason: "the transaction did not run".to_owned(),
                    });
                }
            }
        } else {
            received
        };
        if values.len() != self.scripts.len() {
            return Err(Error::Decode {
                script: BATCH,
                expected: "one reply per queued command",
                reply: render_reply(&Value::Array(values)),
                reason: format!("{} commands were queued", self.scripts.len()),
            });
        }
        Ok(Replies {
            values,
            scripts: self.scripts.clone(),
        })
    }
}

/// The replies of a [`Batch`], read one by one through their handles.
#[derive(Debug)]
pub struct Replies {
    values: Vec<Value>,
    scripts: Vec<Option<&'static Script>>,
}

impl Replies {
    /// Decodes the reply `handle` refers to. A script's error reply becomes
    /// [`Error::Script`] (or [`Error::Refused`]) naming that script; for a
    /// call declared with `errors = E`, its declared errors come back as
    /// [`Failure::Script`](crate::Failure::Script).
    pub fn take<T: FromRedisValue, E: From<Error>>(
        &mut self,
        handle: Handle<T, E>,
    ) -> Result<T, E> {
        let origin = match self.scripts.get(handle.index).copied().flatten() {
            Some(script) => Origin::script(script),
            None => Origin::label(COMMAND),
        };
        let value = self
            .values
            .get_mut(handle.index)
            .map(std::mem::take)
            .unwrap_or_default();
        decode_reply(origin, &value).map_err(E::from)
    }
}
