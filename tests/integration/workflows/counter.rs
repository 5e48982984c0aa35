//! WATCH/MULTI/EXEC versus Lua: 10 workers × 100 increments of one counter,
//! both ways; both end at exactly 1000, and every increment observed its own
//! value. The number of WATCH retries is printed, never asserted (it depends
//! on scheduling), and nothing is timed.

use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis_script::cluster::key_slot;
use redis_script_examples::workflows::counter::{counter_increment, increment_with_watch};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};

const WORKERS: usize = 10;
const INCREMENTS: usize = 100;
const TOTAL: i64 = (WORKERS * INCREMENTS) as i64;
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_and_lua_counters_both_reach_1000_on_a_standalone_server() {
    let db = TestDb::new();
    let mut own_connections = Vec::new();
    for _ in 0..WORKERS {
        own_connections.push(db.connection().await);
    }
    let shared = db.connection().await;
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        watch_workers(own_connections, "counter:{standalone}:watch").await;
        assert_counter(&shared, "counter:{standalone}:watch").await;
        lua_workers(&shared, "counter:{standalone}:lua").await;
        assert_counter(&shared, "counter:{standalone}:lua").await;
    })
    .await
    .expect("the counter scenarios did not finish within 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_and_lua_counters_both_reach_1000_on_a_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let watched = "counter:{cluster}:watch";
    // WATCH is connection state: each worker needs a connection of its own
    // to the primary that owns the key (a cluster connection multiplexes).
    let owner = cluster.node_for_slot(key_slot(watched.as_bytes()));
    let mut own_connections = Vec::new();
    for _ in 0..WORKERS {
        own_connections.push(owner.connection().await);
    }
    let shared = cluster.connection().await;
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        watch_workers(own_connections, watched).await;
        assert_counter(&shared, watched).await;
        lua_workers(&shared, "counter:{cluster}:lua").await;
        assert_counter(&shared, "counter:{cluster}:lua").await;
    })
    .await
    .expect("the counter scenarios did not finish within 30 s");
}

async fn watch_workers(connections: Vec<MultiplexedConnection>, counter: &'static str) {
    let workers: Vec<_> = connections
        .into_iter()
        .map(|mut connection| {
            tokio::spawn(async move {
                let (mut values, mut retries) = (Vec::new(), 0);
                for _ in 0..INCREMENTS {
                    let done = increment_with_watch(&mut connection, counter, 1)
                        .await
                        .unwrap_or_else(|error| panic!("WATCH increment failed: {error}"));
                    values.push(done.value);
                    retries += done.retries;
                }
                (values, retries)
            })
        })
        .collect();
    let (mut values, mut retries) = (Vec::new(), 0);
    for worker in workers {
        let (worker_values, worker_retries) = worker.await.expect("a WATCH worker panicked");
        values.extend(worker_values);
        retries += worker_retries;
    }
    values.sort_unstable();
    assert_eq!(
        values,
        (1..=TOTAL).collect::<Vec<_>>(),
        "each EXEC wrote its own value"
    );
    println!("WATCH/MULTI/EXEC: {WORKERS} workers × {INCREMENTS} increments, {retries} retries");
}

async fn lua_workers<C>(connection: &C, counter: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let mut connection = connection.clone();
            tokio::spawn(async move {
                let mut values = Vec::new();
                for _ in 0..INCREMENTS {
                    let value = counter_increment(&mut connection, counter, 1)
                        .await
                        .unwrap_or_else(|error| panic!("scripted increment failed: {error}"));
                    values.push(value);
                }
                values
            })
        })
        .collect();
    let mut values = Vec::new();
    for worker in workers {
        values.extend(worker.await.expect("a Lua worker panicked"));
    }
    values.sort_unstable();
    assert_eq!(
        values,
        (1..=TOTAL).collect::<Vec<_>>(),
        "each call added exactly 1"
    );
    println!("Lua script: {WORKERS} workers × {INCREMENTS} increments, no retries");
}

async fn assert_counter<C>(connection: &C, counter: &str)
where
    C: ConnectionLike + Clone,
{
    let mut connection = connection.clone();
    let stored: i64 = redis::cmd("GET")
        .arg(counter)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(stored, TOTAL, "{counter}");
}
