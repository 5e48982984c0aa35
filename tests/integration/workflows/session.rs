//! Session touch under concurrency: many tasks touching the sessions of one
//! user leave every session hash and its index entry in agreement, and a
//! call whose keys lack the `{hash tag}` is refused with the typed
//! cross-slot error before anything reaches the server.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::Error;
use redis_script::cluster::key_slot;
use redis_script_examples::workflows::session::{index_key, session_key, session_touch, touch};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, RedisServer, Stats};

use crate::releases::before_redis_7;

const SESSIONS: usize = 10;
const TASKS: usize = 40;
const TOUCHES_PER_TASK: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_touch_keeps_hash_and_index_in_step_on_a_standalone_server() {
    let server = RedisServer::start();
    let connection = server.connection().await;
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        concurrent_touches(&connection, "ada").await;
        expired_sessions_leave_the_index(&connection, "brian").await;
        untagged_keys_fail_before_sending(&connection, &server).await;
    })
    .await
    .expect("the session scenarios did not finish within 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_touch_keeps_hash_and_index_in_step_on_a_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let connection = cluster.connection().await;
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        concurrent_touches(&connection, "ada").await;
        expired_sessions_leave_the_index(&connection, "brian").await;
        untagged_keys_fail_before_sending(&connection, &cluster).await;
    })
    .await
    .expect("the session scenarios did not finish within 30 s");
}

fn session_id(index: usize) -> String {
    format!("s{index}")
}

/// `TASKS` tasks touch the `SESSIONS` sessions of one user, each session
/// by several tasks at once, with varying TTLs.
async fn concurrent_touches<C>(connection: &C, user: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let mut connection = connection.clone();
            tokio::spawn(async move {
                let session = session_id(task % SESSIONS);
                let mut touches = Vec::new();
                for round in 0..TOUCHES_PER_TASK {
                    let ttl_ms = 20_000 + ((task * 7 + round * 13) % 50) as u64 * 100;
                    let touched = touch(&mut connection, user, &session, ttl_ms, "test")
                        .await
                        .unwrap_or_else(|error| panic!("touch {session}: {error}"));
                    assert!(
                        (1..=SESSIONS as u64).contains(&touched.sessions),
                        "{touched:?}"
                    );
                    touches.push(touched.touches);
                }
                (session, touches)
            })
        })
        .collect();
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for task in tasks {
        let (session, touches) = task.await.expect("a touch task panicked");
        seen.entry(session).or_default().extend(touches);
    }

    let per_session = (TASKS / SESSIONS * TOUCHES_PER_TASK) as u64;
    let mut connection = connection.clone();
    let index = index_key(user);
    let entries: Vec<(String, i64)> = redis::cmd("ZRANGE")
        .arg(&index)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(&mut connection)
        .await
        .unwrap();
    let listed: BTreeSet<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    let expected: BTreeSet<String> = (0..SESSIONS).map(session_id).collect();
    assert_eq!(
        listed,
        expected.iter().map(String::as_str).collect(),
        "the index lists every touched session, once"
    );
    for (session, score) in &entries {
        // Every touch of a session got its own sequence number: no lost update.
        let mut touches = seen[session].clone();
        touches.sort_unstable();
        assert_eq!(touches, (1..=per_session).collect::<Vec<_>>(), "{session}");

        let key = session_key(user, session);
        let stored: u64 = redis::cmd("HGET")
            .arg(&key)
            .arg("touches")
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(stored, per_session, "{key}");
        let expire_time = expire_time_ms(&mut connection, &key).await;
        assert!(
            expire_time.abs_diff(*score) <= EXPIRE_TIME_SLACK_MS,
            "{key} expires at {expire_time}, not when its index entry says ({score})"
        );
    }
    let longest = entries.iter().map(|(_, score)| *score).max().unwrap();
    let index_expire_time = expire_time_ms(&mut connection, &index).await;
    assert!(
        index_expire_time.abs_diff(longest) <= EXPIRE_TIME_SLACK_MS,
        "the index expires at {index_expire_time}, not with its longest-lived session ({longest})"
    );
    println!(
        "session touch: {} touches of {SESSIONS} sessions by {TASKS} tasks, {per_session} per session, hash and index agree",
        TASKS * TOUCHES_PER_TASK
    );
}

/// A session that expired is pruned from the index by the next touch.
async fn expired_sessions_leave_the_index<C>(connection: &C, user: &str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let mut connection = connection.clone();
    let long = touch(&mut connection, user, "long", 30_000, "test")
        .await
        .unwrap();
    assert_eq!(long.sessions, 1);
    let short = touch(&mut connection, user, "short", 50, "test")
        .await
        .unwrap();
    assert_eq!(short.sessions, 2);
    // Wait (bounded) until the server has expired the short session's hash.
    let short_key = session_key(user, "short");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let exists: bool = redis::cmd("EXISTS")
            .arg(&short_key)
            .query_async(&mut connection)
            .await
            .unwrap();
        if !exists {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{short_key} did not expire"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let again = touch(&mut connection, user, "long", 30_000, "test")
        .await
        .unwrap();
    assert_eq!(again.sessions, 1, "the expired session left the index");
    let listed: Vec<String> = redis::cmd("ZRANGE")
        .arg(index_key(user))
        .arg(0)
        .arg(-1)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(listed, ["long"]);
}

/// The same call with keys lacking the hash tag: a typed `CrossSlot` error,
/// and no script command reaches any server.
async fn untagged_keys_fail_before_sending<C, S>(connection: &C, servers: &S)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
    S: Stats,
{
    let (session, index) = ("session:carol:s1", "user-sessions:carol");
    let slots = (key_slot(session.as_bytes()), key_slot(index.as_bytes()));
    assert_ne!(slots.0, slots.1, "the untagged keys must hash apart");

    let mut connection = connection.clone();
    servers.reset_stats();
    let error = session_touch(&mut connection, session, index, "s1", 30_000, "test")
        .await
        .expect_err("keys in different slots must be refused");
    let script_calls = ["eval", "evalsha", "eval_ro", "evalsha_ro"]
        .iter()
        .map(|command| servers.calls(command))
        .sum::<u64>();
    assert_eq!(script_calls, 0, "nothing may reach the server");
    assert!(!error.may_have_executed(), "{error}");
    match &error {
        Error::CrossSlot {
            operation: script,
            keys,
            ..
        } => {
            assert_eq!(*script, "session_touch");
            let keys: Vec<(&str, u16)> = keys.iter().map(|k| (k.key.as_str(), k.slot)).collect();
            assert_eq!(keys, [(session, slots.0), (index, slots.1)]);
        }
        other => panic!("expected Error::CrossSlot, got {other:?}"),
    }
    println!("untagged keys: {error}");

    // With the user as hash tag, the same touch works.
    let touched = touch(&mut connection, "carol", "s1", 30_000, "test")
        .await
        .unwrap();
    assert_eq!(touched.touches, 1);
}

/// How far the expiry time read apart from the key may be off: none with
/// `PEXPIRETIME`, a few milliseconds where it is the server's clock plus
/// the key's `PTTL`.
const EXPIRE_TIME_SLACK_MS: u64 = 50;

/// When `key` expires, in Unix milliseconds: `PEXPIRETIME` (Redis 7.0 and
/// later), or on Redis 6.x, which lacks it, the server's `TIME` plus the
/// key's `PTTL`, read in one transaction.
async fn expire_time_ms<C: ConnectionLike>(connection: &mut C, key: &str) -> i64 {
    if !before_redis_7() {
        return redis::cmd("PEXPIRETIME")
            .arg(key)
            .query_async(connection)
            .await
            .expect("PEXPIRETIME");
    }
    let ((seconds, micros), left): ((i64, i64), i64) = redis::pipe()
        .atomic()
        .cmd("TIME")
        .cmd("PTTL")
        .arg(key)
        .query_async(connection)
        .await
        .expect("TIME and PTTL");
    seconds * 1000 + micros / 1000 + left
}
