//! A pipeline across slots in one request per primary, on connections of
//! the batch's own ([`NodeConnections`]): the send loop of the [`Engine`],
//! and the connections, slot map and scripts it keeps between batches.
//!
//! The slot map comes from the nodes themselves (`CLUSTER SLOTS` on the
//! connections of the batch), not from redis-rs's cluster connection: a
//! cluster connection that lost its way after a redirection (in our runs,
//! one with `retries(0)` stopped answering during a slot migration) does
//! not stop the batches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Value};

use super::engine::{Connections, Destination, Engine, NodeScripts, Request, Step, lock};
use super::{BATCH, Batch, Replies};
use crate::error::{Error, Origin};
use crate::replicas::ReadFrom;
use crate::topology::{Address, SlotMap};

/// Connections of their own to a cluster's primaries, through which a
/// [`Batch`] pipeline across slots goes in one request per node (see
/// [`NodeConnections::run_batch`]).
///
/// Made from the settings of any node of the cluster (a URL or a
/// [`redis::ConnectionInfo`]): each primary is reached at the address
/// `CLUSTER SLOTS` gives it, with those settings' credentials, database,
/// protocol and TLS. It opens one multiplexed connection per primary, the
/// first time a batch needs it, and keeps it for later batches (a failed
/// one is opened again); it also remembers which node answered which
/// script, so that later batches send no body there. Share one per
/// cluster, behind an `Arc` or a `static`: it is `Send + Sync`, and
/// `run_batch` takes `&self`.
///
/// ```no_run
/// # async fn demo() -> Result<(), redis_script::Error> {
/// use redis_script::{Batch, cluster, redis_script};
///
/// #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
/// async fn release_lock(lock: &str, token: &str) -> i64;
///
/// let nodes = cluster::NodeConnections::new("redis://127.0.0.1:7000")?;
/// let mut batch = Batch::pipeline();
/// let first = batch.add(release_lock::call("lock:{a}", "token-a"))?;
/// let second = batch.add(release_lock::call("lock:{b}", "token-b"))?;
/// let mut replies = nodes.run_batch(&batch).await?;
/// let released = replies.take(first)? + replies.take(second)?;
/// # let _ = released;
/// # Ok(()) }
/// ```
pub struct NodeConnections {
    /// How to reach a node: any node's settings, its address replaced.
    settings: ConnectionInfo,
    /// The connection to each node opened so far.
    open: Mutex<HashMap<Address, MultiplexedConnection>>,
    /// The scripts each node answered before.
    scripts: Mutex<NodeScripts>,
    /// The slot map the last batch read, until a redirection or a failure
    /// says it is out of date.
    slot_map: Mutex<Option<Arc<SlotMap>>>,
    /// Where the transactions of read-only calls go.
    read_from: ReadFrom,
}

impl std::fmt::Debug for NodeConnections {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open: Vec<Address> = lock(&self.open).keys().cloned().collect();
        formatter
            .debug_struct("NodeConnections")
            .field("open", &open)
            .finish_non_exhaustive()
    }
}

impl NodeConnections {
    /// Connections to the nodes of a cluster, reached with the settings of
    /// `node` (any node's URL or [`redis::ConnectionInfo`]; its own address
    /// is not used). Nothing is opened until a batch runs.
    ///
    /// Fails when `node` is not valid connection settings, or is a Unix
    /// socket (cluster nodes are reached over TCP).
    ///
    /// ```
    /// let nodes = redis_script::cluster::NodeConnections::new("redis://user:secret@10.0.0.1:7000/")?;
    /// # Ok::<(), redis_script::Error>(())
    /// ```
    pub fn new(node: impl IntoConnectionInfo) -> Result<Self, Error> {
        let settings = node
            .into_connection_info()
            .map_err(|error| Error::from_failure(Origin::label(BATCH), error))?;
        if let ConnectionAddr::Unix(path) = settings.addr() {
            return Err(Error::from_failure(
                Origin::label(BATCH),
                redis::RedisError::from((
                    redis::ErrorKind::InvalidClientConfig,
                    "cluster nodes are reached over TCP, not a Unix socket",
                    path.display().to_string(),
                )),
            ));
        }
        Ok(Self {
            settings,
            open: Mutex::new(HashMap::new()),
            scripts: Mutex::new(NodeScripts::default()),
            slot_map: Mutex::new(None),
            read_from: ReadFrom::Primary,
        })
    }

    /// Sends each slot's transaction of nothing but read-only calls (of
    /// scripts sent as `EVALSHA_RO` elsewhere, and `no-writes` functions)
    /// where `read_from` says: to a replica of the slot's primary (its
    /// replicas taken in turn, slot by slot), on connections that send
    /// `READONLY` first. A transaction with a write, or a library's load,
    /// goes to the primary.
    ///
    /// Under [`ReadFrom::PreferReplica`] a transaction the replica cannot
    /// serve (it is unreachable, `LOADING` or `MASTERDOWN`; nothing of it
    /// ran, or it only read) goes again to the primary; under
    /// [`ReadFrom::ReplicaOnly`] it ends with the replica's answer, and a
    /// slot without a replica with a connection error (nothing sent). A
    /// replica may lag behind its primary.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), redis_script::Error> {
    /// use redis_script::{Batch, ReadFrom, cluster, redis_script};
    ///
    /// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
    /// async fn versioned_get(document: &str) -> Option<(u64, String)>;
    ///
    /// let nodes = cluster::NodeConnections::new("redis://127.0.0.1:7000")?
    ///     .read_from(ReadFrom::PreferReplica);
    /// let mut batch = Batch::pipeline();
    /// let first = batch.add(versioned_get::call("profile:{1}"))?;
    /// let second = batch.add(versioned_get::call("profile:{2}"))?;
    /// let mut replies = nodes.run_batch(&batch).await?;
    /// let documents = (replies.take(first)?, replies.take(second)?);
    /// # let _ = documents;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn read_from(mut self, read_from: ReadFrom) -> Self {
        self.read_from = read_from;
        self
    }

    /// Runs `batch` on the cluster: a pipeline in one request per primary,
    /// sent to all at once, each slot's commands in one transaction (a
    /// slot's lone command bare); a transaction (its calls share one slot)
    /// as one. Replies come in the order the commands were queued. The
    /// slot map (`CLUSTER SLOTS`) is read on the first batch, and again
    /// after a redirection or a failure, from a node it listed or the node
    /// of the settings.
    ///
    /// The promises of [`cluster::run_batch`](crate::cluster::run_batch)
    /// hold: calls of one slot run in the order queued, with no other
    /// command between them; calls of different slots in no promised order;
    /// a transaction refused for a redirection (`MOVED`, `ASK`, `TRYAGAIN`,
    /// `CLUSTERDOWN`: nothing of it ran) is sent again where the slot now
    /// is, a few times; a node that fails fails its slots' calls, each
    /// saying whether it may have run, and the others get their replies (a
    /// connection refused sent nothing: its calls go again once the slot
    /// map is read again, a few times); a slot's transaction of nothing but
    /// calls of `exactly_once` scripts is sent again after any connection
    /// failure. Slots with more commands than
    /// [`Batch::slot_transaction_limit`] send their further transactions in
    /// later requests, each after the one before was answered. The whole
    /// run ends by the batch's deadline.
    pub async fn run_batch(&self, batch: &Batch) -> Result<Replies, Error> {
        let known = lock(&self.slot_map).clone();
        let engine =
            Engine::new(Connections::PerNode(&self.scripts), batch, known).reading(self.read_from);
        batch.run_across_slots(self.send(engine)).await
    }

    /// Sends what `engine` plans until every transaction has its outcome.
    async fn send<'b>(&self, mut engine: Engine<'b>) -> Engine<'b> {
        loop {
            match engine.next() {
                Step::Done => return engine,
                Step::Wait(delay) => crate::timer::sleep(delay).await,
                Step::ReadSlotMap => {
                    let known = engine.slot_map().cloned();
                    let read = self.read_slot_map(known.as_deref()).await.map(Arc::new);
                    if let Ok(map) = &read {
                        *lock(&self.slot_map) = Some(Arc::clone(map));
                    }
                    engine.slot_map_read(read);
                }
                Step::Send(requests) => {
                    // Every request is built before the first goes out, so
                    // that the nodes' requests leave together.
                    let sends = requests.iter().map(|request| self.send_request(request));
                    let answers = futures_util::future::join_all(sends).await;
                    for (request, answer) in requests.iter().zip(answers) {
                        engine.answered(request, answer);
                    }
                }
            }
        }
    }

    /// Sends one node's request: every reply, or why it failed (its
    /// connection is then opened again next time).
    async fn send_request(&self, request: &Request) -> redis::RedisResult<Vec<Value>> {
        let Destination::Node(address) = &request.destination else {
            // The engine addresses every request of these connections to a
            // node; a slot is for the cluster connection to route.
            return Err(redis::RedisError::from((
                redis::ErrorKind::ClusterConnectionNotFound,
                "no node address for the request",
            )));
        };
        let count = request.pipeline.len();
        let answer = match self.connection(address).await {
            Ok(mut connection) => {
                connection
                    .req_packed_commands(&request.pipeline, 0, count)
                    .await
            }
            Err(error) => Err(error),
        };
        if answer.is_err() {
            lock(&self.open).remove(address);
        }
        answer
    }

    /// The slot map, asked of the nodes `known` lists (primaries first),
    /// then of the node of the settings, until one answers.
    async fn read_slot_map(&self, known: Option<&SlotMap>) -> redis::RedisResult<SlotMap> {
        let mut candidates: Vec<Address> =
            known.map(|map| map.nodes().to_vec()).unwrap_or_default();
        if let ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } =
            self.settings.addr()
        {
            let address = (host.clone(), *port);
            if !candidates.contains(&address) {
                candidates.push(address);
            }
        }
        let mut last_error = redis::RedisError::from((
            redis::ErrorKind::ClusterConnectionNotFound,
            "no node to ask for the slot map",
        ));
        for address in candidates {
            let answer = match self.connection(&address).await {
                Ok(mut connection) => {
                    redis::cmd("CLUSTER")
                        .arg("SLOTS")
                        .query_async::<Value>(&mut connection)
                        .await
                }
                Err(error) => Err(error),
            };
            match answer {
                Ok(topology) => {
                    let map = SlotMap::from_cluster_slots(&topology);
                    if !map.nodes().is_empty() {
                        return Ok(map);
                    }
                }
                Err(error) => {
                    lock(&self.open).remove(&address);
                    last_error = error;
                }
            }
        }
        Err(last_error)
    }

    /// The open connection to `address`, or a new one.
    async fn connection(&self, address: &Address) -> redis::RedisResult<MultiplexedConnection> {
        if let Some(connection) = lock(&self.open).get(address) {
            return Ok(connection.clone());
        }
        let (host, port) = address.clone();
        let addr = match self.settings.addr() {
            ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => ConnectionAddr::TcpTls {
                host,
                port,
                insecure: *insecure,
                tls_params: tls_params.clone(),
            },
            _ => ConnectionAddr::Tcp(host, port),
        };
        // The batch's deadline bounds every request: no timeout of its own.
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
        let mut connection = redis::Client::open(self.settings.clone().set_addr(addr))?
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        if self.read_from.reads_replicas() {
            // A replica serves reads of its primary's slots only after
            // `READONLY`; a primary ignores it.
            let () = redis::cmd("READONLY").query_async(&mut connection).await?;
        }
        lock(&self.open).insert(address.clone(), connection.clone());
        Ok(connection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_of_a_unix_socket_are_refused() {
        let error = NodeConnections::new("redis+unix:///tmp/redis.sock")
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.contains("over TCP"), "{error}");
        assert!(NodeConnections::new("redis://127.0.0.1:7000").is_ok());
        assert!(NodeConnections::new("not a url").is_err());
    }
}
