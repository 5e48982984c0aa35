//! Many calls at once, released together: the test of an invariant that
//! must hold under concurrency (a limiter never admits more than its
//! limit, a lock never has two holders).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Barrier;

use crate::TestDb;

/// Which call of a [`concurrently`] run this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Turn {
    /// The task, from 0.
    pub task: usize,
    /// The call within its task, from 0.
    pub call: usize,
}

/// Runs `tasks` tokio tasks that each make `calls_per_task` calls of
/// `call`, one after the other, and returns every outcome, task by task.
///
/// Every task waits at a barrier until all are spawned, so the calls are
/// released together instead of trickling in as tasks start. `call` gets
/// the [`Turn`] and clones what it needs, typically a connection (a
/// `MultiplexedConnection` clone shares one socket; give each task a
/// connection of its own to use many).
///
/// # Panics
///
/// If a task panics (its panic is passed on), or outside a tokio runtime.
///
/// The limiter invariant, 1,000 requests at once against a limit of 100:
///
/// ```
/// # use redis_script::{ScriptReply, redis_script};
/// # #[derive(Debug, ScriptReply)]
/// # enum Decision { Allowed { count: u64, remaining: u64 }, Denied { count: u64, retry_after_ms: u64 } }
/// # #[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
/// # async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() {
/// use redis_script_test::{TestDb, concurrently};
///
/// let db = TestDb::new();
/// let connection = db.connection().await;
/// let decisions = concurrently(100, 10, move |_| {
///     let mut connection = connection.clone();
///     async move { rate_limit_fixed(&mut connection, "rl:{api}", 100, 60_000).await }
/// })
/// .await;
/// let admitted = decisions
///     .iter()
///     .filter(|decision| matches!(decision, Ok(Decision::Allowed { .. })))
///     .count();
/// assert_eq!(admitted, 100);
/// # }
/// ```
pub async fn concurrently<T, F, Fut>(tasks: usize, calls_per_task: usize, call: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Turn) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    let call = Arc::new(call);
    let tasks = (0..tasks).map(|task| {
        let call = Arc::clone(&call);
        async move {
            let mut outcomes = Vec::with_capacity(calls_per_task);
            for index in 0..calls_per_task {
                outcomes.push(call(Turn { task, call: index }).await);
            }
            outcomes
        }
    });
    released_together(tasks.collect())
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// Runs each client's calls in order and the clients at the same time,
/// released together: one connection per client, on `db` (emptied first).
/// Returns each client's outcomes, in its order.
///
/// For property tests: generate the clients' calls, run them here, and
/// check an invariant over the outcomes and [`TestDb::state`]. Each case
/// starts from an empty database, so proptest's shrinking re-runs smaller
/// cases against the real server and ends on a minimal failing one.
///
/// # Panics
///
/// If a client panics, or a connection cannot be opened.
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() {
/// use redis_script_test::{TestDb, interleave};
///
/// let db = TestDb::new();
/// let clients = vec![vec![1, 2, 3], vec![10, 20]];
/// let outcomes = interleave(&db, clients, |mut connection, by: i64| async move {
///     redis::cmd("INCRBY")
///         .arg("total")
///         .arg(by)
///         .query_async::<i64>(&mut connection)
///         .await
///         .unwrap()
/// })
/// .await;
/// assert_eq!(outcomes.len(), 2);
/// assert_eq!(outcomes.iter().flatten().max(), Some(&36));
/// # }
/// ```
pub async fn interleave<Op, T, F, Fut>(db: &TestDb, clients: Vec<Vec<Op>>, call: F) -> Vec<Vec<T>>
where
    Op: Send + 'static,
    T: Send + 'static,
    F: Fn(redis::aio::MultiplexedConnection, Op) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    db.empty();
    let call = Arc::new(call);
    let mut tasks = Vec::with_capacity(clients.len());
    for operations in clients {
        let connection = db.connection().await;
        let call = Arc::clone(&call);
        tasks.push(async move {
            let mut outcomes = Vec::with_capacity(operations.len());
            for operation in operations {
                outcomes.push(call(connection.clone(), operation).await);
            }
            outcomes
        });
    }
    released_together(tasks).await
}

/// Spawns every task, each waiting at one barrier until all are spawned,
/// so that they start together; their outputs, in order.
async fn released_together<T, Fut>(tasks: Vec<Fut>) -> Vec<T>
where
    T: Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    let start = Arc::new(Barrier::new(tasks.len()));
    let handles: Vec<_> = tasks
        .into_iter()
        .map(|task| {
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                task.await
            })
        })
        .collect();
    let mut outputs = Vec::with_capacity(handles.len());
    for handle in handles {
        outputs.push(joined(handle.await));
    }
    outputs
}

/// A task's result, its panic passed on.
fn joined<T>(result: Result<T, tokio::task::JoinError>) -> T {
    match result {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(error) => panic!("a task did not finish: {error}"),
        },
    }
}

/// A property test's runtime and database: proptest runs each case as a
/// plain function, and [`Property::run`] runs its async body on a runtime
/// made once, on a database emptied for the case.
///
/// ```
/// use redis_script_test::Property;
///
/// let property = Property::new();
/// for by in [1_i64, 5, -3] {
///     let total: i64 = property.run(|db| async move {
///         let mut connection = db.connection().await;
///         redis::cmd("INCRBY").arg("total").arg(by).query_async(&mut connection).await.unwrap()
///     });
///     assert_eq!(total, by, "every case starts from an empty database");
/// }
/// ```
#[derive(Debug)]
pub struct Property {
    runtime: tokio::runtime::Runtime,
    db: Arc<TestDb>,
}

impl Property {
    /// A multi-threaded runtime (2 workers) and a database of the shared
    /// server.
    ///
    /// # Panics
    ///
    /// If the runtime cannot be built, or as [`TestDb::new`].
    pub fn new() -> Property {
        Property::on(TestDb::new())
    }

    /// The same on a given database (for example one of a server of its
    /// own).
    ///
    /// # Panics
    ///
    /// If the runtime cannot be built.
    pub fn on(db: TestDb) -> Property {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|error| panic!("cannot build a tokio runtime: {error}"));
        Property {
            runtime,
            db: Arc::new(db),
        }
    }

    /// The database the cases run on.
    pub fn db(&self) -> &TestDb {
        &self.db
    }

    /// Runs one case: empties the database and runs `case` to completion.
    pub fn run<T, F, Fut>(&self, case: F) -> T
    where
        F: FnOnce(Arc<TestDb>) -> Fut,
        Fut: Future<Output = T>,
    {
        self.db.empty();
        self.runtime.block_on(case(Arc::clone(&self.db)))
    }
}

impl Default for Property {
    fn default() -> Self {
        Property::new()
    }
}
