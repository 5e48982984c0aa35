//! The fixed-window limiter as a function library under concurrency: 1000
//! simultaneous requests against a limit of 100 admit exactly 100, on a
//! standalone server and on a cluster, starting from servers that do not
//! hold the library (the first calls load it, concurrently).

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script_examples::workflows::quota::{Decision, quota_lib};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};

use crate::releases::lacks_functions;

const REQUESTS: usize = 1_000;
const LIMIT: u64 = 100;
const WINDOW_MS: u64 = 60_000;
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_function_limiter_admits_exactly_its_limit_on_a_standalone_server() {
    let db = TestDb::new();
    let mut connections = Vec::new();
    for _ in 0..4 {
        connections.push(db.connection().await);
    }
    if lacks_functions(
        &mut connections[0],
        "workflows::quota::the_function_limiter_admits_exactly_its_limit_on_a_standalone_server",
    )
    .await
    {
        return;
    }
    burst(&connections, "quota:{tenant-a}:api").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_function_limiter_admits_exactly_its_limit_on_a_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let mut connections = Vec::new();
    for _ in 0..2 {
        connections.push(cluster.connection().await);
    }
    if lacks_functions(
        &mut connections[0],
        "workflows::quota::the_function_limiter_admits_exactly_its_limit_on_a_cluster",
    )
    .await
    {
        return;
    }
    burst(&connections, "quota:{tenant-b}:api").await;
}

async fn burst<C>(connections: &[C], counter: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        let mut tasks = tokio::task::JoinSet::new();
        for request in 0..REQUESTS {
            let mut connection = connections[request % connections.len()].clone();
            tasks.spawn(async move {
                quota_lib::fixed_window_allow(&mut connection, counter, LIMIT, WINDOW_MS).await
            });
        }
        let mut admitted = Vec::new();
        let mut denied = 0;
        while let Some(outcome) = tasks.join_next().await {
            match outcome.expect("task").expect("call") {
                Decision::Allowed { count, .. } => admitted.push(count),
                Decision::Denied { count, .. } => {
                    assert_eq!(count, LIMIT);
                    denied += 1;
                }
            }
        }
        admitted.sort_unstable();
        assert_eq!(
            admitted,
            (1..=LIMIT).collect::<Vec<_>>(),
            "each count admitted once"
        );
        assert_eq!(denied, REQUESTS - LIMIT as usize);
        let mut connection = connections[0].clone();
        let peeked = quota_lib::quota_peek(&mut connection, counter)
            .await
            .expect("peek");
        assert_eq!(peeked, Some(LIMIT));
    })
    .await
    .expect("the burst did not finish within 30 s");
}
