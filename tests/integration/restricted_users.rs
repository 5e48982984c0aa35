//! A user whose ACL allows calling scripts and functions but not loading
//! them (`-eval -script -function`), as an application user after a deploy
//! by another: a cache miss ends with `Error::NotDeployed`, which names
//! the script, with no `EVAL` or `FUNCTION LOAD` sent when the call says
//! `without_loading()`, and with one, refused, when it does not (the
//! script's later calls then send none); once an administrator has loaded
//! the script or deployed the library, the same user's calls run. The
//! deploy user and the application user hold only the rules the guide's
//! least-privilege page gives them.

use std::collections::BTreeMap;

use redis_script::{Batch, Error, OnConflict, preload, redis_library, redis_script};
use redis_script_test::{CommandStat, RedisServer, parse_commandstats};

use crate::releases::{before_redis_7, counted_refusals, lacks_functions};

#[redis_script(path = "lua/acl/count_visit.lua", keys = 1)]
async fn count_visit(counter: &str) -> i64;

#[redis_library(path = "lua/acl/visits_lib.lua")]
mod visits_lib {
    #[function(keys = 1)]
    pub async fn count_page_visit(counter: &str) -> i64;
}

#[redis_script(path = "lua/acl/count_download.lua", keys = 1)]
async fn count_download(counter: &str) -> i64;

#[redis_library(path = "lua/acl/downloads_lib.lua")]
mod downloads_lib {
    #[function(keys = 1)]
    pub async fn count_file_download(counter: &str) -> i64;
}

/// The deploy pipeline's user: it loads scripts and libraries, and has no
/// key and no other command.
const DEPLOY_USER: [&str; 6] = [
    "deployer",
    "on",
    ">deployer-password",
    "+script|load",
    "+function|load",
    "+function|list",
];

/// The application user's rules: the call commands, the one command the
/// scripts run, and its keys; no `EVAL`, `SCRIPT` or `FUNCTION`.
const APPLICATION_USER: [&str; 8] = [
    "application",
    "on",
    ">application-password",
    "~visits:*",
    "~downloads:*",
    "+evalsha",
    "+fcall",
    "+incr",
];

/// Creates the deploy user and the application user; on Redis 6.x, which
/// has no Functions (nor their ACL rules), without the rules for them.
async fn create_users(administrator: &mut redis::aio::MultiplexedConnection) {
    let without_functions = before_redis_7();
    for user in [&DEPLOY_USER[..], &APPLICATION_USER[..]] {
        let rules: Vec<&str> = user
            .iter()
            .copied()
            .filter(|rule| !(without_functions && (rule.contains("function") || *rule == "+fcall")))
            .collect();
        let () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(rules)
            .query_async(administrator)
            .await
            .expect("ACL SETUSER");
    }
}

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
    create_users(&mut administrator).await;
    let mut deployer = server.connection_as("deployer", "deployer-password").await;
    let mut application = server
        .connection_as("application", "application-password")
        .await;
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
    assert_eq!(sent(&stats, "eval"), counted_refusals(1), "{stats:?}");
    let exists: bool = redis::cmd("EXISTS")
        .arg(counter)
        .query_async(&mut administrator)
        .await
        .expect("EXISTS");
    assert!(!exists, "nothing ran");

    // Deployed by the deploy pipeline's user, the same calls run.
    preload(&mut deployer, &[&count_visit::SCRIPT])
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

    // Redis 6.x: no Functions, a call says so; otherwise a function whose
    // library is not loaded: FUNCTION LOAD is refused.
    if !lacks_functions(
        &mut administrator,
        "restricted_users::an_application_user_that_may_not_load_runs_what_an_administrator_deployed (its function part)",
    )
    .await
    {
            match visits_lib::count_page_visit(&mut application, counter).await {
            Err(Error::NotDeployed {
                library: Some("visits_lib"),
                refusal: Some(refusal),
                ..
            }) => assert!(refusal.starts_with("NOPERM"), "{refusal}"),
            other => panic!("expected NotDeployed for the library, got {other:?}"),
        }
        let loads_before = sent(&command_stats(&mut administrator).await, "function|load");
        assert_eq!(loads_before, counted_refusals(1), "one FUNCTION LOAD, refused");
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
            .deploy(&mut deployer, OnConflict::Refuse)
            .await
            .expect("deploy");
        assert_eq!(
            visits_lib::count_page_visit(&mut application, counter)
                .await
                .expect("call"),
            3
        );
    }
    let stats = command_stats(&mut administrator).await;
    assert_eq!(sent(&stats, "eval"), counted_refusals(1), "{stats:?}");

    // A key outside the user's patterns, passed in KEYS: refused before
    // the script runs.
    match count_visit(&mut application, "other:{home}").await {
        Err(error @ Error::Refused { .. }) => {
            assert_eq!(error.code(), Some("NOPERM"), "{error}");
            assert!(!error.may_have_executed());
        }
        other => panic!("expected NOPERM for the key, got {other:?}"),
    }

    // A command the script runs that the user may not: the script ran up
    // to it, and raised the server's refusal.
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("application")
        .arg("-incr")
        .query_async(&mut administrator)
        .await
        .expect("ACL SETUSER");
    match count_visit(&mut application, counter).await {
        Err(error @ Error::Script { raised: true, .. }) => {
            // `ERR The user executing the script can't run this command or
            // subcommand` (Redis 7.0), `ERR ACL failure in script: User
            // application has no permissions to run the 'incr' command`.
            assert_eq!(error.code(), Some("ERR"), "{error}");
            assert!(
                error
                    .message()
                    .is_some_and(|message| message.to_ascii_lowercase().contains("user")),
                "{error}"
            );
            assert_eq!(error.location().map(|location| location.line), Some(5));
            assert!(error.may_have_executed());
        }
        other => panic!("expected the script's refused command, got {other:?}"),
    }
}

/// A batch for the application user: asked not to load, a pipeline or a
/// transaction sends only `EVALSHA` and `FCALL`, and a call of what is not
/// deployed ends with `NotDeployed` while the batch's other commands run; a
/// pipeline not asked sends one refused `EVAL` and `FUNCTION LOAD`, and the
/// scripts' later batches none. Once deployed, the same batches run.
#[tokio::test]
async fn a_batch_of_a_user_that_may_not_load_loads_nothing() {
    let server = RedisServer::start();
    let mut administrator = server.connection().await;
    create_users(&mut administrator).await;
    // A transaction is sent as MULTI … EXEC.
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("application")
        .arg("+multi")
        .arg("+exec")
        .query_async(&mut administrator)
        .await
        .expect("ACL SETUSER");
    let mut deployer = server.connection_as("deployer", "deployer-password").await;
    let mut application = server
        .connection_as("application", "application-password")
        .await;
    let counter = "downloads:{report}";
    // Redis 6.x: no Functions, a call says so; the batches hold scripts only.
    let functions = !lacks_functions(
        &mut administrator,
        "restricted_users::a_batch_of_a_user_that_may_not_load_loads_nothing (its function calls)",
    )
    .await;

    for batch in [Batch::pipeline(), Batch::transaction()] {
        let mut batch = batch.without_loading();
        let script = batch.add(count_download::call(counter)).expect("add");
        let function = functions.then(|| {
            batch
                .add(downloads_lib::count_file_download::call(counter))
                .expect("add")
        });
        let length = batch.add_command::<u64>(redis::cmd("INCR").arg(counter).to_owned());
        let mut replies = batch.run(&mut application).await.expect("the batch runs");
        assert!(matches!(
            replies.take(script),
            Err(Error::NotDeployed {
                refusal: None,
                library: None,
                ..
            })
        ));
        if let Some(function) = function {
            assert!(matches!(
                replies.take(function),
                Err(Error::NotDeployed {
                    refusal: None,
                    library: Some("downloads_lib"),
                    ..
                })
            ));
        }
        assert!(replies.take(length).is_ok(), "the batch's command ran");
    }
    let stats = command_stats(&mut administrator).await;
    assert_eq!(sent(&stats, "eval"), 0, "{stats:?}");
    assert_eq!(sent(&stats, "function|load"), 0, "{stats:?}");

    // Not asked: the pipeline's EVAL and FUNCTION LOAD are refused, once.
    for attempt in 0..2 {
        let mut batch = Batch::pipeline();
        let script = batch.add(count_download::call(counter)).expect("add");
        let function = functions.then(|| {
            batch
                .add(downloads_lib::count_file_download::call(counter))
                .expect("add")
        });
        let mut replies = batch.run(&mut application).await.expect("the batch runs");
        let mut taken_replies = vec![(replies.take(script), None)];
        if let Some(function) = function {
            taken_replies.push((replies.take(function), Some("downloads_lib")));
        }
        for (taken, library) in taken_replies {
            match taken {
                Err(Error::NotDeployed {
                    refusal: Some(refusal),
                    library: found,
                    ..
                }) if attempt == 0 => {
                    assert!(refusal.starts_with("NOPERM"), "{refusal}");
                    assert_eq!(found, library);
                }
                Err(Error::NotDeployed { refusal: None, .. }) if attempt == 1 => {}
                other => panic!("attempt {attempt}: expected NotDeployed, got {other:?}"),
            }
        }
    }
    let stats = command_stats(&mut administrator).await;
    assert_eq!(sent(&stats, "eval"), counted_refusals(1), "{stats:?}");
    assert_eq!(
        sent(&stats, "function|load"),
        u64::from(functions),
        "{stats:?}"
    );

    // Deployed: the same batches run, with no load.
    preload(&mut deployer, &[&count_download::SCRIPT])
        .await
        .expect("preload");
    if functions {
        downloads_lib::LIBRARY
            .deploy(&mut deployer, OnConflict::Refuse)
            .await
            .expect("deploy");
    }
    let before: i64 = redis::cmd("GET")
        .arg(counter)
        .query_async(&mut administrator)
        .await
        .expect("GET");
    for batch in [Batch::pipeline().without_loading(), Batch::transaction()] {
        let mut batch = batch;
        let script = batch.add(count_download::call(counter)).expect("add");
        let function = functions.then(|| {
            batch
                .add(downloads_lib::count_file_download::call(counter))
                .expect("add")
        });
        let mut replies = batch.run(&mut application).await.expect("the batch runs");
        replies.take(script).expect("the script ran");
        if let Some(function) = function {
            replies.take(function).expect("the function ran");
        }
    }
    let after: i64 = redis::cmd("GET")
        .arg(counter)
        .query_async(&mut administrator)
        .await
        .expect("GET");
    assert_eq!(after, before + if functions { 4 } else { 2 });
    let stats = command_stats(&mut administrator).await;
    assert_eq!(
        sent(&stats, "eval"),
        counted_refusals(1),
        "no EVAL since: {stats:?}"
    );
    assert_eq!(
        sent(&stats, "function|load"),
        2 * u64::from(functions),
        "the deploy user's, and no other since: {stats:?}"
    );
}
