//! The workflows' scripts and library deployed by a user allowed only to
//! load them, then called by an application user allowed only to call:
//! every script is on the server under the SHA1 its calls send (also when
//! loaded from the sources written for a pipeline outside Rust), and the
//! calls send no `EVAL` and no `FUNCTION LOAD`.

use redis_script_examples::workflows::deploy::{
    LIBRARIES, SCRIPTS, deploy_all, manifest, write_sources,
};
use redis_script_examples::workflows::quota::quota_lib;
use redis_script_examples::workflows::rate_limit::rate_limit_fixed;
use redis_script_test::{RedisServer, parse_commandstats};

#[tokio::test]
async fn a_deploy_user_loads_what_an_application_user_then_only_calls() {
    let server = RedisServer::start();
    let mut administrator = server.connection().await;
    for rules in [
        &[
            "deployer",
            "on",
            ">deployer-password",
            "+script|load",
            "+function|load",
            "+function|list",
        ][..],
        &[
            "application",
            "on",
            ">application-password",
            "~*",
            "+@all",
            "-eval",
            "-eval_ro",
            "-script",
            "-function",
        ][..],
    ] {
        let () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(rules)
            .query_async(&mut administrator)
            .await
            .expect("ACL SETUSER");
    }
    let mut deployer = server.connection_as("deployer", "deployer-password").await;
    deploy_all(&mut deployer).await.expect("deploy");

    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(SCRIPTS.map(|script| script.sha1()).as_slice())
        .query_async(&mut administrator)
        .await
        .expect("SCRIPT EXISTS");
    assert_eq!(exists, [true; SCRIPTS.len()]);
    let listed: redis::Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(LIBRARIES[0].name())
        .query_async(&mut administrator)
        .await
        .expect("FUNCTION LIST");
    assert!(matches!(listed, redis::Value::Array(ref libraries) if libraries.len() == 1));
    assert_eq!(manifest().lines().count(), SCRIPTS.len() + LIBRARIES.len());

    // A pipeline outside Rust loads the written sources: each gets the
    // SHA1 the calls send.
    let directory = std::env::temp_dir().join(format!("deploy-{}", std::process::id()));
    write_sources(&directory).expect("write the sources");
    for script in SCRIPTS {
        let source = std::fs::read_to_string(directory.join(format!("{}.lua", script.name())))
            .expect("a written source");
        let sha1: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(source)
            .query_async(&mut deployer)
            .await
            .expect("SCRIPT LOAD");
        assert_eq!(sha1, script.sha1(), "{}", script.name());
    }
    std::fs::remove_dir_all(&directory).expect("remove the directory");

    let mut application = server
        .connection_as("application", "application-password")
        .await;
    rate_limit_fixed::call("rl:{deploy}", 10, 60_000)
        .without_loading()
        .invoke(&mut application)
        .await
        .expect("a deployed script");
    quota_lib::fixed_window_allow(&mut application, "quota:{deploy}", 10, 60_000)
        .await
        .expect("a deployed function");
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut administrator)
        .await
        .expect("INFO");
    let stats = parse_commandstats(&text);
    assert!(!stats.contains_key("eval"), "{stats:?}");
    // The one FUNCTION LOAD is the deployer's.
    assert_eq!(stats.get("function|load").map(|stat| stat.calls), Some(1));
}
