//! A read-only script on a server without `EVALSHA_RO`/`EVAL_RO` (one
//! that renamed them away, or Redis 6.x, which never had them). The
//! runtime remembers the fallback per script, so the script here is this
//! test's own: its first call meets the unknown command whatever other
//! tests did before.

use redis_script::redis_script;
use redis_script_test::{RedisServer, Stats};

/// How many times `id` ran; a read-only script no other test calls.
#[redis_script(path = "lua/faults/read_log.lua", keys = 1)]
async fn read_log(log: &str, id: &str) -> Option<i64>;

const LOG: &str = "{t}:log";

#[tokio::test]
async fn read_only_script_falls_back_to_evalsha_without_evalsha_ro() {
    let server = RedisServer::start_without_read_only_scripts();
    let mut connection = server.connection().await;
    let unknown = redis::cmd("EVALSHA_RO")
        .arg(read_log::SCRIPT.sha1())
        .arg(1)
        .arg(LOG)
        .arg("x")
        .query_async::<redis::Value>(&mut connection)
        .await
        .expect_err("EVALSHA_RO is renamed away");
    // Redis 6.x has no EVALSHA_RO at all, and quotes it with backquotes.
    assert!(
        unknown.detail().is_some_and(|detail| {
            detail.starts_with("unknown command 'EVALSHA_RO'")
                || detail.starts_with("unknown command `EVALSHA_RO`")
        }),
        "{unknown:?}"
    );
    let () = redis::cmd("HSET")
        .arg(LOG)
        .arg("seen")
        .arg(7)
        .query_async(&mut connection)
        .await
        .expect("HSET");
    server.reset_stats();
    // EVALSHA_RO (unknown command, did not run), EVALSHA (NOSCRIPT), EVAL;
    // from then on EVALSHA.
    for _ in 0..3 {
        let seen = read_log(&mut connection, LOG, "seen")
            .await
            .expect("the read-only call succeeds");
        assert_eq!(seen, Some(7));
        let unseen = read_log(&mut connection, LOG, "unseen")
            .await
            .expect("the read-only call succeeds");
        assert_eq!(unseen, None);
    }
    assert_eq!(
        (
            server.calls("evalsha"),
            server.calls("eval"),
            server.calls("evalsha_ro")
        ),
        (6, 1, 0),
        "(evalsha, eval, evalsha_ro)"
    );
}
