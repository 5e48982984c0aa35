//! Calls stay correct when the server loses its script cache: a restart of
//! a standalone server, and a failover in a cluster (the promoted replica
//! never received the script: scripts replicate by their effects).

use std::time::Duration;

use redis_script::cluster::key_slot;
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::transfer;

/// Bounded retry of a call while a connection re-establishes itself.
const ATTEMPTS: usize = 50;
const PAUSE: Duration = Duration::from_millis(100);

#[tokio::test]
async fn standalone_restart_is_handled_by_the_noscript_fallback() {
    let mut server = RedisServer::start();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("connection manager");
    let () = redis::cmd("SET")
        .arg("{r}:a")
        .arg(5)
        .query_async(&mut manager)
        .await
        .expect("SET");
    transfer(&mut manager, "{r}:a", "{r}:b", 1)
        .await
        .expect("warm the cache");

    server.restart();
    // Persistence is off: the data and the script cache are gone.
    let mut outcome = None;
    for _ in 0..ATTEMPTS {
        let () = match redis::cmd("SET")
            .arg("{r}:a")
            .arg(5)
            .query_async(&mut manager)
            .await
        {
            Ok(()) => (),
            Err(_) => {
                tokio::time::sleep(PAUSE).await;
                continue;
            }
        };
        server.reset_stats();
        outcome = Some(transfer(&mut manager, "{r}:a", "{r}:b", 2).await);
        break;
    }
    let balances = outcome
        .expect("the connection manager reconnected")
        .expect("the call after a restart succeeds");
    assert_eq!(balances, (3, 2));
    assert_eq!((server.calls("evalsha"), server.calls("eval")), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_is_handled_by_the_noscript_fallback() {
    let mut cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    let (from, to) = ("{failover}:from", "{failover}:to");
    let () = redis::cmd("SET")
        .arg(from)
        .arg(10)
        .query_async(&mut connection)
        .await
        .expect("SET");
    transfer(&mut connection, from, to, 1)
        .await
        .expect("warm the cache");

    let old_primary = cluster.stop_primary_of_slot(key_slot(from.as_bytes()));
    cluster.wait_until_healthy();
    let new_primary = cluster.node_for_slot(key_slot(from.as_bytes()));
    assert_ne!(new_primary.port(), old_primary, "a replica took over");
    new_primary.reset_stats();

    let mut outcome = None;
    for _ in 0..ATTEMPTS {
        match transfer(&mut connection, from, to, 1).await {
            Err(error)
                if !error.may_have_executed()
                    || matches!(error, redis_script::Error::Connection { .. }) =>
            {
                tokio::time::sleep(PAUSE).await;
            }
            other => {
                outcome = Some(other);
                break;
            }
        }
    }
    let balances = outcome
        .expect("the cluster connection found the new primary")
        .expect("the call after a failover succeeds");
    // The replica had the data (replicated) but not the script.
    assert!(
        balances.0 <= 8 && balances.0 + balances.1 == 10,
        "{balances:?}"
    );
    assert!(
        new_primary.calls("eval") >= 1,
        "the cold path ran on the new primary"
    );
}
