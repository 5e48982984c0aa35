//! Redlock: one lock over N independent Redis primaries, built on the typed
//! lock scripts of [`lock`](super::lock).
//!
//! To lock a resource, [`Redlock::lock`] runs `lua/lock_acquire.lua` with
//! one random owner token on every node at once, each bounded by a short
//! per-node timeout. The lock is held when a majority (`N / 2 + 1`) of the
//! nodes accepted it while time was left: its validity is
//! `ttl − elapsed − clock drift` (drift: 1 % of the TTL plus 2 ms) and must
//! be positive. Otherwise the attempt is undone with `lua/release_lock.lua`
//! on every node (a node that timed out may still have taken it), and tried
//! again after a random back-off, until the retry deadline.
//!
//! Use it where a single Redis (even with replicas) is not trusted to keep a
//! lock through a failover. Redlock gives no usable fencing token: the
//! per-node counters `lua/lock_acquire.lua` increments are not comparable
//! across majorities, so [`RedlockGuard`] does not expose them.
//!
//! ```no_run
//! # async fn demo(nodes: Vec<redis::aio::MultiplexedConnection>) -> Result<(), redis_script::Error> {
//! use std::time::Duration;
//! use redis_script_examples::workflows::redlock::Redlock;
//!
//! let redlock = Redlock::new(nodes);
//! if let Some(guard) = redlock.lock("lock:{report-2024}", Duration::from_secs(10)).await? {
//!     // work while guard.is_valid()
//!     redlock.release(&guard).await;
//! }
//! # Ok(()) }
//! ```

use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script::Error;
use tokio::task::JoinSet;

use super::lock::{Acquire, fencing_key, lock_acquire, lock_release, ttl_millis};

/// A Redlock client over independent Redis primaries.
#[derive(Debug, Clone)]
pub struct Redlock<C> {
    nodes: Vec<C>,
    node_timeout: Duration,
    retry_for: Duration,
    retry_delay: Duration,
}

/// A lock held on a majority of the nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedlockGuard {
    /// The locked resource (the lock key on every node).
    pub resource: String,
    /// The random owner token stored on the nodes that accepted the lock.
    pub token: String,
    /// How many nodes accepted the lock.
    pub nodes: usize,
    /// Until when the lock is held for sure (the validity, counted from the
    /// start of the attempt that took it).
    pub valid_until: Instant,
}

impl RedlockGuard {
    /// Whether the validity has not run out yet. Work under the lock only
    /// while this holds (and leave a margin for the work itself).
    pub fn is_valid(&self) -> bool {
        Instant::now() < self.valid_until
    }

    /// The validity left, zero once it ran out.
    pub fn remaining(&self) -> Duration {
        self.valid_until.saturating_duration_since(Instant::now())
    }
}

/// What one node did with one request.
enum NodeOutcome<T> {
    /// It answered.
    Answered(T),
    /// Connection error or timeout: it counts as a refusal.
    Unreachable,
}

impl<C> Redlock<C>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    /// A client over `nodes`, one connection per independent primary (a
    /// `MultiplexedConnection` or a `ConnectionManager`, which reconnects).
    /// Defaults: 50 ms per node and request, retries for 1 s with a random
    /// back-off of up to 50 ms.
    pub fn new(nodes: Vec<C>) -> Self {
        Self {
            nodes,
            node_timeout: Duration::from_millis(50),
            retry_for: Duration::from_secs(1),
            retry_delay: Duration::from_millis(50),
        }
    }

    /// How long one node may take to answer one request before it counts as
    /// down. Keep it far below the TTL.
    pub fn node_timeout(mut self, timeout: Duration) -> Self {
        self.node_timeout = timeout;
        self
    }

    /// How long [`lock`](Self::lock) keeps retrying (zero: one attempt).
    pub fn retry_for(mut self, deadline: Duration) -> Self {
        self.retry_for = deadline;
        self
    }

    /// The upper bound of the random pause between two attempts.
    pub fn retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }

    /// How many nodes must accept a lock: a strict majority.
    pub fn quorum(&self) -> usize {
        self.nodes.len() / 2 + 1
    }

    /// Takes the lock on `resource` for `ttl`, retrying with a random
    /// back-off until the retry deadline. `Ok(None)` when it is held
    /// elsewhere or too few nodes are reachable.
    ///
    /// Unreachable or slow nodes count as refusals; an error is returned
    /// only when a node answers with something that is a bug, not an
    /// outage (a script error, an undecodable reply, a key without a
    /// `{hash tag}`).
    pub async fn lock(&self, resource: &str, ttl: Duration) -> Result<Option<RedlockGuard>, Error> {
        let deadline = Instant::now() + self.retry_for;
        loop {
            if let Some(guard) = self.try_lock(resource, ttl).await? {
                return Ok(Some(guard));
            }
            let pause = self.retry_delay.mul_f64(rand::random::<f64>());
            if Instant::now() + pause >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// One attempt of [`lock`](Self::lock), without retrying.
    pub async fn try_lock(
        &self,
        resource: &str,
        ttl: Duration,
    ) -> Result<Option<RedlockGuard>, Error> {
        let token = crate::owner_token();
        let started = Instant::now();
        let ttl_ms = ttl_millis(ttl);
        let fencing = fencing_key(resource);
        let outcomes = self
            .on_every_node(
                |mut connection, resource, token| {
                    let fencing = fencing.clone();
                    async move {
                        lock_acquire(&mut connection, &resource, &fencing, &token, ttl_ms).await
                    }
                },
                resource,
                &token,
            )
            .await;
        let outcomes = match outcomes {
            Ok(outcomes) => outcomes,
            Err(error) => {
                self.release_token(resource, &token).await;
                return Err(error);
            }
        };
        let accepted = outcomes
            .iter()
            .filter(|outcome| matches!(outcome, NodeOutcome::Answered(Acquire::Acquired { .. })))
            .count();
        let drift = ttl / 100 + Duration::from_millis(2);
        let validity = ttl.checked_sub(started.elapsed() + drift);
        match validity {
            Some(validity) if accepted >= self.quorum() && !validity.is_zero() => {
                Ok(Some(RedlockGuard {
                    resource: resource.to_owned(),
                    token,
                    nodes: accepted,
                    valid_until: started + validity,
                }))
            }
            _ => {
                self.release_token(resource, &token).await;
                Ok(None)
            }
        }
    }

    /// Releases the lock on every node where `guard`'s token still holds
    /// it; returns on how many nodes it was deleted. Unreachable nodes are
    /// left to the TTL.
    pub async fn release(&self, guard: &RedlockGuard) -> usize {
        self.release_token(&guard.resource, &guard.token).await
    }

    async fn release_token(&self, resource: &str, token: &str) -> usize {
        let outcomes = self
            .on_every_node(
                |mut connection, resource, token| async move {
                    lock_release(&mut connection, &resource, &token).await
                },
                resource,
                token,
            )
            .await;
        // A release that errs is left to the TTL, like an unreachable node.
        outcomes.map_or(0, |outcomes| {
            outcomes
                .iter()
                .filter(|outcome| matches!(outcome, NodeOutcome::Answered(true)))
                .count()
        })
    }

    /// Runs `request` on every node concurrently, each bounded by the node
    /// timeout. Connection errors and timeouts become `Unreachable`; other
    /// errors are returned (the first one).
    async fn on_every_node<T, F, Fut>(
        &self,
        request: F,
        resource: &str,
        token: &str,
    ) -> Result<Vec<NodeOutcome<T>>, Error>
    where
        T: Send + 'static,
        F: Fn(C, String, String) -> Fut,
        Fut: Future<Output = Result<T, Error>> + Send + 'static,
    {
        let mut tasks = JoinSet::new();
        for connection in &self.nodes {
            let call = request(connection.clone(), resource.to_owned(), token.to_owned());
            tasks.spawn(tokio::time::timeout(self.node_timeout, call));
        }
        let mut outcomes = Vec::with_capacity(self.nodes.len());
        let mut failure = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(Ok(reply))) => outcomes.push(NodeOutcome::Answered(reply)),
                // Down, slow, or refusing commands (LOADING, BUSY, OOM…).
                Ok(Ok(Err(error))) if is_outage(&error) => outcomes.push(NodeOutcome::Unreachable),
                Ok(Err(_)) | Err(_) => outcomes.push(NodeOutcome::Unreachable),
                Ok(Ok(Err(error))) => {
                    failure.get_or_insert(error);
                    outcomes.push(NodeOutcome::Unreachable);
                }
            }
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(outcomes),
        }
    }
}

/// Whether `error` means the node is down or refusing commands for now,
/// rather than a bug in the call.
fn is_outage(error: &Error) -> bool {
    match error {
        Error::Connection { .. } => true,
        Error::Script { .. } => !error.may_have_executed(),
        _ => false,
    }
}
