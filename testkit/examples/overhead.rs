//! What a test pays for its server: prints the start time of a server, and
//! the cost of a test's database on the shared server against a server of
//! its own (median of 20 each). The crate docs quote one run.
//!
//! `cargo run --release -p redis-script-test --example overhead`

use std::time::{Duration, Instant};

use redis_script_test::{RedisCluster, RedisServer, State, TestCluster, TestDb};

const RUNS: usize = 20;

/// Cluster starts take seconds: fewer runs.
const CLUSTER_RUNS: usize = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// The median time of `runs` runs of `run`.
fn measure(runs: usize, mut run: impl FnMut()) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // A test's whole life: its database, a connection, a one-key fixture,
    // the state read back, the database dropped.
    let one_test = |db: TestDb| {
        runtime.block_on(async {
            db.given(&State::new().string("k", "v")).await;
            let _connection = db.connection().await;
            db.assert_state(&State::new().string("k", "v")).await;
        });
    };
    let start = measure(RUNS, || drop(RedisServer::start()));
    // The first shared database starts the server; later ones do not.
    drop(TestDb::new());
    let shared = measure(RUNS, || one_test(TestDb::new()));
    let own = measure(RUNS, || one_test(TestDb::own_server()));
    let cluster_start = measure(CLUSTER_RUNS, || drop(RedisCluster::start(3, 1)));
    drop(TestCluster::new());
    let in_namespace = measure(RUNS, || {
        let cluster = TestCluster::new();
        runtime.block_on(async {
            let key = cluster.key("k");
            cluster.given(&State::new().string(&key, "v")).await;
            cluster.assert_state(&State::new().string(&key, "v")).await;
        });
    });
    println!("| what (median) | time |");
    println!("| --- | ---: |");
    println!("| start a server and stop it ({RUNS} runs) | {start:.1?} |");
    println!("| a test on the shared server (`TestDb::new`, {RUNS} runs) | {shared:.1?} |");
    println!("| a test on a server of its own (`TestDb::own_server`, {RUNS} runs) | {own:.1?} |");
    println!(
        "| start a cluster of 3 primaries with a replica each, and stop it ({CLUSTER_RUNS} runs) | {cluster_start:.1?} |"
    );
    println!(
        "| a test in a namespace of the shared cluster (`TestCluster::new`, {RUNS} runs) | {in_namespace:.1?} |"
    );
}
