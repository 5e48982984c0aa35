//! The checker's scripts that use key names read from data
//! (`cli/tests/fixtures/keys_from_data`), which fail the build without an
//! opt-out: declared `dynamic_keys`, each builds, and on a standalone
//! server (where every key is local) it reaches the key its data names.

use redis::AsyncCommands;
use redis_script::redis_script;
use redis_script_test::RedisServer;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/get.lua",
    keys = 1,
    dynamic_keys
)]
async fn drop_pointed(pointer: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/helper.lua",
    keys = 1,
    dynamic_keys
)]
async fn drop_pointed_through_helper(pointer: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/hget.lua",
    keys = 1,
    dynamic_keys
)]
async fn push_to_named_queue(job: &str, payload: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/json.lua",
    keys = 0,
    dynamic_keys
)]
async fn get_requested(request: &str) -> Option<String>;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/lpop.lua",
    keys = 1,
    dynamic_keys
)]
async fn increment_next(names: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/members.lua",
    keys = 1,
    dynamic_keys,
    // The sets are small here; the finding is not what this test is about.
    allow(unbounded_read)
)]
async fn drop_members(index: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/scan.lua",
    keys = 0,
    dynamic_keys
)]
async fn drop_matching(cursor: &str, pattern: &str) -> String;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/unpack.lua",
    keys = 1,
    dynamic_keys,
    // The sets are small here; the findings are not what this test is about.
    allow(unbounded_read, unbounded_unpack)
)]
async fn drop_all_members(index: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/collected.lua",
    keys = 1,
    dynamic_keys,
    // The sets are small here; the findings are not what this test is about.
    allow(unbounded_read, unbounded_unpack)
)]
async fn drop_sessions(index: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/constructed.lua",
    keys = 2,
    dynamic_keys
)]
async fn move_to_named_queue(record: &str, waiting: &str, id: &str) -> i64;

#[redis_script(
    path = "../cli/tests/fixtures/keys_from_data/trailing_call.lua",
    keys = 1,
    dynamic_keys
)]
async fn persist_pointed(pointer: &str) -> i64;

#[tokio::test]
async fn scripts_reading_keys_from_data_build_with_the_opt_out_and_reach_those_keys() {
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let exists = async |connection: &mut redis::aio::MultiplexedConnection, key: &str| {
        connection.exists::<_, bool>(key).await.expect("EXISTS")
    };

    let () = connection.set("pointer", "target").await.expect("SET");
    let () = connection.set("target", "1").await.expect("SET");
    assert_eq!(
        drop_pointed(&mut connection, "pointer")
            .await
            .expect("get.lua"),
        1
    );
    assert!(!exists(&mut connection, "target").await);

    let () = connection.set("target", "1").await.expect("SET");
    assert_eq!(
        drop_pointed_through_helper(&mut connection, "pointer")
            .await
            .expect("helper.lua"),
        1
    );
    assert!(!exists(&mut connection, "target").await);

    let () = connection
        .hset("job", "queue", "emails")
        .await
        .expect("HSET");
    assert_eq!(
        push_to_named_queue(&mut connection, "job", "payload")
            .await
            .expect("hget.lua"),
        1
    );
    assert_eq!(
        connection
            .lrange::<_, Vec<String>>("emails", 0, -1)
            .await
            .expect("LRANGE"),
        ["payload"]
    );

    let () = connection.set("answer", "42").await.expect("SET");
    assert_eq!(
        get_requested(&mut connection, r#"{"key":"answer"}"#)
            .await
            .expect("json.lua")
            .as_deref(),
        Some("42")
    );

    let () = connection.rpush("names", "counter").await.expect("RPUSH");
    assert_eq!(
        increment_next(&mut connection, "names")
            .await
            .expect("lpop.lua"),
        1
    );

    let () = connection.sadd("index", &["a", "b"]).await.expect("SADD");
    let () = connection.set("a", "1").await.expect("SET");
    let () = connection.set("b", "1").await.expect("SET");
    assert_eq!(
        drop_members(&mut connection, "index")
            .await
            .expect("members.lua"),
        1
    );
    assert!(!exists(&mut connection, "a").await && !exists(&mut connection, "b").await);

    let () = connection.set("tmp:1", "1").await.expect("SET");
    // SCAN may need several rounds: the script is called until the cursor
    // comes back to 0, a bounded number of times.
    let mut cursor = "0".to_string();
    for _ in 0..100 {
        cursor = drop_matching(&mut connection, &cursor, "tmp:*")
            .await
            .expect("scan.lua");
        if cursor == "0" {
            break;
        }
    }
    assert!(!exists(&mut connection, "tmp:1").await);

    let () = connection.set("a", "1").await.expect("SET");
    assert_eq!(
        drop_all_members(&mut connection, "index")
            .await
            .expect("unpack.lua"),
        1
    );

    let () = connection
        .sadd("sessions", &["s1", "s2"])
        .await
        .expect("SADD");
    let () = connection.set("s1", "1").await.expect("SET");
    let () = connection.set("s2", "1").await.expect("SET");
    assert_eq!(
        drop_sessions(&mut connection, "sessions")
            .await
            .expect("collected.lua"),
        2
    );

    let () = connection
        .hset("{job}:record", "queue", "sms")
        .await
        .expect("HSET");
    let () = connection.rpush("{job}:waiting", "7").await.expect("RPUSH");
    assert_eq!(
        move_to_named_queue(&mut connection, "{job}:record", "{job}:waiting", "7")
            .await
            .expect("constructed.lua"),
        1
    );
    assert_eq!(
        connection
            .lrange::<_, Vec<String>>("sms", 0, -1)
            .await
            .expect("LRANGE"),
        ["7"]
    );

    let () = connection.set("lock", "owner").await.expect("SET");
    let () = connection.expire("lock", 60).await.expect("EXPIRE");
    let () = connection.set("pointer", "lock").await.expect("SET");
    assert_eq!(
        persist_pointed(&mut connection, "pointer")
            .await
            .expect("trailing_call.lua"),
        1
    );
    assert_eq!(connection.ttl::<_, i64>("lock").await.expect("TTL"), -1);
}
