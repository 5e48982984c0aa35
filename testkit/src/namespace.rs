//! A key namespace of its own for each test, on the cluster the test binary
//! shares: a cluster has one database, so tests keep apart by their keys.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::state::State;
use crate::{RedisCluster, admin};

/// The cluster the tests of this binary share (3 primaries, one replica
/// each), started by the first test that asks for it and stopped when the
/// binary ends, however it ends.
fn shared_cluster() -> &'static RedisCluster {
    static CLUSTER: OnceLock<RedisCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| RedisCluster::start(3, 1))
}

/// A key namespace for one test on a Redis Cluster the test binary shares.
///
/// A cluster has a single database, so tests keep apart by their keys:
/// [`TestCluster::key`] puts the test's namespace in front of a key name,
/// and [`TestCluster::state`] reads back the keys of that namespace only,
/// from every primary. Hash tags stay the test's own: `key("{user-7}:cart")`
/// is `t3:{user-7}:cart`, which hashes by `user-7`.
///
/// A test that fails nodes over, migrates slots or stops nodes starts a
/// cluster of its own with [`RedisCluster::start`].
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() {
/// use redis_script_test::{State, TestCluster};
///
/// let cluster = TestCluster::new();
/// let cart = cluster.key("{user-7}:cart");
/// cluster.given(&State::new().hash(&cart, [("sku-1", "2")])).await;
/// let mut connection = cluster.connection().await;
/// let count: i64 = redis::cmd("HINCRBY")
///     .arg(&cart)
///     .arg("sku-1")
///     .arg(1)
///     .query_async(&mut connection)
///     .await
///     .unwrap();
/// assert_eq!(count, 3);
/// cluster.assert_state(&State::new().hash(&cart, [("sku-1", "3")])).await;
/// # }
/// ```
#[derive(Debug)]
pub struct TestCluster {
    cluster: &'static RedisCluster,
    namespace: String,
}

impl TestCluster {
    /// A new namespace on the cluster this test binary shares.
    ///
    /// # Panics
    ///
    /// If the cluster cannot be started (see [`RedisCluster::start`]).
    pub fn new() -> TestCluster {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        TestCluster {
            cluster: shared_cluster(),
            namespace: format!("t{}:", NEXT.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The shared cluster.
    pub fn cluster(&self) -> &RedisCluster {
        self.cluster
    }

    /// The test's name for `name`: its namespace, then `name`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.namespace)
    }

    /// What every key of this test starts with.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// A new cluster connection.
    ///
    /// # Panics
    ///
    /// If the cluster does not answer.
    pub async fn connection(&self) -> redis::cluster_async::ClusterConnection {
        self.cluster.connection().await
    }

    /// Writes `state` (whose keys the test named with [`TestCluster::key`]).
    ///
    /// # Panics
    ///
    /// If a key is outside the namespace, or the cluster refuses a write.
    pub async fn given(&self, state: &State) {
        for key in state.keys().keys() {
            assert!(
                key.starts_with(&self.namespace),
                "fixture key {key:?} is outside this test's namespace: name it with `key(…)`"
            );
        }
        let mut connection = self.connection().await;
        state.write_each(&mut connection).await;
    }

    /// Every key of the namespace, from every primary, with its value and
    /// TTL.
    ///
    /// # Panics
    ///
    /// If a node does not answer.
    pub async fn state(&self) -> State {
        let pattern = format!("{}*", glob_escape(&self.namespace));
        let mut keys = Vec::new();
        for primary in self.cluster.primaries() {
            let mut cursor: u64 = 0;
            // Each node's SCAN ends at cursor 0; a test's keys are few.
            loop {
                let (next, batch): (u64, Vec<String>) = admin::query_or_panic(
                    primary.port(),
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(1000),
                );
                keys.extend(batch);
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
        State::read_keys(&mut self.connection().await, keys).await
    }

    /// Asserts that the namespace holds exactly `expected`, as
    /// [`TestDb::assert_state`](crate::TestDb::assert_state) does.
    ///
    /// # Panics
    ///
    /// When the state differs, listing every difference.
    #[track_caller]
    pub fn assert_state<'a>(&'a self, expected: &'a State) -> impl Future<Output = ()> + 'a {
        let caller = std::panic::Location::caller();
        async move {
            if let Some(diff) = expected.diff(&self.state().await) {
                panic!("namespace {:?} at {caller}: {diff}", self.namespace);
            }
        }
    }
}

impl Default for TestCluster {
    fn default() -> Self {
        Self::new()
    }
}

/// `text` with the glob characters of `SCAN MATCH` escaped.
fn glob_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if matches!(character, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}
