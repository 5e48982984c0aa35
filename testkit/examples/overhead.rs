//! What a test pays for its server: prints the start time of a server, and
//! the cost of a test's database on the shared server against a server of
//! its own (median of 20 each). The crate docs quote one run.
//!
//! `cargo run --release -p redis-script-test --example overhead`

use std::time::{Duration, Instant};

use redis_script_test::{RedisServer, State, TestDb};

const RUNS: usize = 20;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// The median time of `RUNS` runs of `run`.
fn measure(mut run: impl FnMut()) -> Duration {
    median(
        (0..RUNS)
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
    let start = measure(|| drop(RedisServer::start()));
    // The first shared database starts the server; later ones do not.
    drop(TestDb::new());
    let shared = measure(|| one_test(TestDb::new()));
    let own = measure(|| one_test(TestDb::own_server()));
    println!("| what (median of {RUNS}) | time |");
    println!("| --- | ---: |");
    println!("| start a server and stop it | {start:.1?} |");
    println!("| a test on the shared server (`TestDb::new`) | {shared:.1?} |");
    println!("| a test on a server of its own (`TestDb::own_server`) | {own:.1?} |");
}
