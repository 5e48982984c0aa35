//! Redis Functions (`tests/lua/functions/quota_lib.lua`): typed `FCALL`/`FCALL_RO` calls,
//! the cold path that loads the library in the call's second round trip,
//! conflicts with other libraries, batches, deploys with their per-node
//! reports, failover and blocking calls, on a standalone server and on a
//! cluster.

use std::time::{Duration, Instant};

use redis::Value;
use redis::aio::ConnectionLike;
use redis_script::cluster::{self, key_slot};
use redis_script::{Batch, Deployed, Error, OnConflict, redis_library};
use redis_script_test::patience;
use redis_script_test::{CountingConnection, RedisCluster, RedisServer, Stats};

/// The library under test (a variant of the workflow's `lua/quota_lib.lua`
/// with a variadic read-only function).
#[redis_library(path = "lua/functions/quota_lib.lua")]
pub(crate) mod quota_lib {
    #[function(keys = 1)]
    pub async fn fixed_window_allow(key: &str, limit: u32, window: u64) -> (String, i64);

    #[function(keys = 1)]
    pub async fn quota_peek(windows: &[&str]) -> Vec<i64>;
}

use quota_lib::{LIBRARY, fixed_window_allow, quota_peek};
use redis_script_tests::get;

use crate::releases::{lacks_functions, lacks_functions_blocking};

/// Another version of `quota_lib`: it registers neither declared function.
const OLD_VERSION: &str = "#!lua name=quota_lib\nredis.register_function('quota_old', function(keys, args) return 0 end)\n";

/// Another library that registers `quota_peek` too.
const LEGACY: &str = "#!lua name=legacy_quota\nredis.register_function{function_name = 'quota_peek', callback = function(keys, args) return {} end, flags = {'no-writes'}}\n";

/// The line of `tests/lua/functions/quota_lib.lua` with `redis.call('INCR', keys[1])`.
const INCR_LINE: u32 = 30;

#[test]
fn the_library_constant_matches_its_file() {
    assert_eq!(
        sha1_smol::Sha1::from(LIBRARY.source()).digest().to_string(),
        LIBRARY.sha1()
    );
    assert_eq!(
        LIBRARY.source().lines().nth(INCR_LINE as usize - 1),
        Some("  local count = redis.call('INCR', keys[1])")
    );
    assert_eq!(
        fixed_window_allow::SCRIPT.library().map(|l| l.name()),
        Some("quota_lib")
    );
    assert_eq!(fixed_window_allow::SCRIPT.name(), "fixed_window_allow");
}

/// A direct, synchronous connection to one server, for setting up and
/// inspecting it.
fn direct(node: &RedisServer) -> redis::Connection {
    node.client()
        .get_connection()
        .unwrap_or_else(|error| panic!("connection to {}: {error}", node.addr()))
}

fn function_flush(node: &RedisServer) {
    let () = redis::cmd("FUNCTION")
        .arg("FLUSH")
        .query(&mut direct(node))
        .unwrap_or_else(|error| panic!("FUNCTION FLUSH on {}: {error}", node.addr()));
}

fn function_load(node: &RedisServer, code: &str) {
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(code)
        .query(&mut direct(node))
        .unwrap_or_else(|error| panic!("FUNCTION LOAD on {}: {error}", node.addr()));
}

/// The code of the library `name` on `node`, as `FUNCTION LIST` shows it.
fn listed_code(node: &RedisServer, name: &str) -> Option<String> {
    let libraries: Vec<Vec<Value>> = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(name)
        .arg("WITHCODE")
        .query(&mut direct(node))
        .unwrap_or_else(|error| panic!("FUNCTION LIST on {}: {error}", node.addr()));
    libraries.into_iter().find_map(|fields| {
        let text = |wanted: &str| {
            fields
                .chunks(2)
                .find(|pair| {
                    redis::from_redis_value_ref::<String>(&pair[0])
                        .ok()
                        .as_deref()
                        == Some(wanted)
                })
                .and_then(|pair| redis::from_redis_value_ref::<String>(&pair[1]).ok())
        };
        (text("library_name").as_deref() == Some(name))
            .then(|| text("library_code"))
            .flatten()
    })
}

/// Waits (at most 10 s) until every replica of `cluster` holds `code` as
/// library `name`: libraries reach replicas by replication.
fn wait_for_replicas(cluster: &RedisCluster, name: &str, code: &str) {
    let began = Instant::now();
    loop {
        let missing: Vec<String> = cluster
            .replicas()
            .into_iter()
            .filter(|replica| listed_code(replica, name).as_deref() != Some(code))
            .map(RedisServer::addr)
            .collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "replicas without library {name}: {missing:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `(fcall, fcall_ro, function|load)` calls counted by `stats`.
fn function_calls(stats: &dyn Stats) -> (u64, u64, u64) {
    (
        stats.calls("fcall"),
        stats.calls("fcall_ro"),
        stats.calls("function|load"),
    )
}

/// The same counts summed over the cluster's primaries: replicas count the
/// `FUNCTION LOAD`s their primary replicates to them.
fn primary_function_calls(cluster: &RedisCluster) -> (u64, u64, u64) {
    cluster
        .primaries()
        .into_iter()
        .map(|primary| function_calls(primary))
        .fold((0, 0, 0), |sum, calls| {
            (sum.0 + calls.0, sum.1 + calls.1, sum.2 + calls.2)
        })
}

fn allowed(count: i64) -> (String, i64) {
    ("ALLOWED".to_owned(), count)
}

#[tokio::test]
async fn typed_calls_use_fcall_and_no_writes_calls_fcall_ro() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::typed_calls_use_fcall_and_no_writes_calls_fcall_ro",
    )
    .await
    {
        return;
    }
    let mut connection = server.connection().await;
    LIBRARY
        .deploy(&mut connection, OnConflict::Refuse)
        .await
        .expect("deploy");
    server.reset_stats();

    let key = "quota:{t}:api";
    for count in 1..=2 {
        let reply = fixed_window_allow(&mut connection, key, 2, 60)
            .await
            .expect("allowed");
        assert_eq!(reply, allowed(count));
    }
    let reply = fixed_window_allow(&mut connection, key, 2, 60)
        .await
        .expect("denied");
    assert_eq!(reply, ("DENIED".to_owned(), 3));
    let ttl: i64 = redis::cmd("TTL")
        .arg(key)
        .query_async(&mut connection)
        .await
        .expect("TTL");
    assert!((1..=60).contains(&ttl), "the window expires: TTL {ttl}");

    let counts = quota_peek(&mut connection, &[key, "quota:{t}:other"])
        .await
        .expect("peek");
    assert_eq!(counts, [3, 0]);
    assert_eq!(
        function_calls(&server),
        (3, 1, 0),
        "(fcall, fcall_ro, function|load): warm calls, the no-writes one as FCALL_RO"
    );
}

#[tokio::test]
async fn cold_call_loads_the_library_in_its_second_round_trip() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::cold_call_loads_the_library_in_its_second_round_trip",
    )
    .await
    {
        return;
    }
    let mut connection = CountingConnection::new(server.connection().await);
    server.reset_stats();

    // A writing function: FCALL, then [FUNCTION LOAD, FCALL].
    let reply = fixed_window_allow(&mut connection, "quota:{c}", 5, 60)
        .await
        .expect("cold call");
    assert_eq!(reply, allowed(1));
    assert_eq!(connection.round_trips(), 2, "cold: two round trips");
    assert_eq!(function_calls(&server), (2, 0, 1));
    assert_eq!(
        listed_code(&server, "quota_lib").as_deref(),
        Some(LIBRARY.source())
    );

    let reply = fixed_window_allow(&mut connection, "quota:{c}", 5, 60)
        .await
        .expect("warm call");
    assert_eq!(reply, allowed(2));
    assert_eq!(connection.round_trips(), 3, "warm: one round trip");
    assert_eq!(function_calls(&server), (3, 0, 1));

    // A no-writes function after FUNCTION FLUSH: FCALL_RO, then the load
    // with a plain FCALL (a load goes to a primary).
    function_flush(&server);
    server.reset_stats();
    let counts = quota_peek(&mut connection, &["quota:{c}"])
        .await
        .expect("cold read-only call");
    assert_eq!(counts, [2]);
    assert_eq!(connection.round_trips(), 5);
    assert_eq!(function_calls(&server), (1, 1, 1));

    // The same through a ConnectionManager.
    function_flush(&server);
    server.reset_stats();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("connection manager");
    let reply = fixed_window_allow(&mut manager, "quota:{c}", 5, 60)
        .await
        .expect("cold call through a connection manager");
    assert_eq!(reply, allowed(3));
    assert_eq!(function_calls(&server), (2, 0, 1));
}

#[tokio::test]
async fn another_version_of_the_library_is_never_replaced_by_a_call() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::another_version_of_the_library_is_never_replaced_by_a_call",
    )
    .await
    {
        return;
    }
    function_load(&server, OLD_VERSION);
    let mut connection = CountingConnection::new(server.connection().await);
    server.reset_stats();

    let error = fixed_window_allow(&mut connection, "quota:{v}", 5, 60)
        .await
        .expect_err("another quota_lib is loaded");
    match &error {
        Error::LibraryConflict {
            operation: script,
            library,
            node,
            deployed_sha1,
            compiled_sha1,
            ..
        } => {
            assert_eq!((*script, *library), ("fixed_window_allow", "quota_lib"));
            assert_eq!((node, deployed_sha1), (&None, &None));
            assert_eq!(*compiled_sha1, LIBRARY.sha1());
        }
        other => panic!("expected LibraryConflict, got {other:?}"),
    }
    assert!(!error.may_have_executed());
    assert!(error.to_string().contains("OnConflict::Replace"), "{error}");
    assert_eq!(connection.round_trips(), 2, "never a third round trip");
    assert_eq!(function_calls(&server), (2, 0, 1));
    assert_eq!(
        listed_code(&server, "quota_lib").as_deref(),
        Some(OLD_VERSION)
    );
    assert_eq!(get(&mut connection, "quota:{v}").await, None, "nothing ran");
}

#[tokio::test]
async fn a_function_name_held_by_another_library_keeps_the_library_out() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::a_function_name_held_by_another_library_keeps_the_library_out",
    )
    .await
    {
        return;
    }
    function_load(&server, LEGACY);
    let mut connection = server.connection().await;

    let error = fixed_window_allow(&mut connection, "quota:{n}", 5, 60)
        .await
        .expect_err("legacy_quota registers quota_peek");
    match &error {
        Error::FunctionNameTaken {
            library, function, ..
        } => assert_eq!((*library, function.as_str()), ("quota_lib", "quota_peek")),
        other => panic!("expected FunctionNameTaken, got {other:?}"),
    }
    assert!(!error.may_have_executed());
    assert_eq!(get(&mut connection, "quota:{n}").await, None, "nothing ran");
    assert_eq!(listed_code(&server, "quota_lib"), None);

    // FCALL runs whichever library registers a name: a deploy finds out.
    let error = LIBRARY
        .deploy(&mut connection, OnConflict::Replace)
        .await
        .expect_err("the name is taken");
    assert!(
        matches!(&error, Error::FunctionNameTaken { function, .. } if function == "quota_peek"),
        "{error:?}"
    );
}

#[tokio::test]
async fn function_errors_are_typed_and_point_into_the_library_file() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::function_errors_are_typed_and_point_into_the_library_file",
    )
    .await
    {
        return;
    }
    let mut connection = server.connection().await;

    // Returned with redis.error_reply.
    let error = fixed_window_allow(&mut connection, "quota:{e}", 0, 60)
        .await
        .expect_err("invalid limit");
    assert!(
        matches!(&error, Error::Script { operation: "fixed_window_allow", code, location: None, .. } if code == "INVALID"),
        "{error:?}"
    );

    // Raised by a failing redis.call inside the function.
    let _: i64 = redis::cmd("LPUSH")
        .arg("quota:{e}")
        .arg("x")
        .query_async(&mut connection)
        .await
        .expect("LPUSH");
    let error = fixed_window_allow(&mut connection, "quota:{e}", 5, 60)
        .await
        .expect_err("INCR of a list");
    assert_eq!(error.code(), Some("WRONGTYPE"), "{error:?}");
    assert_eq!(
        error
            .location()
            .map(|location| (location.path, location.line)),
        Some(("lua/functions/quota_lib.lua", INCR_LINE)),
        "{error:?}"
    );
    assert!(error.may_have_executed());
    assert_eq!(
        error.to_string(),
        format!(
            "`fixed_window_allow` failed at lua/functions/quota_lib.lua:{INCR_LINE}: WRONGTYPE Operation against a key holding the wrong kind of value"
        )
    );
}

#[tokio::test]
async fn cross_slot_calls_are_refused_before_sending() {
    let server = RedisServer::start();
    let cluster = RedisCluster::start(3, 0);
    let mut standalone = server.connection().await;
    let mut clustered = cluster.connection().await;
    server.reset_stats();
    cluster.reset_stats();
    let keys = ["quota:a", "quota:b"];
    assert_ne!(key_slot(keys[0].as_bytes()), key_slot(keys[1].as_bytes()));

    for error in [
        quota_peek(&mut standalone, &keys).await,
        quota_peek(&mut clustered, &keys).await,
    ]
    .map(|result| result.expect_err("keys in two slots"))
    {
        assert!(
            matches!(&error, Error::CrossSlot { operation: "quota_peek", keys, .. } if keys.len() == 2),
            "{error:?}"
        );
        assert!(!error.may_have_executed());
    }
    assert_eq!(
        function_calls(&server),
        (0, 0, 0),
        "nothing reached the server"
    );
    assert_eq!(
        function_calls(&cluster),
        (0, 0, 0),
        "nothing reached the cluster"
    );
}

#[tokio::test]
async fn standalone_deploy_loads_leaves_refuses_and_replaces() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::standalone_deploy_loads_leaves_refuses_and_replaces",
    )
    .await
    {
        return;
    }
    let mut connection = server.connection().await;
    server.reset_stats();

    assert_eq!(
        LIBRARY
            .deploy(&mut connection, OnConflict::Refuse)
            .await
            .ok()
            .map(|deployment| deployment.deployed),
        Some(Deployed::Loaded)
    );
    assert_eq!(
        LIBRARY
            .deploy(&mut connection, OnConflict::Refuse)
            .await
            .ok()
            .map(|deployment| deployment.deployed),
        Some(Deployed::Unchanged)
    );
    assert_eq!(
        server.calls("function|load"),
        1,
        "an identical copy is left alone"
    );
    assert_eq!(server.calls("function|list"), 2);

    function_load(&server, OLD_VERSION);
    let old_sha1 = sha1_smol::Sha1::from(OLD_VERSION).digest().to_string();
    let error = LIBRARY
        .deploy(&mut connection, OnConflict::Refuse)
        .await
        .expect_err("an older version is loaded");
    match &error {
        Error::LibraryConflict {
            library,
            node,
            deployed_sha1,
            compiled_sha1,
            ..
        } => {
            assert_eq!(*library, "quota_lib");
            assert_eq!(node, &None);
            assert_eq!(deployed_sha1.as_deref(), Some(old_sha1.as_str()));
            assert_eq!(*compiled_sha1, LIBRARY.sha1());
        }
        other => panic!("expected LibraryConflict, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains(&old_sha1) && message.contains(LIBRARY.sha1()),
        "{message}"
    );
    assert_eq!(
        listed_code(&server, "quota_lib").as_deref(),
        Some(OLD_VERSION)
    );

    assert_eq!(
        LIBRARY
            .deploy(&mut connection, OnConflict::Replace)
            .await
            .ok()
            .map(|deployment| deployment.deployed),
        Some(Deployed::Replaced {
            previous_sha1: old_sha1
        })
    );
    assert_eq!(
        listed_code(&server, "quota_lib").as_deref(),
        Some(LIBRARY.source())
    );
    let reply = fixed_window_allow(&mut connection, "quota:{d}", 1, 60)
        .await
        .expect("the deployed version runs");
    assert_eq!(reply, allowed(1));
}

#[tokio::test]
async fn cluster_deploy_reports_every_primary() {
    let cluster = RedisCluster::start(3, 1);
    if lacks_functions(
        &mut cluster.connection().await,
        "functions::cluster_deploy_reports_every_primary",
    )
    .await
    {
        return;
    }
    let mut connection = cluster.connection().await;
    let primaries = cluster.primaries();
    let [current, older, without] = primaries.as_slice() else {
        panic!("three primaries: {primaries:?}");
    };
    function_load(current, LIBRARY.source());
    function_load(older, OLD_VERSION);
    let old_sha1 = sha1_smol::Sha1::from(OLD_VERSION).digest().to_string();

    let report = cluster::deploy(&mut connection, &[&LIBRARY], OnConflict::Refuse)
        .await
        .expect("the topology is readable");
    assert_eq!(report.outcomes.len(), 3, "{report:?}");
    assert!(!report.is_complete());
    assert_eq!(
        report
            .outcome(&current.addr(), "quota_lib")
            .and_then(|outcome| outcome.as_ref().ok()),
        Some(&Deployed::Unchanged)
    );
    assert_eq!(
        report
            .outcome(&without.addr(), "quota_lib")
            .and_then(|outcome| outcome.as_ref().ok()),
        Some(&Deployed::Loaded)
    );
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1, "{report:?}");
    assert_eq!(failed[0].address, older.addr());
    match &failed[0].outcome {
        Err(Error::LibraryConflict {
            node,
            deployed_sha1,
            ..
        }) => {
            assert_eq!(node.as_deref(), Some(older.addr().as_str()));
            assert_eq!(deployed_sha1.as_deref(), Some(old_sha1.as_str()));
        }
        other => panic!("expected LibraryConflict, got {other:?}"),
    }
    assert_eq!(
        listed_code(older, "quota_lib").as_deref(),
        Some(OLD_VERSION)
    );

    let report = cluster::deploy(&mut connection, &[&LIBRARY], OnConflict::Replace)
        .await
        .expect("the topology is readable");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(
        report
            .outcome(&older.addr(), "quota_lib")
            .and_then(|outcome| outcome.as_ref().ok()),
        Some(&Deployed::Replaced {
            previous_sha1: old_sha1
        })
    );
    wait_for_replicas(&cluster, "quota_lib", LIBRARY.source());
}

#[tokio::test]
async fn cluster_cold_call_loads_the_library_on_the_primary_of_its_slot() {
    let cluster = RedisCluster::start(3, 1);
    if lacks_functions(
        &mut cluster.connection().await,
        "functions::cluster_cold_call_loads_the_library_on_the_primary_of_its_slot",
    )
    .await
    {
        return;
    }
    let mut connection = cluster.connection().await;
    let report = cluster::deploy(&mut connection, &[&LIBRARY], OnConflict::Refuse)
        .await
        .expect("deploy");
    assert!(report.is_complete(), "{report:?}");

    let key = "quota:{cold}";
    let owner = cluster.node_for_slot(key_slot(key.as_bytes()));
    function_flush(owner);
    cluster.reset_stats();
    let reply = fixed_window_allow(&mut connection, key, 5, 60)
        .await
        .expect("cold call on the cluster");
    assert_eq!(reply, allowed(1));
    assert_eq!(
        function_calls(owner),
        (2, 0, 1),
        "FCALL, then [FUNCTION LOAD, FCALL]"
    );
    assert_eq!(
        primary_function_calls(&cluster),
        (2, 0, 1),
        "nothing on the other primaries"
    );
    assert_eq!(
        listed_code(owner, "quota_lib").as_deref(),
        Some(LIBRARY.source())
    );

    let reply = fixed_window_allow(&mut connection, key, 5, 60)
        .await
        .expect("warm call");
    assert_eq!(reply, allowed(2));
    assert_eq!(function_calls(owner), (3, 0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_keeps_the_library() {
    let mut cluster = RedisCluster::start(3, 1);
    if lacks_functions(
        &mut cluster.connection().await,
        "functions::cluster_failover_keeps_the_library",
    )
    .await
    {
        return;
    }
    let mut connection = cluster.connection().await;
    let report = cluster::deploy(&mut connection, &[&LIBRARY], OnConflict::Refuse)
        .await
        .expect("deploy");
    assert!(report.is_complete(), "{report:?}");
    wait_for_replicas(&cluster, "quota_lib", LIBRARY.source());

    let key = "quota:{failover}";
    fixed_window_allow(&mut connection, key, 100, 600)
        .await
        .expect("warm call");
    let old_primary = cluster.stop_primary_of_slot(key_slot(key.as_bytes()));
    cluster.wait_until_healthy();
    let new_primary = cluster.node_for_slot(key_slot(key.as_bytes()));
    assert_ne!(new_primary.port(), old_primary, "a replica took over");
    new_primary.reset_stats();

    let mut outcome = None;
    for _ in 0..50 {
        match fixed_window_allow(&mut connection, key, 100, 600).await {
            Err(error)
                if !error.may_have_executed() || matches!(error, Error::Connection { .. }) =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => {
                outcome = Some(other);
                break;
            }
        }
    }
    let (verdict, count) = outcome
        .expect("the cluster connection found the new primary")
        .expect("the call after a failover succeeds");
    assert_eq!(verdict, "ALLOWED");
    assert!(count >= 2, "the counter replicated: {count}");
    assert_eq!(
        new_primary.calls("function|load"),
        0,
        "the promoted replica had the library"
    );
}

/// Two calls of `fixed_window_allow`, a `quota_peek` and a plain command
/// in one batch, on a server without the library: one `FUNCTION LOAD`
/// ahead of the first call, replies in order.
async fn cold_batch<C: ConnectionLike>(connection: &mut C, mut batch: Batch) {
    let key = "quota:{batch}";
    let first = batch
        .add(fixed_window_allow::call(key, 5, 60))
        .expect("same slot");
    let second = batch
        .add(fixed_window_allow::call(key, 5, 60))
        .expect("same slot");
    let peeked = batch.add(quota_peek::call(&[key])).expect("same slot");
    let plain = batch.add_command::<i64>(redis::cmd("GET").arg(key).to_owned());
    assert_eq!(batch.len(), 4);
    let mut replies = batch.run(connection).await.expect("batch runs");
    let base = replies.take(first).expect("first call").1;
    assert_eq!(replies.take(second).expect("second call").1, base + 1);
    assert_eq!(replies.take(peeked).expect("peek"), [base + 1]);
    assert_eq!(replies.take(plain).expect("GET"), base + 1);
}

#[tokio::test]
async fn standalone_batches_load_each_library_once() {
    let server = RedisServer::start();
    if lacks_functions(
        &mut server.connection().await,
        "functions::standalone_batches_load_each_library_once",
    )
    .await
    {
        return;
    }
    let mut connection = server.connection().await;
    for batch in [Batch::pipeline(), Batch::transaction()] {
        function_flush(&server);
        server.reset_stats();
        cold_batch(&mut connection, batch).await;
        assert_eq!(
            function_calls(&server),
            (3, 0, 1),
            "(fcall, fcall_ro, function|load)"
        );
    }
    // Warm: the load answers "already exists", which the batch swallows.
    server.reset_stats();
    cold_batch(&mut connection, Batch::pipeline()).await;
    assert_eq!(function_calls(&server), (3, 0, 1));

    // Another version: the calls say so, the plain command still runs.
    function_load(&server, OLD_VERSION);
    let mut batch = Batch::transaction();
    let call = batch
        .add(fixed_window_allow::call("quota:{batch}", 5, 60))
        .expect("same slot");
    let plain = batch.add_command::<Option<i64>>(redis::cmd("GET").arg("quota:{batch}").to_owned());
    let mut replies = batch.run(&mut connection).await.expect("batch runs");
    let error = replies.take(call).expect_err("another quota_lib");
    assert!(matches!(error, Error::LibraryConflict { .. }), "{error:?}");
    assert!(!error.may_have_executed());
    assert_eq!(replies.take(plain).expect("GET"), Some(6));
    assert_eq!(
        listed_code(&server, "quota_lib").as_deref(),
        Some(OLD_VERSION)
    );
}

#[tokio::test]
async fn cluster_batches_load_each_library_once() {
    let cluster = RedisCluster::start(3, 1);
    if lacks_functions(
        &mut cluster.connection().await,
        "functions::cluster_batches_load_each_library_once",
    )
    .await
    {
        return;
    }
    let mut connection = cluster.connection().await;
    for batch in [Batch::pipeline(), Batch::transaction()] {
        for primary in cluster.primaries() {
            function_flush(primary);
        }
        cluster.reset_stats();
        cold_batch(&mut connection, batch).await;
        assert_eq!(
            primary_function_calls(&cluster),
            (3, 0, 1),
            "(fcall, fcall_ro, function|load) on the primaries"
        );
    }
}

#[test]
fn blocking_calls_batches_and_deploy() {
    let server = RedisServer::start();
    let mut connection = direct(&server);
    if lacks_functions_blocking(
        &mut connection,
        "functions::blocking_calls_batches_and_deploy",
    ) {
        return;
    }
    server.reset_stats();

    let reply = fixed_window_allow::call("quota:{b}", 5, 60)
        .invoke_blocking(&mut connection)
        .expect("cold call");
    assert_eq!(reply, allowed(1));
    assert_eq!(function_calls(&server), (2, 0, 1), "cold");
    let counts = quota_peek::call(&["quota:{b}"])
        .invoke_blocking(&mut connection)
        .expect("warm read-only call");
    assert_eq!(counts, [1]);
    assert_eq!(function_calls(&server), (2, 1, 1), "warm FCALL_RO");
    assert_eq!(
        LIBRARY
            .deploy_blocking(&mut connection, OnConflict::Refuse)
            .ok()
            .map(|deployment| deployment.deployed),
        Some(Deployed::Unchanged)
    );

    function_flush(&server);
    for mut batch in [Batch::pipeline(), Batch::transaction()] {
        let call = batch
            .add(fixed_window_allow::call("quota:{b}", 5, 60))
            .expect("same slot");
        let mut replies = batch.run_blocking(&mut connection).expect("batch runs");
        assert_eq!(replies.take(call).expect("call").0, "ALLOWED");
    }
}

#[test]
fn blocking_calls_on_the_synchronous_cluster_connection() {
    let cluster = RedisCluster::start(3, 1);
    let client = patience::cluster_builder(cluster.urls())
        .build()
        .expect("cluster client");
    let mut connection = client.get_connection().expect("cluster connection");
    if lacks_functions_blocking(
        &mut connection,
        "functions::blocking_calls_on_the_synchronous_cluster_connection",
    ) {
        return;
    }
    cluster.reset_stats();

    // No pipelining: FUNCTION LOAD on its own (to every primary), then FCALL.
    for count in 1..=2 {
        let reply = fixed_window_allow::call("quota:{s}", 5, 60)
            .invoke_blocking(&mut connection)
            .expect("call through the cluster connection");
        assert_eq!(reply, allowed(count));
    }
    assert_eq!(
        primary_function_calls(&cluster),
        (3, 0, 3),
        "cold, then warm"
    );

    for primary in cluster.primaries() {
        function_flush(primary);
    }
    for mut batch in [Batch::pipeline(), Batch::transaction()] {
        let call = batch
            .add(fixed_window_allow::call("quota:{s}", 5, 60))
            .expect("same slot");
        let peeked = batch
            .add(quota_peek::call(&["quota:{s}"]))
            .expect("same slot");
        let mut replies = batch.run_blocking(&mut connection).expect("batch runs");
        let (_, count) = replies.take(call).expect("call");
        assert_eq!(replies.take(peeked).expect("peek"), [count]);
    }
}
