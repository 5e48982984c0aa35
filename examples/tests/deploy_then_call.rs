//! The workflows' scripts and library deployed by a user allowed only to
//! load them, then called by an application user allowed only the
//! commands `redis-script-check --acl` generates for them: every script is
//! on the server under the SHA1 its calls send (also when loaded from the
//! sources written for a pipeline outside Rust), every workflow runs, and
//! the calls send no `EVAL` and no `FUNCTION LOAD`.

use std::time::Duration;

use redis_script::{Error, OnConflict, ServerFeature};
use redis_script_analysis::acl::AclRules;
use redis_script_analysis::{Header, LibrarySignature, Signature, analyze, analyze_library};
use redis_script_examples::workflows::deploy::{
    LIBRARIES, SCRIPTS, deploy_all, manifest, write_sources,
};
use redis_script_examples::workflows::lock::Lock;
use redis_script_examples::workflows::quota::quota_lib;
use redis_script_examples::workflows::rate_limit::{
    rate_limit_fixed, rate_limit_sliding, request_id,
};
use redis_script_examples::workflows::redlock::Redlock;
use redis_script_examples::workflows::{counter, idempotency, session, transfer, versioned};
use redis_script_test::{RedisServer, ServerFlavor, parse_commandstats};

/// The commands the application user needs for every script and library
/// the workflows call, as `redis-script-check --acl` generates them, with
/// `GET` and `SET` for the records of `exactly_once` calls. (Its keys are
/// granted with `~*`: the workflows build keys of many shapes.)
fn generated_commands() -> Vec<String> {
    let mut rules = AclRules::default();
    let file = |path: &str| {
        let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    };
    for script in SCRIPTS {
        let source = file(script.path());
        let signature: Signature = Header::parse(&source)
            .documented_signature()
            .unwrap_or_else(|| panic!("{}: its header declares its keys", script.path()));
        rules.merge(&AclRules::of_script(
            &analyze(&source, &signature),
            &signature,
        ));
    }
    for library in LIBRARIES {
        let source = file(library.path());
        let undeclared = LibrarySignature::default();
        rules.merge(&AclRules::of_library(
            &analyze_library(&source, &undeclared),
            &undeclared,
        ));
    }
    rules.commands.extend(["get".to_owned(), "set".to_owned()]);
    rules
        .commands
        .iter()
        .map(|command| format!("+{command}"))
        .collect()
}

#[tokio::test]
async fn a_deploy_user_loads_what_an_application_user_then_only_calls() {
    let server = RedisServer::start();
    let mut administrator = server.connection().await;
    if server.flavor() == ServerFlavor::Redis && server.version().major < 7 {
        // Redis 6.x has no Functions (nor their ACL rules): the library's
        // deploy says so, and nothing else of this test can run there.
        let deployed = quota_lib::LIBRARY
            .deploy(&mut administrator, OnConflict::Refuse)
            .await;
        assert!(
            matches!(
                deployed,
                Err(Error::Unsupported {
                    feature: ServerFeature::Functions,
                    ..
                })
            ),
            "{deployed:?}"
        );
        eprintln!(
            "a_deploy_user_loads_what_an_application_user_then_only_calls: Redis {} has no Redis Functions (Redis 7.0 added them): the deploy's error is proven, the rest of the test deploys a library",
            server.version()
        );
        return;
    }
    for rules in [&[
        "deployer",
        "on",
        ">deployer-password",
        "+script|load",
        "+function|load",
        "+function|list",
    ][..]]
    {
        let () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(rules)
            .query_async(&mut administrator)
            .await
            .expect("ACL SETUSER");
    }
    // The application user: the generated commands, no EVAL, SCRIPT or
    // FUNCTION.
    let commands = generated_commands();
    for command in &commands {
        let name = command.split('|').next().unwrap_or_default();
        assert!(
            !["+eval", "+eval_ro", "+script", "+function"].contains(&name),
            "{command}"
        );
    }
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("application")
        .arg("on")
        .arg(">application-password")
        .arg("~*")
        .arg(&commands)
        .query_async(&mut administrator)
        .await
        .expect("ACL SETUSER");
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
    run_every_workflow(&mut application).await;
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut administrator)
        .await
        .expect("INFO");
    let stats = parse_commandstats(&text);
    assert!(!stats.contains_key("eval"), "{stats:?}");
    assert!(!stats.contains_key("eval_ro"), "{stats:?}");
    // The one FUNCTION LOAD is the deployer's, and none was refused.
    assert_eq!(
        stats
            .get("function|load")
            .map(|stat| (stat.calls, stat.rejected_calls)),
        Some((1, 0))
    );
}

/// Each workflow once, as the application does.
async fn run_every_workflow(application: &mut redis::aio::MultiplexedConnection) {
    let minute = Duration::from_secs(60);
    counter::counter_increment(application, "counter:{deploy}", 2)
        .await
        .expect("counter");
    let claim = idempotency::claim(application, "idem:{deploy}", "claimant", minute)
        .await
        .expect("claim");
    assert!(matches!(claim, idempotency::Claim::Claimed), "{claim:?}");
    idempotency::complete(application, "idem:{deploy}", "claimant", 200, b"ok", minute)
        .await
        .expect("complete");
    let lock = Lock::acquire(application, "lock:{deploy}", minute)
        .await
        .expect("acquire")
        .expect("a free lock");
    assert!(lock.extend(application, minute).await.expect("extend"));
    assert!(lock.release(application).await.expect("release"));
    let redlock = Redlock::new(vec![application.clone()]);
    let guard = redlock
        .lock("redlock:{deploy}", minute)
        .await
        .expect("redlock")
        .expect("a free resource");
    assert_eq!(redlock.release(&guard).await, 1);
    rate_limit_fixed::call("rl:{deploy}", 10, 60_000)
        .without_loading()
        .invoke(application)
        .await
        .expect("fixed window");
    rate_limit_sliding(application, "rls:{deploy}", 10, 60_000, &request_id())
        .await
        .expect("sliding window");
    session::touch(application, "ada", "s1", 60_000, "cli")
        .await
        .expect("session");
    let () = redis::cmd("SET")
        .arg(transfer::balance_key("deploy", "alice"))
        .arg(10)
        .query_async(application)
        .await
        .expect("SET");
    transfer::pay(
        application,
        "payment-1",
        &transfer::balance_key("deploy", "alice"),
        &transfer::balance_key("deploy", "bob"),
        3,
    )
    .await
    .expect("transfer");
    versioned::set_versioned(application, "doc:{deploy}", &[1, 2], None, Some(minute))
        .await
        .expect("versioned set");
    let read: Option<versioned::Versioned<Vec<u32>>> =
        versioned::get_versioned(application, "doc:{deploy}")
            .await
            .expect("versioned get");
    assert_eq!(read.map(|stored| stored.version), Some(1));
    quota_lib::fixed_window_allow(application, "quota:{deploy}", 10, 60_000)
        .await
        .expect("a deployed function");
    quota_lib::quota_peek(application, "quota:{deploy}")
        .await
        .expect("a read-only function");
}
