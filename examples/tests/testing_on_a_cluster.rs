use std::time::Duration;

use proptest::prelude::*;
use redis_script::{ScriptReply, redis_script};
use redis_script_test::{Property, RedisCluster, State, TestCluster, interleave};

#[derive(Debug, ScriptReply)]
enum Decision {
    Allowed { count: u64, remaining: u64 },
    Denied { count: u64, retry_after_ms: u64 },
}

#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;

/// Whether the request was admitted; a denial must say when to retry.
fn admitted(decision: &Result<Decision, redis_script::Error>) -> bool {
    match decision {
        Ok(Decision::Allowed { .. }) => true,
        Ok(Decision::Denied {
            count,
            retry_after_ms,
        }) => {
            assert!(*count > 0 && *retry_after_ms <= 60_000);
            false
        }
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limiter_counts_per_tenant_on_a_cluster() {
    let cluster = TestCluster::new(); // a key namespace on a cluster the test binary shares
    let (a, b) = (cluster.key("rl:{tenant-a}"), cluster.key("rl:{tenant-b}"));
    let mut connection = cluster.connection().await;
    for counter in [&a, &a, &b] {
        assert!(admitted(
            &rate_limit_fixed(&mut connection, counter, 10, 60_000).await
        ));
    }
    let minute = Duration::from_secs(60);
    let expected = State::new()
        .string(&a, "2")
        .expires_within(&a, minute)
        .string(&b, "1")
        .expires_within(&b, minute);
    cluster.assert_state(&expected).await; // read from every primary
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limiter_keeps_its_count_through_a_failover() {
    let cluster = RedisCluster::start(3, 1); // a cluster of its own: this test fails a node over
    let mut connection = cluster.connection().await;
    for _ in 0..3 {
        rate_limit_fixed(&mut connection, "rl:{api}", 10, 60_000)
            .await
            .unwrap();
    }
    let slot = redis_script::cluster::key_slot(b"rl:{api}");
    tokio::task::block_in_place(|| cluster.fail_over_slot(slot));

    let decision = rate_limit_fixed(&mut connection, "rl:{api}", 10, 60_000).await;
    assert!(matches!(
        decision,
        Ok(Decision::Allowed {
            count: 4,
            remaining: 6
        })
    ));
}

#[test]
fn any_interleaving_of_clients_admits_exactly_the_limit() {
    let property = Property::new(); // each case runs on a freshly emptied database
    proptest!(ProptestConfig::with_cases(32), |(
        requests in prop::collection::vec(1_usize..30, 1..5),
        limit in 1_u64..20,
    )| {
        let clients: Vec<Vec<()>> = requests.iter().map(|&count| vec![(); count]).collect();
        let outcomes = property.run(|db| async move {
            interleave(&db, clients, move |mut connection, ()| async move {
                rate_limit_fixed(&mut connection, "rl:{p}", limit, 60_000).await
            })
            .await
        });
        let admitted = outcomes.iter().flatten().filter(|decision| admitted(decision)).count();
        let total: usize = requests.iter().sum();
        prop_assert_eq!(admitted as u64, (total as u64).min(limit));
    });
}
