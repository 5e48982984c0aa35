//! Scripts (and plain commands) sent together: a pipeline, or a
//! `MULTI`/`EXEC` transaction.

use std::marker::PhantomData;

use redis::aio::ConnectionLike;
use redis::{Cmd, FromRedisValue, Value};

use crate::call::{Call, decode_reply};
use crate::error::{Error, KeySlot};
use crate::reply::render_reply;

/// Label used in errors about the batch as a whole and its plain commands.
const BATCH: &str = "batch";

/// Several script calls and commands sent in one round trip.
///
/// A batch never fails with `NOSCRIPT` and never reorders commands: the
/// first use of each script is sent as `EVAL` with the body (which also
/// caches it on the server), later uses of it as `EVALSHA`.
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
    /// Per queued command: the script name, or `None` for a plain command.
    labels: Vec<Option<&'static str>>,
    /// SHA1s of the scripts already sent with their body in this batch.
    bodies_sent: Vec<&'static str>,
    /// The slot of the batch's first keyed call, and that call's first key.
    slot: Option<KeySlot>,
}

/// Refers to the reply of one command of a [`Batch`], typed.
#[must_use = "a handle is the only way to read its command's reply"]
#[derive(Debug)]
pub struct Handle<T> {
    index: usize,
    reply: PhantomData<fn() -> T>,
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
            labels: Vec::new(),
            bodies_sent: Vec::new(),
            slot: None,
        }
    }

    /// A `MULTI`/`EXEC` transaction: commands run in order, atomically.
    /// On a cluster, all keys of a transaction must be in one slot.
    pub fn transaction() -> Self {
        let mut batch = Self::pipeline();
        batch.pipeline.atomic();
        batch
    }

    /// Queues a script call; fails with [`Error::CrossSlot`] (and queues
    /// nothing) when its keys do not share the batch's cluster slot.
    pub fn add<T: FromRedisValue>(&mut self, call: Call<T>) -> Result<Handle<T>, Error> {
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
        let command = if self.bodies_sent.contains(&script.sha1()) {
            call.into_command()
        } else {
            self.bodies_sent.push(script.sha1());
            call.eval_command()
        };
        Ok(self.queue(command, Some(script.name())))
    }

    /// Queues a plain redis-rs command whose reply decodes as `T`.
    pub fn add_command<T: FromRedisValue>(&mut self, command: Cmd) -> Handle<T> {
        self.queue(command, None)
    }

    /// Number of queued commands.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    fn queue<T>(&mut self, command: Cmd, label: Option<&'static str>) -> Handle<T> {
        self.pipeline.add_command(command);
        self.labels.push(label);
        Handle {
            index: self.labels.len() - 1,
            reply: PhantomData,
        }
    }

    /// Sends every queued command in one round trip. Errors of single
    /// commands are reported by [`Replies::take`]; this fails only when the
    /// batch as a whole failed (connection, or an aborted transaction).
    pub async fn run<C>(&self, connection: &mut C) -> Result<Replies, Error>
    where
        C: ConnectionLike,
    {
        let values: Vec<Value> = self
            .pipeline
            .query_async(connection)
            .await
            .map_err(|error| Error::failed_request(BATCH, error))?;
        if values.len() != self.labels.len() {
            return Err(Error::Decode {
                script: BATCH,
                expected: "one reply per queued command",
                reply: render_reply(&Value::Array(values)),
                reason: format!("{} commands were queued", self.labels.len()),
            });
        }
        Ok(Replies {
            values,
            labels: self.labels.clone(),
        })
    }
}

/// The replies of a [`Batch`], read one by one through their handles.
#[derive(Debug)]
pub struct Replies {
    values: Vec<Value>,
    labels: Vec<Option<&'static str>>,
}

impl Replies {
    /// Decodes the reply `handle` refers to. A script's error reply becomes
    /// [`Error::Script`] naming that script.
    pub fn take<T: FromRedisValue>(&mut self, handle: Handle<T>) -> Result<T, Error> {
        let label = self
            .labels
            .get(handle.index)
            .copied()
            .flatten()
            .unwrap_or("command");
        let value = self
            .values
            .get_mut(handle.index)
            .map(std::mem::take)
            .unwrap_or_default();
        decode_reply(label, &value)
    }
}
