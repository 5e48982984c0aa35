//! Rate limiters under concurrency: 1000 simultaneous requests against a
//! limit of 100 admit exactly 100 (fixed window, and sliding window when
//! they all fall in one window); requests spread over several windows never
//! have more than the limit admitted within any window (sliding).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use redis::aio::ConnectionLike;
use redis_script_examples::workflows::rate_limit::{
    Decision, rate_limit_fixed, rate_limit_sliding, request_id,
};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb, concurrently};

const REQUESTS: usize = 1_000;
const LIMIT: u64 = 100;
const LONG_WINDOW_MS: u64 = 60_000;
const TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limiters_hold_their_limit_on_a_standalone_server() {
    let db = TestDb::new();
    // Several connections, so requests really race on the server.
    let mut connections = Vec::new();
    for _ in 0..4 {
        connections.push(db.connection().await);
    }
    run_all(&connections).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limiters_hold_their_limit_on_a_cluster() {
    let cluster = RedisCluster::start(3, 1);
    let mut connections = Vec::new();
    for _ in 0..2 {
        connections.push(cluster.connection().await);
    }
    run_all(&connections).await;
}

async fn run_all<C>(connections: &[C])
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    tokio::time::timeout(patience::scaled(TIMEOUT), async {
        fixed_window_burst(connections, "rl:{tenant-fixed}:api").await;
        sliding_window_burst(connections, "rl:{tenant-sliding}:api").await;
        sliding_window_retry_is_idempotent(&connections[0], "rl:{tenant-retry}:api").await;
        sliding_window_over_several_windows(connections, "rl:{tenant-spread}:api").await;
    })
    .await
    .expect("the rate-limit scenarios did not finish within 30 s");
}

/// Sends `REQUESTS` concurrent requests, released together, round-robin
/// over `connections`.
async fn burst<C, F, Fut>(connections: &[C], request: F) -> Vec<(String, Decision)>
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
    F: Fn(C, String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Decision, redis_script::Error>> + Send + 'static,
{
    let connections = connections.to_vec();
    let outcomes = concurrently(REQUESTS, 1, move |turn| {
        let id = request_id();
        let call = request(
            connections[turn.task % connections.len()].clone(),
            id.clone(),
        );
        async move { (id, call.await) }
    })
    .await;
    outcomes
        .into_iter()
        .map(|(id, decision)| {
            let decision = decision.unwrap_or_else(|error| panic!("request failed: {error}"));
            (id, decision)
        })
        .collect()
}

/// The position of an admitted request in its window (`None` for a
/// denied one), after checking what every decision promises.
fn admission(decision: &Decision) -> Option<u64> {
    match *decision {
        Decision::Allowed { count, remaining } => {
            assert_eq!(count + remaining, LIMIT, "{decision:?}");
            Some(count)
        }
        Decision::Denied {
            count,
            retry_after_ms,
        } => {
            assert_eq!(count, LIMIT, "{decision:?}");
            assert!(
                (1..=LONG_WINDOW_MS).contains(&retry_after_ms),
                "{decision:?}"
            );
            None
        }
    }
}

async fn fixed_window_burst<C>(connections: &[C], counter: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let decisions = burst(connections, move |mut connection, _id| async move {
        rate_limit_fixed(&mut connection, counter, LIMIT, LONG_WINDOW_MS).await
    })
    .await;

    let mut admitted: Vec<u64> = decisions
        .iter()
        .filter_map(|(_, decision)| admission(decision))
        .collect();
    admitted.sort_unstable();
    // Exactly the limit, and each admission got its own position 1..=100.
    assert_eq!(admitted, (1..=LIMIT).collect::<Vec<_>>());
    println!(
        "fixed window: {} of {REQUESTS} concurrent requests admitted (limit {LIMIT})",
        admitted.len()
    );

    let mut connection = connections[0].clone();
    let stored: u64 = redis::cmd("GET")
        .arg(counter)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(stored, LIMIT);
    let ttl: i64 = redis::cmd("PTTL")
        .arg(counter)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        (1..=LONG_WINDOW_MS as i64).contains(&ttl),
        "the counter must expire with its window, PTTL {ttl}"
    );
}

async fn sliding_window_burst<C>(connections: &[C], log: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let decisions = burst(connections, move |mut connection, id| async move {
        rate_limit_sliding(&mut connection, log, LIMIT, LONG_WINDOW_MS, &id).await
    })
    .await;

    let mut counts = Vec::new();
    let mut admitted_ids = BTreeSet::new();
    for (id, decision) in &decisions {
        if let Some(count) = admission(decision) {
            counts.push(count);
            admitted_ids.insert(id.clone());
        }
    }
    counts.sort_unstable();
    // All 1000 requests fall in one 60 s window: exactly the limit is admitted.
    assert_eq!(counts, (1..=LIMIT).collect::<Vec<_>>());
    println!(
        "sliding window: {} of {REQUESTS} concurrent requests admitted (limit {LIMIT})",
        counts.len()
    );

    // The log holds exactly the admitted requests' ids.
    let mut connection = connections[0].clone();
    let logged: BTreeSet<String> = redis::cmd("ZRANGE")
        .arg(log)
        .arg(0)
        .arg(-1)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(logged, admitted_ids);
    let ttl: i64 = redis::cmd("PTTL")
        .arg(log)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        (1..=LONG_WINDOW_MS as i64).contains(&ttl),
        "the log must expire, PTTL {ttl}"
    );
}

/// Calling again with the id of an admitted request admits nothing more.
async fn sliding_window_retry_is_idempotent<C>(connection: &C, log: &str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let mut connection = connection.clone();
    let id = request_id();
    let first = rate_limit_sliding(&mut connection, log, 2, LONG_WINDOW_MS, &id)
        .await
        .unwrap();
    assert_eq!(
        first,
        Decision::Allowed {
            count: 1,
            remaining: 1
        }
    );
    for _ in 0..3 {
        let again = rate_limit_sliding(&mut connection, log, 2, LONG_WINDOW_MS, &id)
            .await
            .unwrap();
        assert_eq!(
            again, first,
            "a retry with the same id is not a new request"
        );
    }
    let second = rate_limit_sliding(&mut connection, log, 2, LONG_WINDOW_MS, &request_id())
        .await
        .unwrap();
    assert_eq!(
        second,
        Decision::Allowed {
            count: 2,
            remaining: 0
        }
    );
    let third = rate_limit_sliding(&mut connection, log, 2, LONG_WINDOW_MS, &request_id())
        .await
        .unwrap();
    assert!(
        matches!(third, Decision::Denied { count: 2, .. }),
        "{third:?}"
    );
}

/// Requests spread over several windows: whatever the timing, no window
/// of `WINDOW_MS` contains more than `SPREAD_LIMIT` admissions.
async fn sliding_window_over_several_windows<C>(connections: &[C], log: &'static str)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    const TASKS: usize = 8;
    const REQUESTS_PER_TASK: usize = 50;
    const SPREAD_LIMIT: u64 = 10;
    const WINDOW_MS: u64 = 100;

    let start = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let mut connection = connections[task % connections.len()].clone();
            tokio::spawn(async move {
                let mut admitted = Vec::new();
                for _ in 0..REQUESTS_PER_TASK {
                    let sent = start.elapsed();
                    let decision = rate_limit_sliding(
                        &mut connection,
                        log,
                        SPREAD_LIMIT,
                        WINDOW_MS,
                        &request_id(),
                    )
                    .await
                    .unwrap_or_else(|error| panic!("request failed: {error}"));
                    let answered = start.elapsed();
                    match decision {
                        Decision::Allowed { count, .. } => {
                            assert!(count <= SPREAD_LIMIT, "{decision:?}");
                            admitted.push((sent, answered));
                        }
                        Decision::Denied { count, .. } => {
                            assert!(count >= SPREAD_LIMIT, "{decision:?}");
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(8)).await;
                }
                admitted
            })
        })
        .collect();
    let mut admitted = Vec::new();
    for task in tasks {
        admitted.extend(task.await.expect("a request task panicked"));
    }
    let span = start.elapsed();
    // The server admitted request i at some instant within [sent_i, answered_i].
    // Every request whose whole interval lies inside [x, x + window) was
    // admitted inside that window, so for any x there can be at most the
    // limit of them. (A sound check: it never blames the limiter for
    // network latency.) Checking every x = sent_j covers every maximal set.
    // The script stamps admissions in whole milliseconds of the server clock,
    // so the real-time guarantee covers windows 1 ms shorter than WINDOW_MS.
    let window = Duration::from_millis(WINDOW_MS - 1);
    for &(x, _) in &admitted {
        let inside = admitted
            .iter()
            .filter(|&&(sent, answered)| sent >= x && answered < x + window)
            .count() as u64;
        assert!(
            inside <= SPREAD_LIMIT,
            "{inside} admissions within {window:?} from {x:?} (limit {SPREAD_LIMIT} per {WINDOW_MS} ms)"
        );
    }
    assert!(
        admitted.len() as u64 >= SPREAD_LIMIT,
        "the first window alone admits {SPREAD_LIMIT}, got {}",
        admitted.len()
    );
    println!(
        "sliding window over {span:?}: {} of {} requests admitted, limit {SPREAD_LIMIT} per {WINDOW_MS} ms",
        admitted.len(),
        TASKS * REQUESTS_PER_TASK
    );
}
