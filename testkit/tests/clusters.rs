//! A namespace per test on the cluster a test binary shares.

use redis_script::redis_script;
use redis_script_test::{State, TestCluster};

#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
async fn add(counter: &str, by: i64) -> i64;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_share_one_cluster_and_keep_apart_by_namespace() {
    let (first, second) = (TestCluster::new(), TestCluster::new());
    assert_eq!(
        first.cluster().urls(),
        second.cluster().urls(),
        "one cluster"
    );
    assert_ne!(first.namespace(), second.namespace());

    // Keys in several slots, so the state is read from several primaries.
    let names = ["{a}:count", "{b}:count", "{c}:count", "{d}:count"];
    let mut connection = first.connection().await;
    for name in names {
        assert_eq!(add(&mut connection, &first.key(name), 2).await.unwrap(), 2);
    }
    let mut other = second.connection().await;
    assert_eq!(
        add(&mut other, &second.key("{a}:count"), 5).await.unwrap(),
        5
    );

    let expected = names.iter().fold(State::new(), |state, name| {
        state.string(first.key(name), "2")
    });
    first.assert_state(&expected).await;
    second
        .assert_state(&State::new().string(second.key("{a}:count"), "5"))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixture_key_outside_the_namespace_is_refused() {
    let cluster = TestCluster::new();
    let outside = State::new().string("not-namespaced", "1");
    let refused = tokio::spawn(async move { cluster.given(&outside).await }).await;
    let message = refused
        .expect_err("given panics")
        .into_panic()
        .downcast::<String>()
        .map(|message| *message)
        .unwrap_or_default();
    assert!(
        message.contains("outside this test's namespace"),
        "{message}"
    );
}
