use std::time::Duration;

use redis_script::{ScriptReply, redis_script};
use redis_script_test::{State, Stats as _, TestDb, concurrently};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64, remaining: u64 },
    Denied { count: u64, retry_after_ms: u64 },
}

#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;

/// The same script, declared `exactly_once`: a request sent again after a
/// timeout is answered from its record instead of running again.
#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1, exactly_once)]
async fn rate_limit_once(counter: &str, limit: u64, window_ms: u64) -> Decision;

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_full_window_denies_and_changes_nothing() {
    let db = TestDb::new(); // an empty database of its own, on a shared server
    let full = State::new()
        .string("rl:{api}", "100")
        .expires_within("rl:{api}", MINUTE);
    db.given(&full).await;

    let mut connection = db.connection().await;
    let decision = rate_limit_fixed(&mut connection, "rl:{api}", 100, 60_000).await;

    match decision {
        Ok(Decision::Denied {
            count,
            retry_after_ms,
        }) => {
            assert_eq!(count, 100);
            assert!(retry_after_ms <= 60_000);
        }
        other => panic!("expected a denial, got {other:?}"),
    }
    db.assert_state(&full).await; // on failure: a diff of keys, values and TTLs
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limiter_never_admits_more_than_its_limit() {
    let db = TestDb::new();
    let connection = db.connection().await;
    // 100 tasks x 10 requests, released together at a barrier.
    let decisions = concurrently(100, 10, move |_| {
        let mut connection = connection.clone();
        async move { rate_limit_fixed(&mut connection, "rl:{api}", 100, 60_000).await }
    })
    .await;
    let admitted = decisions
        .iter()
        .filter(|decision| matches!(decision, Ok(Decision::Allowed { .. })))
        .count();
    assert_eq!(admitted, 100);
}

#[tokio::test]
async fn a_request_retried_after_a_timeout_is_counted_once() {
    let db = TestDb::own_server(); // this test pauses its server
    let impatient =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_millis(100)));
    let mut connection = db
        .client()
        .get_multiplexed_async_connection_with_config(&impatient)
        .await
        .unwrap();
    rate_limit_once(&mut connection, "warm-up", 1, 60_000)
        .await
        .unwrap();
    db.server().reset_stats();

    // The server holds every command for 300 ms: the first send times out,
    // and still runs when the pause ends; the runtime sends the same call
    // again, which is answered from the first one's record.
    db.server().pause_clients(Duration::from_millis(300));
    let decision = rate_limit_once(&mut connection, "rl:{api}", 100, 60_000).await;

    assert!(matches!(
        decision,
        Ok(Decision::Allowed {
            count: 1,
            remaining: 99
        })
    ));
    assert!(db.server().calls("evalsha") >= 2, "sent more than once");
    assert_eq!(db.server().calls("incr"), 1, "admitted once");
}
