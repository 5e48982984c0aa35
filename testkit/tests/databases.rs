//! The per-test database, fixtures and state diffs, and concurrent calls,
//! against a real server.

use std::time::Duration;

use redis_script_test::{Data, State, TestDb, Ttl, Turn, concurrently};

#[tokio::test]
async fn each_test_gets_an_empty_database_of_its_own() {
    let (first, second) = (TestDb::new(), TestDb::new());
    assert_eq!(
        first.server().port(),
        second.server().port(),
        "one shared server"
    );
    assert_ne!(first.index(), second.index());
    first.given(&State::new().string("k", "first")).await;
    second.given(&State::new().string("k", "second")).await;
    first.assert_state(&State::new().string("k", "first")).await;
    second
        .assert_state(&State::new().string("k", "second"))
        .await;
    assert!(first.url().ends_with(&format!("/{}", first.index())));
}

#[tokio::test]
async fn a_fixture_of_every_type_reads_back_the_same() {
    let db = TestDb::new();
    let fixture = State::new()
        .string("s", "v")
        .expires_within("s", Duration::from_secs(60))
        .hash("h", [("a", "1"), ("b", "2")])
        .list("l", ["x", "y", "x"])
        .set("set", ["m", "n"])
        .sorted_set("z", [("low", 1.0), ("high", 2.5)])
        .stream("st", [("1-0", vec![("f", "v")]), ("2-0", vec![("g", "w")])]);
    db.given(&fixture).await;
    let found = db.state().await;
    assert_eq!(fixture.diff(&found), None);
    match found.get("s").map(|entry| entry.ttl) {
        Some(Ttl::Within(left)) => {
            assert!(left <= Duration::from_secs(60) && left > Duration::ZERO)
        }
        other => panic!("expected a TTL, found {other:?}"),
    }
    assert_eq!(
        found.get("l").map(|entry| &entry.data),
        Some(&Data::List(vec!["x".into(), "y".into(), "x".into()]))
    );
}

#[tokio::test]
async fn a_differing_state_is_shown_key_by_key() {
    let db = TestDb::new();
    db.given(
        &State::new()
            .string("count", "2")
            .set("extra", ["a"])
            .hash("job", [("state", "new")]),
    )
    .await;
    let expected = State::new()
        .string("count", "1")
        .expires_within("count", Duration::from_secs(10))
        .hash("job", [("state", "new")])
        .list("queue", ["job"]);
    let diff = expected.diff(&db.state().await).expect("the states differ");
    assert_eq!(
        diff,
        "the state differs (- expected, + found):\n  \
         count\n    - string \"1\"\n    + string \"2\"\n    - TTL at most 10s\n    + no TTL\n  \
         extra\n    - (absent)\n    + set {\"a\"}\n  \
         queue\n    - list [\"job\"]\n    + (missing)\n"
    );
    let panic = tokio::spawn(async move { db.assert_state(&expected).await }).await;
    let message = panic
        .expect_err("assert_state panics")
        .into_panic()
        .downcast::<String>()
        .map(|message| *message)
        .unwrap_or_default();
    assert!(
        message.contains("databases.rs") && message.contains(&diff),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_of_its_own_can_be_restarted() {
    let mut db = TestDb::own_server();
    db.given(&State::new().string("k", "v")).await;
    let server = db.server_mut().expect("its own server");
    server.restart();
    db.assert_state(&State::new()).await;
    assert!(
        TestDb::new().server_mut().is_none(),
        "the shared server is not the test's to stop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_are_returned_task_by_task() {
    let db = TestDb::new();
    let connection = db.connection().await;
    let turns = concurrently(8, 3, move |turn: Turn| {
        let mut connection = connection.clone();
        async move {
            let position: i64 = redis::cmd("RPUSH")
                .arg("order")
                .arg(format!("{}:{}", turn.task, turn.call))
                .query_async(&mut connection)
                .await
                .expect("RPUSH");
            (turn, position)
        }
    })
    .await;
    let order: Vec<(usize, usize)> = turns
        .iter()
        .map(|(turn, _)| (turn.task, turn.call))
        .collect();
    let expected: Vec<(usize, usize)> = (0..8)
        .flat_map(|task| (0..3).map(move |call| (task, call)))
        .collect();
    assert_eq!(order, expected);
    let mut positions: Vec<i64> = turns.iter().map(|(_, position)| *position).collect();
    positions.sort_unstable();
    assert_eq!(
        positions,
        (1..=24).collect::<Vec<i64>>(),
        "every call ran once"
    );
}
