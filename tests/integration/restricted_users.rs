//! A user whose ACL allows calling scripts and functions but not loading
//! them (`-eval -script -function`), as an application user after a deploy
//! by another: a cache miss ends with `Error::NotDeployed`, which names
//! the script, with no `EVAL` or `FUNCTION LOAD` sent when the call says
//! `without_loading()`, and with one, refused, when it does not (the
//! script's later calls then send none); once an administrator has loaded
//! the script or deployed the library, the same user's calls run.

use std::collections::BTreeMap;

use redis_script::{Error, OnConflict, preload, redis_library, redis_script};
use redis_script_test::{CommandStat, RedisServer, parse_commandstats};

#[redis_script(path = "lua/acl/count_visit.lua", keys = 1)]
async fn count_visit(counter: &str) -> i64;

#[redis_library(path = "lua/acl/visits_lib.lua")]
mod visits_lib {
    #[function(keys = 1)]
    pub async fn count_page_visit(counter: &str) -> i64;
}

/// The application user's rules: every command but the ones that load.
const APPLICATION_USER: [&str; 9] = [
    "application",
    "on",
    ">application-password",
    "~*",
    "+@all",
    "-eval",
    "-eval_ro",
    "-script",
    "-function",
];

/// `INFO commandstats`, as the administrator reads it.
async fn command_stats(
    administrator: &mut redis::aio::MultiplexedConnection,
) -> BTreeMap<String, CommandStat> {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(administrator)
        .await
        .expect("INFO commandstats");
    parse_commandstats(&text)
}

/// How many times `command` was sent, run or refused.
fn sent(stats: &BTreeMap<String, CommandStat>, command: &str) -> u64 {
    stats
        .get(command)
        .map_or(0, |stat| stat.calls + stat.rejected_calls)
}

#[tokio::test]
async fn an_application_user_that_may_not_load_runs_what_an_administrator_deployed() {
    let server = RedisServer::start();
    let mut administrator = server.connection().await;
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(&APPLICATION_USER[..])
        .query_async(&mut administrator)
        .await
        .expect("ACL SETUSER");
    let application = redis::Client::open(format!(
        "redis://application:application-password@{}/",
        server.addr()
    ))
    .expect("client");
    let mut application = application
        .get_multiplexed_async_connection()
        .await
        .expect("the application user's connection");
    let counter = "visits:{home}";

    // Asked not to load: no EVAL at all.
    let not_loading = count_visit::call(counter)
        .without_loading()
        .invoke(&mut application)
        .await;
    match &not_loading {
        Err(error @ Error::NotDeployed { sha1, refusal, .. }) => {
            assert_eq!(*sha1, count_visit::SCRIPT.sha1());
            assert_eq!(*refusal, None);
            assert!(!error.may_have_executed());
            assert!(
                error.to_string().contains("redis_script::preload"),
                "{error}"
            );
        }
        other => panic!("expected NotDeployed, got {other:?}"),
    }
    assert_eq!(sent(&command_stats(&mut administrator).await, "eval"), 0);

    // Not asked: one EVAL, refused, then none for the script's later calls.
    for attempt in 0..3 {
        match count_visit(&mut application, counter).await {
            Err(Error::NotDeployed { refusal, .. }) if attempt == 0 => {
                let refusal = refusal.unwrap_or_default();
                assert!(refusal.starts_with("NOPERM"), "{refusal}");
            }
            Err(Error::NotDeployed { refusal: None, .. }) => {}
            other => panic!("expected NotDeployed (attempt {attempt}), got {other:?}"),
        }
    }
    let stats = command_stats(&mut administrator).await;
    assert_eq!(sent(&stats, "eval"), 1, "{stats:?}");
    let exists: bool = redis::cmd("EXISTS")
        .arg(counter)
        .query_async(&mut administrator)
        .await
        .expect("EXISTS");
    assert!(!exists, "nothing ran");

    // Deployed by the administrator, the same calls run.
    preload(&mut administrator, &[&count_visit::SCRIPT])
        .await
        .expect("preload");
    assert_eq!(
        count_visit(&mut application, counter).await.expect("call"),
        1
    );
    assert_eq!(
        count_visit::call(counter)
            .without_loading()
            .invoke(&mut application)
            .await
            .expect("call"),
        2
    );

    // A function whose library is not loaded: FUNCTION LOAD is refused.
    match visits_lib::count_page_visit(&mut application, counter).await {
        Err(Error::NotDeployed {
            library: Some("visits_lib"),
            refusal: Some(refusal),
            ..
        }) => assert!(refusal.starts_with("NOPERM"), "{refusal}"),
        other => panic!("expected NotDeployed for the library, got {other:?}"),
    }
    let loads_before = sent(&command_stats(&mut administrator).await, "function|load");
    assert_eq!(loads_before, 1, "one FUNCTION LOAD, refused");
    assert!(matches!(
        visits_lib::count_page_visit(&mut application, counter).await,
        Err(Error::NotDeployed { refusal: None, .. })
    ));
    assert_eq!(
        sent(&command_stats(&mut administrator).await, "function|load"),
        loads_before,
        "no second FUNCTION LOAD"
    );
    visits_lib::LIBRARY
        .deploy(&mut administrator, OnConflict::Refuse)
        .await
        .expect("deploy");
    assert_eq!(
        visits_lib::count_page_visit(&mut application, counter)
            .await
            .expect("call"),
        3
    );
    let stats = command_stats(&mut administrator).await;
    assert_eq!(sent(&stats, "eval"), 1, "{stats:?}");
}
