//! Exactly-once transfers under concurrency: 200 payments, each sent by 3
//! tasks at once with the same payment id (a client that retries, a load
//! balancer that duplicates), move the money exactly once per payment, and
//! every copy of a payment gets the same balances, on a standalone server
//! and on a cluster.

use std::collections::HashMap;
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script_examples::workflows::transfer::{balance_key, pay};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};

const PAYMENTS: usize = 200;
const COPIES: usize = 3;
const AMOUNT: i64 = 5;
const OPENING: i64 = 10_000;
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_payments_move_money_once_on_a_standalone_server() {
    let db = TestDb::new();
    let mut connections = Vec::new();
    for _ in 0..4 {
        connections.push(db.connection().await);
    }
    duplicated_payments(&connections, "ledger-a").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_payments_move_money_once_on_a_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let mut connections = Vec::new();
    for _ in 0..2 {
        connections.push(cluster.connection().await);
    }
    duplicated_payments(&connections, "ledger-b").await;
}

async fn duplicated_payments<C>(connections: &[C], ledger: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let (source, destination) = (
        balance_key(ledger, "source"),
        balance_key(ledger, "destination"),
    );
    let mut connection = connections[0].clone();
    let () = redis::cmd("MSET")
        .arg(&source)
        .arg(OPENING)
        .arg(&destination)
        .arg(0)
        .query_async(&mut connection)
        .await
        .expect("MSET");
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        let mut tasks = tokio::task::JoinSet::new();
        for copy in 0..COPIES {
            for payment in 0..PAYMENTS {
                let mut connection = connections[(payment + copy) % connections.len()].clone();
                let (source, destination) = (source.clone(), destination.clone());
                tasks.spawn(async move {
                    let id = format!("{ledger}-payment-{payment}");
                    let balances = pay(&mut connection, &id, &source, &destination, AMOUNT)
                        .await
                        .expect("payment");
                    (payment, balances)
                });
            }
        }
        let mut replies: HashMap<usize, Vec<(i64, i64)>> = HashMap::new();
        while let Some(outcome) = tasks.join_next().await {
            let (payment, balances) = outcome.expect("task");
            replies.entry(payment).or_default().push(balances);
        }
        assert_eq!(replies.len(), PAYMENTS);
        let mut sources: Vec<i64> = Vec::new();
        for (payment, copies) in &replies {
            assert_eq!(copies.len(), COPIES);
            assert!(
                copies.iter().all(|balances| *balances == copies[0]),
                "payment {payment}: {copies:?}"
            );
            let (source, destination) = copies[0];
            assert_eq!(
                source + destination,
                OPENING,
                "payment {payment}: money is conserved"
            );
            sources.push(source);
        }
        // Each payment moved the amount once: the balances after them are
        // every step from the opening balance down, each seen by one payment.
        sources.sort_unstable();
        let expected: Vec<i64> = (1..=PAYMENTS as i64)
            .rev()
            .map(|step| OPENING - step * AMOUNT)
            .collect();
        assert_eq!(sources, expected);
        let balances: (i64, i64) = redis::cmd("MGET")
            .arg(&source)
            .arg(&destination)
            .query_async(&mut connection)
            .await
            .expect("MGET");
        assert_eq!(
            balances,
            (OPENING - PAYMENTS as i64 * AMOUNT, PAYMENTS as i64 * AMOUNT)
        );
    })
    .await
    .expect("the payments did not finish within 30 s");
}
