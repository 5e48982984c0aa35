//! Many calls at once, released together: the test of an invariant that
//! must hold under concurrency (a limiter never admits more than its
//! limit, a lock never has two holders).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::Barrier;

/// Which call of a [`concurrently`] run this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    let start = Arc::new(Barrier::new(tasks));
    let mut handles = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let (call, start) = (Arc::clone(&call), Arc::clone(&start));
        handles.push(tokio::spawn(async move {
            start.wait().await;
            let mut outcomes = Vec::with_capacity(calls_per_task);
            for index in 0..calls_per_task {
                outcomes.push(call(Turn { task, call: index }).await);
            }
            outcomes
        }));
    }
    let mut outcomes = Vec::with_capacity(tasks * calls_per_task);
    for handle in handles {
        match handle.await {
            Ok(task_outcomes) => outcomes.extend(task_outcomes),
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(error) => panic!("a task of `concurrently` did not finish: {error}"),
            },
        }
    }
    outcomes
}
