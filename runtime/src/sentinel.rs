//! The primary or a replica of a Sentinel deployment, found again through
//! the sentinels after a failover.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{
    AsyncConnectionConfig, Cmd, ConnectionInfo, IntoConnectionInfo, RedisError, RedisFuture,
    RedisResult, Value,
};

/// A connection to the node a Sentinel deployment names for a role: its
/// primary ([`SentinelConnection::primary`]) or one of its replicas
/// ([`SentinelConnection::replica`]). Put them together in a
/// [`Replicas`](crate::Replicas) to read on replicas and write on the
/// primary.
///
/// The node is asked of the sentinels when the connection is first used,
/// and again after the sentinels announce a failover (`+switch-master`,
/// which a task listens for while the connection lives), after the node
/// stopped answering (a dropped connection, a timeout) or, for the
/// primary, after it answered `READONLY` (it was demoted). The call that met the failure ends with its
/// error, which says truthfully whether the script may have run; the next
/// call goes to the node the sentinels name then. A refusal such as
/// `READONLY` means the script did not run, so
/// [`RetryRefusals`](crate::RetryRefusals) may send the call again, and it
/// reaches the new primary. Clones share the connection.
///
/// Needs the `sentinel` feature.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use redis_script::sentinel::SentinelConnection;
/// use redis_script::{ReadFrom, Replicas, redis_script};
///
/// #[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
/// async fn versioned_get(document: &str) -> Option<(u64, String)>;
///
/// let sentinels = vec!["redis://10.0.0.1:26379", "redis://10.0.0.2:26379", "redis://10.0.0.3:26379"];
/// let mut connection = Replicas::new(
///     SentinelConnection::primary(sentinels.clone(), "mymaster", None)?,
///     vec![SentinelConnection::replica(sentinels, "mymaster", None)?],
///     ReadFrom::PreferReplica,
/// );
/// let document = versioned_get(&mut connection, "profile:{7}").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SentinelConnection {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SentinelConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentinelConnection")
            .field("service", &self.shared.service)
            .field("role", &self.shared.role)
            .field("sentinels", &self.shared.sentinels.len())
            .finish_non_exhaustive()
    }
}

/// Which node of the deployment a connection talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Primary,
    Replica,
}

/// What clones share: how to ask the sentinels, and the node's connection.
struct Shared {
    sentinels: Vec<ConnectionInfo>,
    service: String,
    node: Option<SentinelNodeConnectionInfo>,
    role: Role,
    config: AsyncConnectionConfig,
    current: Mutex<Current>,
    /// Whether the task that listens for failovers was started.
    listening: AtomicBool,
}

/// The connection to the node the sentinels named last, if it still works.
#[derive(Default)]
struct Current {
    connection: Option<MultiplexedConnection>,
    /// Counts the connections made, so that a failure of an older one
    /// does not drop a newer one.
    generation: u64,
}

impl SentinelConnection {
    /// The primary of the deployment the sentinels monitor as `service`.
    /// `sentinels` are the sentinels' addresses; `node` holds what the
    /// connections to the primary need (database, user, password, TLS).
    /// Nothing is sent until the first command.
    ///
    /// # Errors
    ///
    /// When a sentinel's address is not a valid one.
    pub fn primary<T: IntoConnectionInfo>(
        sentinels: Vec<T>,
        service: &str,
        node: Option<SentinelNodeConnectionInfo>,
    ) -> RedisResult<Self> {
        Self::new(sentinels, service, node, Role::Primary)
    }

    /// A replica of the deployment the sentinels monitor as `service`,
    /// picked at random among those they know, and picked again after it
    /// stopped answering. As [`SentinelConnection::primary`] otherwise.
    ///
    /// # Errors
    ///
    /// When a sentinel's address is not a valid one.
    pub fn replica<T: IntoConnectionInfo>(
        sentinels: Vec<T>,
        service: &str,
        node: Option<SentinelNodeConnectionInfo>,
    ) -> RedisResult<Self> {
        Self::new(sentinels, service, node, Role::Replica)
    }

    /// The timeouts of the connections to the nodes (redis-rs's defaults
    /// otherwise: a 500 ms response timeout).
    #[must_use]
    pub fn with_config(self, config: AsyncConnectionConfig) -> Self {
        let shared = &self.shared;
        Self {
            shared: Arc::new(Shared {
                sentinels: shared.sentinels.clone(),
                service: shared.service.clone(),
                node: shared.node.clone(),
                role: shared.role,
                config,
                current: Mutex::new(Current::default()),
                listening: AtomicBool::new(false),
            }),
        }
    }

    fn new<T: IntoConnectionInfo>(
        sentinels: Vec<T>,
        service: &str,
        node: Option<SentinelNodeConnectionInfo>,
        role: Role,
    ) -> RedisResult<Self> {
        let sentinels = sentinels
            .into_iter()
            .map(IntoConnectionInfo::into_connection_info)
            .collect::<RedisResult<Vec<_>>>()?;
        let shared = Shared {
            sentinels,
            service: service.to_owned(),
            node,
            role,
            config: AsyncConnectionConfig::new(),
            current: Mutex::new(Current::default()),
            listening: AtomicBool::new(false),
        };
        // The same checks the sentinels' client makes, once, now.
        shared.client()?;
        Ok(Self {
            shared: Arc::new(shared),
        })
    }
}

impl Shared {
    fn client(&self) -> RedisResult<SentinelClient> {
        let server_type = match self.role {
            Role::Primary => SentinelServerType::Master,
            Role::Replica => SentinelServerType::Replica,
        };
        SentinelClient::build(
            self.sentinels.clone(),
            self.service.clone(),
            self.node.clone(),
            server_type,
        )
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection to the node, asking the sentinels for it when there
    /// is none; its generation.
    async fn connection(self: &Arc<Self>) -> RedisResult<(MultiplexedConnection, u64)> {
        if !self.listening.swap(true, Ordering::Relaxed) {
            tokio::spawn(listen_for_failovers(Arc::downgrade(self)));
        }
        {
            let current = self.current();
            if let Some(connection) = &current.connection {
                return Ok((connection.clone(), current.generation));
            }
        }
        let connection = self
            .client()
            .map_err(|error| self.unreachable(&error))?
            .get_async_connection_with_config(&self.config)
            .await
            .map_err(|error| self.unreachable(&error))?;
        let mut current = self.current();
        current.generation += 1;
        current.connection = Some(connection.clone());
        Ok((connection, current.generation))
    }

    /// Drops the connection of `generation` after an answer showed that
    /// its node is gone or is no longer the primary: `Ok` with the code of
    /// an error reply (if any), or the failure.
    fn observe(&self, answer: Result<Option<&str>, &RedisError>, generation: u64) {
        let lost = match answer {
            Ok(code) => self.role == Role::Primary && code == Some("READONLY"),
            Err(error) => match error.code() {
                Some(code) => self.role == Role::Primary && code == "READONLY",
                None => crate::replicas::unreachable(error),
            },
        };
        if !lost {
            return;
        }
        let mut current = self.current();
        if current.generation == generation {
            current.connection = None;
        }
    }

    /// Drops the connection: the next command asks the sentinels again.
    fn forget(&self) {
        self.current().connection = None;
    }

    /// No node could be reached: nothing was sent, so the error is a
    /// connection refusal.
    fn unreachable(&self, error: &RedisError) -> RedisError {
        let role = match self.role {
            Role::Primary => "the primary",
            Role::Replica => "a replica",
        };
        RedisError::from(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!(
                "the sentinels named no reachable node for {role} of `{}`: {error}",
                self.service
            ),
        ))
    }
}

/// How often the listener checks that a connection still needs it, and
/// waits before it subscribes again after a sentinel failed it.
const LISTENER_PERIOD: Duration = Duration::from_secs(1);

/// Listens on the sentinels, one at a time, for `+switch-master` of the
/// connection's service, and drops its connection when one comes: writes
/// then go to the new primary at once, not to the old one, which goes on
/// taking writes (lost when it resyncs) until the sentinels demote it.
/// Ends once every handle of the connection is dropped.
async fn listen_for_failovers(shared: Weak<Shared>) {
    let Some((sentinels, service)) = shared
        .upgrade()
        .map(|shared| (shared.sentinels.clone(), shared.service.clone()))
    else {
        return;
    };
    let mut turn = 0_usize;
    while shared.strong_count() > 0 {
        let sentinel = sentinels[turn % sentinels.len().max(1)].clone();
        turn = turn.wrapping_add(1);
        if let Ok(client) = redis::Client::open(sentinel)
            && let Ok(mut subscription) = client.get_async_pubsub().await
            && subscription.subscribe("+switch-master").await.is_ok()
        {
            let mut announcements = subscription.on_message();
            loop {
                let next = announcements.next();
                let tick = tokio::time::sleep(LISTENER_PERIOD);
                tokio::pin!(next, tick);
                let announcement = match futures_util::future::select(next, tick).await {
                    futures_util::future::Either::Left((announcement, _)) => announcement,
                    futures_util::future::Either::Right(((), _)) => {
                        if shared.strong_count() == 0 {
                            return;
                        }
                        continue;
                    }
                };
                let Some(announcement) = announcement else {
                    // The sentinel went away: subscribe to another one.
                    break;
                };
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                // "<service> <old ip> <old port> <new ip> <new port>"
                let payload: String = announcement.get_payload().unwrap_or_default();
                if payload.split(' ').next() == Some(shared.service.as_str()) {
                    tracing::info!(service = %service, announcement = %payload, "Sentinel failover: the connection is asked of the sentinels again");
                    shared.forget();
                }
            }
        }
        tokio::time::sleep(LISTENER_PERIOD).await;
    }
}

/// The code of an error reply.
fn refusal_code(value: &Value) -> Option<&str> {
    match value {
        Value::ServerError(error) => Some(error.code()),
        _ => None,
    }
}

impl ConnectionLike for SentinelConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let shared = &self.shared;
        Box::pin(async move {
            let (mut connection, generation) = shared.connection().await?;
            let reply = connection.req_packed_command(cmd).await;
            shared.observe(reply.as_ref().map(refusal_code), generation);
            reply
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let shared = &self.shared;
        Box::pin(async move {
            let (mut connection, generation) = shared.connection().await?;
            let replies = connection
                .req_packed_commands(pipeline, offset, count)
                .await;
            let answer = replies
                .as_ref()
                .map(|values| values.iter().find_map(refusal_code));
            shared.observe(answer, generation);
            replies
        })
    }

    fn get_db(&self) -> i64 {
        let current = self.shared.current();
        current
            .connection
            .as_ref()
            .map_or(0, ConnectionLike::get_db)
    }
}
