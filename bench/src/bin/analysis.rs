//! How long the compile-time Lua analysis takes, per script.
//!
//! Run: `cargo run --release -p redis-script-bench --bin analysis`
//!
//! The analysis is the `redis-script-analysis` crate the attribute uses.
//! Note that Cargo builds proc macros and their
//! dependencies without optimisation even in release builds unless a
//! profile override says otherwise, so the macro itself runs the analysis
//! slower than this optimised program; the table shows both build modes
//! when run with and without `--release`.

use std::time::{Duration, Instant};

use redis_script_analysis as lua;

#[path = "../corpus.rs"]
mod corpus;

const RUNS: usize = 200;

fn main() {
    let corpus = corpus::scripts();

    let signature = lua::Signature {
        keys: 0,
        args: 0,
        variadic_keys: true,
        variadic_args: true,
        allow_unused: true,
        dynamic_keys: true,
        ..lua::Signature::default()
    };
    let big = corpus::one_chunk(&corpus, 500);
    let big_lines = big.lines().count();

    println!(
        "Lua analysis time ({} build, {RUNS} runs each)\n",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!("| script | lines | median ms | p99 ms | min ms |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let row = |name: &str, source: &str| {
        let times = time_analysis(source, &signature);
        println!(
            "| {name} | {} | {:.3} | {:.3} | {:.3} |",
            source.lines().count(),
            millis(percentile(&times, 50)),
            millis(percentile(&times, 99)),
            millis(percentile(&times, 0)),
        );
    };
    row(
        &format!("{} corpus scripts in one chunk", corpus.len()),
        &big,
    );
    let parse_times = time(|| {
        std::hint::black_box(full_moon::parse_fallible(
            &big,
            full_moon::LuaVersion::lua51(),
        ));
    });
    println!(
        "| (of which the full_moon parse alone) | {big_lines} | {:.3} | {:.3} | {:.3} |",
        millis(percentile(&parse_times, 50)),
        millis(percentile(&parse_times, 99)),
        millis(percentile(&parse_times, 0)),
    );
    for (name, source) in corpus.iter().take(5) {
        row(name, source);
    }
    println!("\n{big_lines}-line script: every corpus script as a local function of one chunk.");
}

fn time_analysis(source: &str, signature: &lua::Signature) -> Vec<Duration> {
    time(|| {
        std::hint::black_box(lua::analyze(source, signature));
    })
}

/// `RUNS` timings of `work`, sorted.
fn time(mut work: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    let index = (sorted.len().saturating_sub(1) * percent) / 100;
    sorted.get(index).copied().unwrap_or_default()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
