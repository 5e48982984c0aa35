//! Idempotency (`lua/idempotency_claim.lua`, `lua/idempotency_complete.lua`):
//! 200 concurrent duplicates of one request run the side effect exactly
//! once; every other one sees Busy or the stored replay; only the claimant
//! completes, and only while its claim is live.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::Failure;
use redis_script_examples::owner_token;
use redis_script_examples::workflows::idempotency::{Claim, CompleteError, claim, complete};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};
use tokio::sync::Barrier;
use tokio::time::timeout;

const DUPLICATES: usize = 200;
const LEASE: Duration = Duration::from_secs(30);
const KEEP: Duration = Duration::from_secs(600);
const LIMIT: Duration = Duration::from_secs(30);
const BODY: &[u8] = b"{\"order\":\"o-1\"}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_duplicates_run_the_side_effect_once() {
    let db = TestDb::new();
    duplicates_run_the_side_effect_once(db.connection().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_only_the_live_claimant_completes() {
    let db = TestDb::new();
    only_the_live_claimant_completes(db.connection().await).await;
}

/// Every scenario on one 3-primary cluster (one cluster start for all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_all_scenarios() {
    let cluster = RedisCluster::start(3, 1);
    let connection = cluster.connection().await;
    duplicates_run_the_side_effect_once(connection.clone()).await;
    only_the_live_claimant_completes(connection).await;
}

#[derive(Debug, Default)]
struct Seen {
    claimed: AtomicUsize,
    busy: AtomicUsize,
    replayed: AtomicUsize,
    side_effects: AtomicUsize,
}

/// 200 duplicates start together, each with its own claimant token. The
/// claimant runs the side effect (a shared counter and an `INCR`) and
/// completes; the others poll until they get the replay.
async fn duplicates_run_the_side_effect_once<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "idem:{order-1}";
    let effects_key = "idem:{order-1}:effects";
    let seen = Arc::new(Seen::default());
    let barrier = Arc::new(Barrier::new(DUPLICATES));
    let mut tasks = Vec::new();
    for _ in 0..DUPLICATES {
        let (mut connection, seen, barrier) = (connection.clone(), seen.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let claimant = owner_token();
            barrier.wait().await;
            loop {
                match claim(&mut connection, key, &claimant, LEASE)
                    .await
                    .expect("claim")
                {
                    Claim::Claimed => {
                        seen.claimed.fetch_add(1, Ordering::SeqCst);
                        seen.side_effects.fetch_add(1, Ordering::SeqCst);
                        let _: i64 = redis::cmd("INCR")
                            .arg(effects_key)
                            .query_async(&mut connection)
                            .await
                            .expect("INCR");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        complete(&mut connection, key, &claimant, 201, BODY, KEEP)
                            .await
                            .unwrap_or_else(|error| panic!("complete: {error}"));
                        return;
                    }
                    Claim::Busy { retry_ms } => {
                        assert!(retry_ms > 0, "a busy claim has a live lease: {retry_ms}");
                        seen.busy.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    Claim::Replay { status, body } => {
                        assert_eq!(
                            (status, body.as_slice()),
                            (201, BODY),
                            "the stored response"
                        );
                        seen.replayed.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                }
            }
        }));
    }
    for task in tasks {
        timeout(patience::scaled(LIMIT), task)
            .await
            .expect("duplicate timed out")
            .expect("duplicate panicked");
    }
    assert_eq!(seen.claimed.load(Ordering::SeqCst), 1, "exactly one claim");
    assert_eq!(
        seen.side_effects.load(Ordering::SeqCst),
        1,
        "the side effect ran once"
    );
    let effects: i64 = redis::cmd("GET")
        .arg(effects_key)
        .query_async(&mut connection)
        .await
        .expect("GET");
    assert_eq!(effects, 1, "the side effect ran once (server side)");
    assert_eq!(
        seen.replayed.load(Ordering::SeqCst),
        DUPLICATES - 1,
        "every duplicate got the replay"
    );
    println!(
        "idempotency: {DUPLICATES} duplicates, 1 claim, {} busy answers, {} replays",
        seen.busy.load(Ordering::Relaxed),
        seen.replayed.load(Ordering::SeqCst)
    );
}

/// Completion is refused to non-claimants, to unknown records and to a
/// claimant whose lease ran out and whose request was taken over.
async fn only_the_live_claimant_completes<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "idem:{order-2}";
    let (first, second) = (owner_token(), owner_token());

    let unknown = complete(
        &mut connection,
        "idem:{never-claimed}",
        &first,
        200,
        b"",
        KEEP,
    )
    .await;
    assert!(
        matches!(
            unknown,
            Err(Failure::Declared(CompleteError::NotClaimed { .. }))
        ),
        "{unknown:?}"
    );

    // A claim with a short lease; the claimant "crashes" and never completes.
    let claimed = claim(&mut connection, key, &first, Duration::from_millis(50))
        .await
        .expect("claim");
    assert_eq!(claimed, Claim::Claimed);
    let refused = complete(&mut connection, key, &second, 500, b"no", KEEP).await;
    assert!(
        matches!(
            refused,
            Err(Failure::Declared(CompleteError::NotOwner { .. }))
        ),
        "{refused:?}"
    );
    assert_eq!(
        claim(&mut connection, key, &first, Duration::from_millis(50))
            .await
            .expect("claim"),
        Claim::Claimed,
        "a retried claim by the claimant"
    );

    // After the lease ran out, a duplicate takes the request over.
    let taken = timeout(patience::scaled(LIMIT), async {
        loop {
            match claim(&mut connection, key, &second, LEASE)
                .await
                .expect("claim")
            {
                Claim::Claimed => return,
                Claim::Busy { .. } => tokio::time::sleep(Duration::from_millis(10)).await,
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await;
    assert!(taken.is_ok(), "the expired claim was never taken over");

    let late = complete(&mut connection, key, &first, 201, b"late", KEEP).await;
    assert!(
        matches!(late, Err(Failure::Declared(CompleteError::NotOwner { .. }))),
        "the expired claimant cannot complete: {late:?}"
    );
    complete(&mut connection, key, &second, 201, BODY, KEEP)
        .await
        .expect("complete");
    complete(&mut connection, key, &second, 202, b"retry", KEEP)
        .await
        .expect("a retried completion is accepted");
    let late = complete(&mut connection, key, &first, 201, b"late", KEEP).await;
    assert!(
        matches!(late, Err(Failure::Declared(CompleteError::NotOwner { .. }))),
        "{late:?}"
    );
    let replay = claim(&mut connection, key, &owner_token(), LEASE)
        .await
        .expect("claim");
    assert_eq!(
        replay,
        Claim::Replay {
            status: 201,
            body: BODY.to_vec()
        },
        "the first completion is kept"
    );
}
