//! Property tests against a real server: random interleavings of typed
//! calls from several clients, an invariant over the outcomes, and
//! shrinking that still works with the server behind it.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestError, TestRunner};
use redis_script::{ScriptReply, redis_script};
use redis_script_test::{Property, interleave};

#[derive(Debug, PartialEq, ScriptReply)]
enum Decision {
    Allowed { count: u64, remaining: u64 },
    Denied { count: u64, retry_after_ms: u64 },
}

#[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;

#[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
async fn add(counter: &str, by: i64) -> i64;

#[test]
fn the_limiter_admits_exactly_min_of_requests_and_limit_in_any_interleaving() {
    let property = Property::new();
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    let clients = vec(1_usize..25, 1..5);
    runner
        .run(&(clients, 1_u64..20), |(requests, limit)| {
            let total: usize = requests.iter().sum();
            let calls: Vec<Vec<()>> = requests.iter().map(|&count| vec![(); count]).collect();
            let admitted = property.run(|db| async move {
                let outcomes = interleave(&db, calls, move |mut connection, ()| async move {
                    rate_limit_fixed(&mut connection, "rl:{p}", limit, 60_000).await
                })
                .await;
                outcomes
                    .iter()
                    .flatten()
                    .filter(|decision| matches!(decision, Ok(Decision::Allowed { .. })))
                    .count()
            });
            prop_assert_eq!(
                admitted,
                total.min(usize::try_from(limit).unwrap_or(usize::MAX))
            );
            Ok(())
        })
        .expect("the limiter's invariant holds");
}

#[test]
fn a_failing_property_shrinks_to_a_minimal_case_against_the_server() {
    let property = Property::new();
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    // A property that does not hold: "the counter never goes below zero".
    let outcome = runner.run(&vec(-5_i64..5, 1..20), |amounts| {
        let lowest = property.run(|db| async move {
            let mut connection = db.connection().await;
            let mut lowest = 0;
            for by in amounts {
                lowest = lowest.min(add(&mut connection, "c", by).await.expect("add"));
            }
            lowest
        });
        prop_assert!(lowest >= 0, "the counter went down to {lowest}");
        Ok(())
    });
    match outcome {
        Err(TestError::Fail(_, minimal)) => assert_eq!(minimal, vec![-1]),
        other => panic!("expected a shrunk failure, got {other:?}"),
    }
}
