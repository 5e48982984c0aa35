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

use std::path::Path;
use std::time::{Duration, Instant};

use redis_script_analysis as lua;

const RUNS: usize = 200;

fn main() {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lua/corpus");
    let mut corpus: Vec<(String, String)> = std::fs::read_dir(&corpus_dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", corpus_dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "lua"))
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            (name, source)
        })
        .collect();
    corpus.sort();

    let signature = lua::Signature {
        keys: 0,
        args: 0,
        variadic_keys: true,
        variadic_args: true,
        allow_unused: true,
        dynamic_keys: true,
        ..lua::Signature::default()
    };
    let big = large_script(&corpus, 500);
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

/// One chunk holding every corpus script as a local function, repeated
/// until it has at least `min_lines` lines.
fn large_script(corpus: &[(String, String)], min_lines: usize) -> String {
    let mut chunk = String::new();
    let mut round = 0;
    while chunk.lines().count() < min_lines {
        for (name, source) in corpus {
            let body: String = source
                .lines()
                .filter(|line| !line.starts_with("#!"))
                .map(|line| format!("  {line}\n"))
                .collect();
            chunk.push_str(&format!("local function {name}_{round}()\n{body}end\n"));
        }
        round += 1;
    }
    chunk.push_str("return 1\n");
    chunk
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
