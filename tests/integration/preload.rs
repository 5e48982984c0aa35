//! Preloading makes the first call warm: no EVAL, on every node.

use redis_script::{ServerFeature, cluster, preload};
use redis_script_test::{RedisCluster, RedisServer, Stats};
use redis_script_tests::faults::shebang_log_call;
use redis_script_tests::{release_lock, transfer};

use crate::releases::{assert_unsupported, before_redis_7};

/// How many `SCRIPT LOAD`s `stats` counted: Redis 6.x counts every
/// `SCRIPT` subcommand under `script` (the tests send no other here).
fn script_loads(stats: &dyn Stats) -> u64 {
    if before_redis_7() {
        stats.calls("script")
    } else {
        stats.calls("script|load")
    }
}

#[tokio::test]
async fn standalone_preload_makes_the_first_call_warm() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    server.reset_stats();
    preload(&mut connection, &[&release_lock::SCRIPT, &transfer::SCRIPT])
        .await
        .expect("preload");
    assert_eq!(script_loads(&server), 2);

    assert_eq!(
        release_lock(&mut connection, "lock:{p}", "t")
            .await
            .expect("call"),
        0
    );
    assert_eq!((server.calls("evalsha"), server.calls("eval")), (1, 0));
}

#[tokio::test]
async fn cluster_preload_loads_every_node_in_one_round_trip_each() {
    let cluster = RedisCluster::start(3, 1);
    let mut connection = cluster.connection().await;
    cluster.script_flush();
    cluster.reset_stats();
    let report = cluster::preload(&mut connection, &[&release_lock::SCRIPT, &transfer::SCRIPT])
        .await
        .expect("preload on the cluster");
    assert_eq!(
        report.outcomes.len(),
        12,
        "2 scripts on 3 primaries and 3 replicas"
    );
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.succeeded().count(), 12);
    // Redis 6.x also passes each primary's SCRIPT LOAD on to its replica:
    // 6 more, one per script and replica.
    let loads = if before_redis_7() { 18 } else { 12 };
    assert_eq!(script_loads(&cluster), loads);
    for node in cluster.nodes() {
        let mut direct = node.client().get_connection().expect("direct connection");
        let cached: Vec<bool> = redis::cmd("SCRIPT")
            .arg("EXISTS")
            .arg(release_lock::SCRIPT.sha1())
            .arg(transfer::SCRIPT.sha1())
            .query(&mut direct)
            .expect("SCRIPT EXISTS");
        assert_eq!(cached, [true, true], "node {}", node.addr());
        for name in [release_lock::SCRIPT.name(), transfer::SCRIPT.name()] {
            assert!(
                matches!(report.outcome(&node.addr(), name), Some(Ok(()))),
                "{name} on {}: {report:?}",
                node.addr()
            );
        }
    }
    for tag in ["a", "b", "c", "d", "e", "f"] {
        release_lock(&mut connection, &format!("lock:{{{tag}}}"), "t")
            .await
            .expect("call");
    }
    assert_eq!((cluster.calls("evalsha"), cluster.calls("eval")), (6, 0));
}

/// A script whose first line is `#!lua` preloads where the server has
/// script flags; Redis 6.x cannot compile that line, and the preload says
/// the server lacks them.
#[tokio::test]
async fn a_script_with_a_flags_line_preloads_where_the_server_has_flags() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let preloaded = preload(&mut connection, &[&shebang_log_call::SCRIPT]).await;
    if before_redis_7() {
        assert_unsupported("preload", preloaded, ServerFeature::ScriptFlags);
    } else {
        preloaded.expect("preload");
    }
}
