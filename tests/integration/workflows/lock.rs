//! Lock with fencing tokens (`lua/lock_acquire.lua`, `lua/lock_extend.lua`,
//! `lua/release_lock.lua`): contenders never overlap, fencing tokens
//! strictly increase, only the owner releases or extends, and an expired
//! lock goes to the next owner while the old one's release is refused.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script_examples::workflows::lock::Lock;
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};
use tokio::sync::Barrier;
use tokio::time::timeout;

const TASKS: usize = 20;
const ROUNDS: usize = 10;
/// Far longer than any critical section here: a lock never expires while
/// held, so every release must succeed.
const HOLD_TTL: Duration = Duration::from_secs(30);
const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_contenders_never_overlap() {
    let db = TestDb::new();
    contenders_never_overlap(db.connection().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_only_the_owner_releases_or_extends() {
    let db = TestDb::new();
    only_the_owner_releases_or_extends(db.connection().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_expired_lock_goes_to_the_next_owner() {
    let db = TestDb::new();
    expired_lock_goes_to_the_next_owner(db.connection().await).await;
}

/// Every scenario on one 3-primary cluster (one cluster start for all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_all_scenarios() {
    let cluster = RedisCluster::start(3, 1);
    let connection = cluster.connection().await;
    contenders_never_overlap(connection.clone()).await;
    only_the_owner_releases_or_extends(connection.clone()).await;
    expired_lock_goes_to_the_next_owner(connection).await;
}

async fn stored_token<C: ConnectionLike>(connection: &mut C, key: &str) -> Option<String> {
    redis::cmd("GET")
        .arg(key)
        .query_async(connection)
        .await
        .expect("GET")
}

/// 20 tasks take the same lock 10 times each. Inside the critical section
/// a shared counter must be 0 on entry (no one else inside), and the
/// fencing token must exceed the previous holder's.
async fn contenders_never_overlap<C>(connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "lock:{contended}";
    let inside = Arc::new(AtomicUsize::new(0));
    let last_fencing = Arc::new(Mutex::new(0u64));
    let busy = Arc::new(AtomicU64::new(0));
    let barrier = Arc::new(Barrier::new(TASKS));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let mut connection = connection.clone();
        let (inside, last_fencing, busy, barrier) = (
            inside.clone(),
            last_fencing.clone(),
            busy.clone(),
            barrier.clone(),
        );
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            for _ in 0..ROUNDS {
                let lock = loop {
                    match Lock::acquire(&mut connection, key, HOLD_TTL)
                        .await
                        .expect("acquire")
                    {
                        Some(lock) => break lock,
                        None => {
                            busy.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                    }
                };
                let others = inside.fetch_add(1, Ordering::SeqCst);
                assert_eq!(others, 0, "two holders inside the critical section");
                {
                    let mut last = last_fencing.lock().expect("fencing mutex");
                    assert!(
                        lock.fencing > *last,
                        "fencing {} after {}",
                        lock.fencing,
                        *last
                    );
                    *last = lock.fencing;
                }
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
                assert!(
                    lock.release(&mut connection).await.expect("release"),
                    "the owner releases"
                );
            }
        }));
    }
    for task in tasks {
        timeout(patience::scaled(LIMIT), task)
            .await
            .expect("contender timed out")
            .expect("contender panicked");
    }
    let last = *last_fencing.lock().expect("fencing mutex");
    assert_eq!(
        last,
        (TASKS * ROUNDS) as u64,
        "one fencing token per acquisition"
    );
    assert_eq!(inside.load(Ordering::SeqCst), 0);
    let mut connection = connection;
    assert_eq!(
        stored_token(&mut connection, key).await,
        None,
        "released at the end"
    );
    println!(
        "lock contention: {} acquisitions, {} busy answers, fencing 1..={last}",
        TASKS * ROUNDS,
        busy.load(Ordering::Relaxed)
    );
}

/// While the owner holds the lock, 50 other tokens try to release and
/// extend it concurrently: all are refused and the owner keeps it.
async fn only_the_owner_releases_or_extends<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "lock:{owned}";
    let owner = Lock::acquire(&mut connection, key, HOLD_TTL)
        .await
        .expect("acquire")
        .expect("free lock");
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let mut connection = connection.clone();
        let intruder = Lock {
            token: redis_script_examples::owner_token(),
            ..owner.clone()
        };
        tasks.push(tokio::spawn(async move {
            let acquired = Lock::acquire(&mut connection, key, HOLD_TTL)
                .await
                .expect("acquire");
            let extended = intruder
                .extend(&mut connection, Duration::from_secs(600))
                .await
                .expect("extend");
            let released = intruder.release(&mut connection).await.expect("release");
            (acquired, extended, released)
        }));
    }
    for task in tasks {
        let (acquired, extended, released) = timeout(patience::scaled(LIMIT), task)
            .await
            .expect("intruder timed out")
            .expect("intruder panicked");
        assert_eq!(
            acquired, None,
            "a held lock is not acquired by another owner"
        );
        assert!(!extended, "a non-owner extended the lock");
        assert!(!released, "a non-owner released the lock");
    }
    assert_eq!(
        stored_token(&mut connection, key).await.as_deref(),
        Some(owner.token.as_str())
    );
    let pttl: i64 = redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut connection)
        .await
        .expect("PTTL");
    assert!(
        pttl > 0 && pttl <= HOLD_TTL.as_millis() as i64,
        "not extended by intruders: {pttl}"
    );

    // Acquiring again with the owner's own token (a retry) keeps its fencing token.
    let again = Lock::acquire_with_token(&mut connection, key, &owner.token, HOLD_TTL)
        .await
        .expect("re-acquire");
    assert_eq!(
        again.as_ref(),
        Some(&owner),
        "a retried acquire returns the same lock"
    );
    assert!(
        owner
            .extend(&mut connection, Duration::from_secs(60))
            .await
            .expect("extend")
    );
    assert!(owner.release(&mut connection).await.expect("release"));
    assert!(
        !owner.release(&mut connection).await.expect("release again"),
        "nothing left"
    );
    assert!(
        !owner
            .extend(&mut connection, HOLD_TTL)
            .await
            .expect("extend"),
        "not held any more"
    );
}

/// A lock taken with a short TTL expires; 20 contenders race for it and
/// exactly one wins, with a greater fencing token. The old owner can then
/// neither release nor extend it.
async fn expired_lock_goes_to_the_next_owner<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "lock:{expiring}";
    let old = Lock::acquire(&mut connection, key, Duration::from_millis(50))
        .await
        .expect("acquire")
        .expect("free lock");
    // Wait until Redis expired it (no timing assertion: just poll).
    timeout(patience::scaled(LIMIT), async {
        while stored_token(&mut connection, key).await.is_some() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the lock never expired");

    let barrier = Arc::new(Barrier::new(TASKS));
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let (mut connection, barrier) = (connection.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            Lock::acquire(&mut connection, key, HOLD_TTL)
                .await
                .expect("acquire")
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        if let Some(lock) = timeout(patience::scaled(LIMIT), task)
            .await
            .expect("contender timed out")
            .expect("contender panicked")
        {
            winners.push(lock);
        }
    }
    assert_eq!(
        winners.len(),
        1,
        "exactly one contender takes the expired lock"
    );
    let new = winners.remove(0);
    assert!(
        new.fencing > old.fencing,
        "fencing {} after {}",
        new.fencing,
        old.fencing
    );

    assert!(
        !old.release(&mut connection).await.expect("release"),
        "the expired owner's release is refused"
    );
    assert!(
        !old.extend(&mut connection, HOLD_TTL).await.expect("extend"),
        "the expired owner cannot extend"
    );
    assert_eq!(
        stored_token(&mut connection, key).await.as_deref(),
        Some(new.token.as_str())
    );
    assert!(new.release(&mut connection).await.expect("release"));
}
