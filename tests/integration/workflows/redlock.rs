//! Redlock over 5 independent `redis-server`s: a majority (3) is needed and
//! enough; two clients never both hold the lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis_script_examples::workflows::redlock::Redlock;
use redis_script_test::RedisServer;
use redis_script_test::patience;
use tokio::time::timeout;

const NODES: usize = 5;
const TTL: Duration = Duration::from_secs(10);
const LIMIT: Duration = Duration::from_secs(40);

async fn start_nodes() -> (Vec<RedisServer>, Vec<MultiplexedConnection>) {
    let servers: Vec<RedisServer> = (0..NODES).map(|_| RedisServer::start()).collect();
    let mut connections = Vec::new();
    for server in &servers {
        connections.push(server.connection().await);
    }
    (servers, connections)
}

/// Generous per-node timeout: the test machine is busy with other tests.
fn client(nodes: &[MultiplexedConnection]) -> Redlock<MultiplexedConnection> {
    Redlock::new(nodes.to_vec()).node_timeout(Duration::from_millis(500))
}

async fn holders(servers: &[RedisServer], key: &str) -> Vec<Option<String>> {
    let mut tokens = Vec::new();
    for server in servers.iter().filter(|server| server.is_running()) {
        let mut connection = server.connection().await;
        let token: Option<String> = redis::cmd("GET")
            .arg(key)
            .query_async(&mut connection)
            .await
            .expect("GET");
        tokens.push(token);
    }
    tokens
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_majority_is_needed_and_enough() {
    let (mut servers, nodes) = start_nodes().await;
    let redlock = client(&nodes).retry_for(Duration::from_millis(300));
    let key = "redlock:{quorum}";
    assert_eq!(redlock.quorum(), 3);

    let guard = redlock
        .lock(key, TTL)
        .await
        .expect("lock")
        .expect("all nodes up");
    assert_eq!(guard.nodes, NODES);
    assert!(guard.is_valid());
    let rival = redlock.lock(key, TTL).await.expect("lock");
    assert_eq!(rival, None, "a held lock is not taken by a second client");
    assert!(
        holders(&servers, key)
            .await
            .iter()
            .all(|token| token.as_deref() == Some(guard.token.as_str())),
        "the refused rival's partial locks were undone"
    );
    assert_eq!(redlock.release(&guard).await, NODES);

    servers[0].stop();
    servers[1].stop();
    let guard = redlock
        .lock(key, TTL)
        .await
        .expect("lock")
        .expect("3 of 5 nodes up is a majority");
    assert_eq!(guard.nodes, 3);
    assert_eq!(redlock.release(&guard).await, 3);
    assert!(
        holders(&servers, key).await.iter().all(Option::is_none),
        "released on every node"
    );

    servers[2].stop();
    let refused = redlock.lock(key, TTL).await.expect("lock");
    assert_eq!(refused, None, "2 of 5 nodes is not a majority");
    assert!(
        holders(&servers, key).await.iter().all(Option::is_none),
        "a failed attempt leaves no lock behind"
    );
}

/// 6 clients (each its own `Redlock` over the same 5 nodes) take the lock 5
/// times each; a shared counter checks that no two are ever inside at once.
/// Then the same with 2 of the 5 nodes stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_never_both_hold_the_lock() {
    let (mut servers, nodes) = start_nodes().await;
    let all_up = contend(&nodes, "redlock:{contended}").await;
    servers[3].stop();
    servers[4].stop();
    let degraded = contend(&nodes, "redlock:{contended}").await;
    println!(
        "redlock contention: 30 locks with 5 nodes up ({all_up} lock() calls gave up after 2 s), 30 with 3 up ({degraded} gave up)"
    );
}

/// Runs the contention round; returns how many `lock` calls gave up.
async fn contend(nodes: &[MultiplexedConnection], key: &'static str) -> usize {
    const CLIENTS: usize = 6;
    const ROUNDS: usize = 5;
    let inside = Arc::new(AtomicUsize::new(0));
    let gave_up = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let redlock = client(nodes).retry_for(Duration::from_secs(2));
        let (inside, gave_up) = (inside.clone(), gave_up.clone());
        tasks.push(tokio::spawn(async move {
            let mut held = 0;
            while held < ROUNDS {
                let Some(guard) = redlock.lock(key, TTL).await.expect("lock") else {
                    gave_up.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let others = inside.fetch_add(1, Ordering::SeqCst);
                assert_eq!(others, 0, "two clients hold the lock at once");
                assert!(guard.is_valid(), "used within its validity");
                tokio::time::sleep(Duration::from_millis(2)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
                assert!(
                    redlock.release(&guard).await >= redlock.quorum(),
                    "released on a majority"
                );
                held += 1;
            }
        }));
    }
    for task in tasks {
        timeout(patience::scaled(LIMIT), task)
            .await
            .expect("client timed out")
            .expect("client panicked");
    }
    gave_up.load(Ordering::Relaxed)
}
