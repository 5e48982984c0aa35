//! A server without a Lua engine. Valkey 9.1 runs Lua as a module that an
//! operator can unload (`MODULE UNLOAD lua`) or leave out of a build: every
//! script call, preload and library deploy then ends with one clear error
//! that says nothing ran, never a `NOSCRIPT` loop or a raw reply.

use std::fmt::Debug;

use redis_script::{Error, OnConflict, ServerFeature, preload};
use redis_script_test::{RedisServer, ServerFlavor, server_executable_version};
use redis_script_tests::{release_lock, transfer};

use crate::functions::quota_lib;

/// Whether the release under test runs Lua as a module it can unload.
fn lua_is_a_module() -> bool {
    matches!(
        server_executable_version(),
        Some((ServerFlavor::Valkey, version)) if (version.major, version.minor) >= (9, 1)
    )
}

fn assert_no_lua_engine<T: Debug>(what: &str, result: Result<T, Error>) {
    match result {
        Err(
            error @ Error::Unsupported {
                feature: ServerFeature::LuaEngine,
                ..
            },
        ) => {
            assert!(!error.may_have_executed(), "{what}: {error}");
            assert!(error.to_string().contains("Lua"), "{what}: {error}");
        }
        other => panic!("{what}: {other:?}"),
    }
}

#[tokio::test]
async fn a_server_without_its_lua_engine_gets_one_clear_error() {
    if !lua_is_a_module() {
        // Lua is built into the server: nothing can take it away.
        let server = RedisServer::start();
        let mut connection = server.connection().await;
        let unloaded: redis::RedisResult<()> = redis::cmd("MODULE")
            .arg("UNLOAD")
            .arg("lua")
            .query_async(&mut connection)
            .await;
        assert!(unloaded.is_err(), "this release unloaded its Lua engine");
        eprintln!(
            "a_server_without_its_lua_engine_gets_one_clear_error: the release under test has Lua built in (Valkey 9.1 made it a module)"
        );
        return;
    }
    let server = RedisServer::start_with(&["--enable-module-command", "yes"]);
    let mut connection = server.connection().await;
    let () = redis::cmd("MODULE")
        .arg("UNLOAD")
        .arg("lua")
        .query_async(&mut connection)
        .await
        .expect("MODULE UNLOAD lua");
    let () = redis::cmd("SET")
        .arg("{a}:from")
        .arg(10)
        .query_async(&mut connection)
        .await
        .expect("SET");
    assert_no_lua_engine(
        "a script call",
        transfer(&mut connection, "{a}:from", "{a}:to", 3).await,
    );
    assert_no_lua_engine(
        "another script call",
        release_lock(&mut connection, "{a}:lock", "token").await,
    );
    assert_no_lua_engine(
        "a preload",
        preload(&mut connection, &[&release_lock::SCRIPT, &transfer::SCRIPT]).await,
    );
    assert_no_lua_engine(
        "a library deploy",
        quota_lib::LIBRARY
            .deploy(&mut connection, OnConflict::Refuse)
            .await,
    );
    assert_no_lua_engine(
        "a library function's call",
        quota_lib::fixed_window_allow(&mut connection, "{a}:quota", 5, 60).await,
    );
    let (from, to): (Option<i64>, Option<i64>) = redis::cmd("MGET")
        .arg("{a}:from")
        .arg("{a}:to")
        .query_async(&mut connection)
        .await
        .expect("MGET");
    assert_eq!((from, to), (Some(10), None), "nothing ran");
}
