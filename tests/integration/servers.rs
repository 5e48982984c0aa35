//! Which server the suite runs against (`REDIS_SCRIPT_TEST_SERVER`), and
//! where Redis and Valkey answer differently: the text after the `NOSCRIPT`
//! code. The cold path keys on the code only, so it works on both; the
//! cold-path costs are counted under the same `INFO commandstats` names.

use redis_script_examples::workflows::versioned::versioned_get;
use redis_script_test::{RedisCluster, RedisServer, ServerFlavor, Stats, server_flavor};
use redis_script_tests::transfer;

use crate::releases::before_redis_7;

/// A SHA1 no server has cached.
const UNKNOWN_SHA: &str = "0000000000000000000000000000000000000000";

/// The text after `NOSCRIPT` in the reply to `EVALSHA`/`EVALSHA_RO` of an
/// unknown script.
fn noscript_detail(flavor: ServerFlavor) -> &'static str {
    match flavor {
        ServerFlavor::Redis => "No matching script. Please use EVAL.",
        ServerFlavor::Valkey => "No matching script.",
    }
}

#[test]
fn the_suite_runs_against_the_selected_server() {
    let selected = server_flavor();
    let server = RedisServer::start();
    assert_eq!(
        server.flavor(),
        selected,
        "REDIS_SCRIPT_TEST_SERVER selects {selected}, but {} is a {} server: \
         REDIS_SERVER_BIN must name a {selected} executable",
        server.binary().display(),
        server.flavor()
    );
    let name = match selected {
        ServerFlavor::Redis => "redis_version",
        ServerFlavor::Valkey => "valkey_version",
    };
    assert_eq!(
        server.info("server")[name],
        server.version().to_string(),
        "{name}"
    );
    println!(
        "integration tests run against {} {} ({})",
        server.flavor(),
        server.version(),
        server.binary().display()
    );
}

#[tokio::test]
async fn noscript_text_differs_by_server_and_the_cold_path_handles_both() {
    let server = RedisServer::start();
    let expected = noscript_detail(server.flavor());
    let mut direct = server.client().get_connection().expect("connection");
    let without_read_only_commands = before_redis_7();
    for command in ["EVALSHA", "EVALSHA_RO"] {
        if without_read_only_commands && command == "EVALSHA_RO" {
            // Redis 6.x has no EVALSHA_RO, and names it in backquotes.
            let error = redis::cmd(command)
                .arg(UNKNOWN_SHA)
                .arg(0)
                .query::<redis::Value>(&mut direct)
                .expect_err("no EVALSHA_RO");
            assert!(
                error
                    .detail()
                    .is_some_and(|detail| detail.starts_with("unknown command `EVALSHA_RO`")),
                "{error}"
            );
            continue;
        }
        let error = redis::cmd(command)
            .arg(UNKNOWN_SHA)
            .arg(0)
            .query::<redis::Value>(&mut direct)
            .expect_err("an unknown SHA");
        assert_eq!(
            (error.code(), error.detail()),
            (Some("NOSCRIPT"), Some(expected)),
            "{command} on {} {}: {error}",
            server.flavor(),
            server.version()
        );
    }

    // A script that writes: EVALSHA, NOSCRIPT, EVAL.
    let mut connection = server.connection().await;
    let () = redis::cmd("SET")
        .arg("{n}:from")
        .arg(5)
        .query_async(&mut connection)
        .await
        .expect("SET");
    server.reset_stats();
    let balances = transfer(&mut connection, "{n}:from", "{n}:to", 2)
        .await
        .expect("cold call");
    assert_eq!(balances, (3, 2));
    // A read-only script: EVALSHA_RO, NOSCRIPT, EVAL_RO; on Redis 6.x an
    // unknown EVALSHA_RO (which commandstats does not count), then
    // EVALSHA, NOSCRIPT, EVAL.
    let missing = versioned_get::<String>(&mut connection, "{n}:doc")
        .await
        .expect("cold read-only call");
    assert!(missing.is_none(), "nothing is stored under {{n}}:doc");
    let counted: Vec<u64> = ["evalsha", "eval", "evalsha_ro", "eval_ro"]
        .iter()
        .map(|command| server.calls(command))
        .collect();
    let expected = if without_read_only_commands {
        [2, 2, 0, 0]
    } else {
        [1, 1, 1, 1]
    };
    assert_eq!(
        counted,
        expected,
        "(evalsha, eval, evalsha_ro, eval_ro) on {}",
        server.flavor()
    );
}

#[tokio::test]
async fn every_cluster_node_runs_the_selected_server() {
    let cluster = RedisCluster::start(3, 1);
    let selected = server_flavor();
    let first = &cluster.nodes()[0];
    for node in cluster.nodes() {
        assert_eq!(
            (node.flavor(), node.version()),
            (selected, first.version()),
            "{node:?}"
        );
    }
    // The cold path through a cluster client, on a node that answers with
    // its own NOSCRIPT text.
    let mut connection = cluster.connection().await;
    cluster.script_flush();
    let () = redis::cmd("SET")
        .arg("{c}:from")
        .arg(1)
        .query_async(&mut connection)
        .await
        .expect("SET");
    cluster.reset_stats();
    let balances = transfer(&mut connection, "{c}:from", "{c}:to", 1)
        .await
        .expect("cold call on the cluster");
    assert_eq!(balances, (0, 1));
    let on_primaries: Vec<(u64, u64)> = cluster
        .primaries()
        .iter()
        .map(|p| (p.calls("evalsha"), p.calls("eval")))
        .filter(|&calls| calls != (0, 0))
        .collect();
    assert_eq!(on_primaries, [(1, 1)], "one primary ran EVALSHA then EVAL");
}
