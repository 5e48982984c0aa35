//! The Lua-engine advisories against a live server: `preload` and
//! `Library::deploy` learn the server's release from `INFO server`, report
//! it with its advisories (`Preloaded`, `Deployment`, and per node in the
//! cluster reports), and a release the guide's table lists as exposed is
//! named in one `tracing` warning, once per server. A user without
//! permission for `INFO` gets no report of the server, and no error.

use redis_script::{
    LuaAdvisory, OnConflict, ServerFamily, ServerVersion, cluster, lua_advisories, preload,
    preload_blocking,
};
use redis_script_test::{RedisCluster, RedisServer};
use redis_script_tests::release_lock;

use crate::functions::quota_lib;
use crate::releases::{before_redis_7, lacks_functions_blocking};
use crate::telemetry::Warnings;

/// The release `server` runs, read as the runtime reads it, and the
/// advisories the table gives it; asserted against what the guide's table
/// says of the releases the tests run on.
fn release_and_advisories(server: &RedisServer) -> (ServerVersion, Vec<LuaAdvisory>) {
    let info: String = server
        .info("server")
        .iter()
        .map(|(name, value)| format!("{name}:{value}\r\n"))
        .collect();
    let version = ServerVersion::from_info(&info).expect("INFO server names the release");
    let advisories = lua_advisories(version);
    let ids: Vec<&str> = advisories.iter().map(|advisory| advisory.id).collect();
    let exposed = match (version.family, version.release) {
        // Redis 6.0 and 7.0 have no fixed release; 6.2.5 predates 6.2.20's
        // fixes and 8.0.2 8.0.4's.
        (ServerFamily::Redis, (6 | 7, 0, _) | (6, 2, 5) | (8, 0, 2)) => Some(true),
        // Redis 8.6.3 and Valkey 8.1.8 and 9.1.2 carry every fix the table
        // knows of.
        (ServerFamily::Redis, (8, 6, 3)) | (ServerFamily::Valkey, (8, 1, 8) | (9, 1, 2)) => {
            Some(false)
        }
        _ => None,
    };
    match exposed {
        Some(true) => assert!(ids.contains(&"CVE-2025-49844"), "{version:?}: {ids:?}"),
        Some(false) => assert!(ids.is_empty(), "{version:?}: {ids:?}"),
        None => {}
    }
    (version, advisories)
}

#[test]
fn an_exposed_release_is_named_once_per_server() {
    let server = RedisServer::start();
    let (version, advisories) = release_and_advisories(&server);
    let expected: Vec<&str> = advisories.iter().map(|advisory| advisory.id).collect();

    let warnings = Warnings::capture();
    let mut connection = server.client().get_connection().expect("a connection");
    let mut preloads = Vec::new();
    for _ in 0..2 {
        preloads
            .push(preload_blocking(&mut connection, &[&release_lock::SCRIPT]).expect("preload"));
    }
    // Every preload reports the server, warned or not.
    for preloaded in &preloads {
        assert_eq!(preloaded.server, Some(version));
        assert_eq!(preloaded.advisories, advisories);
    }
    let named: Vec<String> = warnings
        .taken()
        .into_iter()
        .filter(|message| message.contains("Lua-engine vulnerabilities"))
        .collect();
    if expected.is_empty() {
        assert!(named.is_empty(), "{version:?}: {named:?}");
    } else {
        assert_eq!(
            named.len(),
            1,
            "once per server, not per preload: {named:?}"
        );
        for id in &expected {
            assert!(named[0].contains(id), "{id} missing from {}", named[0]);
        }
    }
}

/// `Library::deploy` reports the server and its advisories as `preload`
/// does (where the server has Functions).
#[test]
fn a_deploy_reports_the_server_and_its_advisories() {
    let server = RedisServer::start();
    let (version, advisories) = release_and_advisories(&server);
    let mut connection = server.client().get_connection().expect("a connection");
    if lacks_functions_blocking(
        &mut connection,
        "lua_advisories::a_deploy_reports_the_server_and_its_advisories",
    ) {
        return;
    }
    for _ in 0..2 {
        let deployment = quota_lib::LIBRARY
            .deploy_blocking(&mut connection, OnConflict::Refuse)
            .expect("deploy");
        assert_eq!(deployment.server, Some(version));
        assert_eq!(deployment.advisories, advisories);
    }
}

/// A deploy user allowed `SCRIPT LOAD` (and `FUNCTION LOAD`) but not
/// `INFO`: the preload and the deploy succeed, and report no server.
#[tokio::test]
async fn without_info_permission_the_report_has_no_server() {
    let server = RedisServer::start();
    let mut administrator = server.connection().await;
    let functions = !before_redis_7();
    let mut rules = vec![
        "SETUSER",
        "loader",
        "on",
        ">loader-password",
        "+script|load",
    ];
    if functions {
        rules.extend(["+function|load", "+function|list"]);
    }
    let () = redis::cmd("ACL")
        .arg(&rules)
        .query_async(&mut administrator)
        .await
        .expect("ACL SETUSER");
    let mut loader = server.connection_as("loader", "loader-password").await;
    let refused: redis::RedisResult<String> = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut loader)
        .await;
    assert!(refused.is_err(), "INFO is refused: {refused:?}");

    let preloaded = preload(&mut loader, &[&release_lock::SCRIPT])
        .await
        .expect("the preload succeeds");
    assert_eq!((preloaded.server, preloaded.advisories.len()), (None, 0));
    if functions {
        let deployment = quota_lib::LIBRARY
            .deploy(&mut loader, OnConflict::Refuse)
            .await
            .expect("the deploy succeeds");
        assert_eq!((deployment.server, deployment.advisories.len()), (None, 0));
    }
}

/// On a cluster, the preload reports every node's release and advisories
/// (in the same round trip as its loads) and the deploy every primary's.
#[tokio::test]
async fn the_cluster_reports_name_each_node_s_release() {
    let cluster = RedisCluster::start(3, 1);
    let (version, advisories) = release_and_advisories(&cluster.nodes()[0]);
    let mut connection = cluster.connection().await;
    let report = cluster::preload(&mut connection, &[&release_lock::SCRIPT])
        .await
        .expect("preload on the cluster");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.servers.len(), 6, "every node: {report:?}");
    for node in cluster.nodes() {
        let seen = report.server(&node.addr()).expect("the node's release");
        assert_eq!((seen.server, &seen.advisories), (version, &advisories));
    }
    assert_eq!(
        report.exposed().count(),
        if advisories.is_empty() { 0 } else { 6 }
    );

    if before_redis_7() {
        // No Functions: `releases.rs` proves the deploy's error.
        return;
    }
    let report = cluster::deploy(&mut connection, &[&quota_lib::LIBRARY], OnConflict::Refuse)
        .await
        .expect("deploy on the cluster");
    assert!(report.is_complete(), "{report:?}");
    let primaries = cluster.primaries();
    assert_eq!(report.servers.len(), primaries.len(), "{report:?}");
    for primary in primaries {
        let seen = report
            .server(&primary.addr())
            .expect("the primary's release");
        assert_eq!((seen.server, &seen.advisories), (version, &advisories));
    }
}
