//! Latency and throughput of the client variants, sequential and concurrent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use tokio::sync::Barrier;

use crate::BoxError;
use crate::variants::{Variant, Workload, call_once};

/// Latency percentiles and throughput of one row.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    pub calls_per_second: f64,
}

/// Per-call latencies (ns) and the wall time the calls took.
#[derive(Debug, Default)]
pub struct Samples {
    latencies_ns: Vec<u64>,
    wall: Duration,
}

impl Samples {
    fn with_capacity(calls: usize) -> Self {
        Self {
            latencies_ns: Vec::with_capacity(calls),
            wall: Duration::ZERO,
        }
    }

    /// One call that took `elapsed`, back to back with the previous one.
    pub fn push(&mut self, elapsed: Duration) {
        self.latencies_ns.push(nanos(elapsed));
        self.wall += elapsed;
    }

    fn extend(&mut self, other: Samples) {
        self.latencies_ns.extend(other.latencies_ns);
        self.wall += other.wall;
    }

    /// Nearest-rank percentiles over the sorted latencies; throughput is
    /// calls over the summed wall time of the measured rounds.
    pub fn summarize(mut self) -> Summary {
        self.latencies_ns.sort_unstable();
        let calls = self.latencies_ns.len();
        let total_ns: u128 = self.latencies_ns.iter().map(|&ns| u128::from(ns)).sum();
        let wall = self.wall.as_secs_f64();
        Summary {
            p50_us: percentile_ns(&self.latencies_ns, 50.0) / 1_000.0,
            p99_us: percentile_ns(&self.latencies_ns, 99.0) / 1_000.0,
            mean_us: if calls == 0 {
                0.0
            } else {
                total_ns as f64 / calls as f64 / 1_000.0
            },
            calls_per_second: if wall > 0.0 { calls as f64 / wall } else { 0.0 },
        }
    }
}

/// The nearest-rank percentile of sorted values: the smallest value with at
/// least `percent`% of the values at or below it.
fn percentile_ns(sorted: &[u64], percent: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (percent / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// How the measured calls of every variant are split: `rounds` rounds, each
/// giving every variant its share in turn, the order rotating each round.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub calls: usize,
    pub warmup: usize,
    pub rounds: usize,
}

impl Plan {
    fn round_calls(&self, round: usize) -> usize {
        let base = self.calls / self.rounds;
        base + usize::from(round < self.calls % self.rounds)
    }

    fn order(&self, round: usize) -> impl Iterator<Item = (usize, Variant)> {
        let n = Variant::ALL.len();
        (0..n).map(move |i| {
            let index = (round + i) % n;
            (index, Variant::ALL[index])
        })
    }
}

/// One connection, one call in flight: each variant of `workload`, with
/// the returned samples in the order of [`Variant::ALL`].
pub async fn sequential(
    connection: &mut MultiplexedConnection,
    workload: Workload,
    plan: Plan,
) -> Result<Vec<Summary>, BoxError> {
    for variant in Variant::ALL {
        sequential_calls(connection, workload, variant, plan.warmup).await?;
    }
    let mut samples: Vec<Samples> = Variant::ALL
        .iter()
        .map(|_| Samples::with_capacity(plan.calls))
        .collect();
    for round in 0..plan.rounds {
        for (index, variant) in plan.order(round) {
            let measured =
                sequential_calls(connection, workload, variant, plan.round_calls(round)).await?;
            samples[index].extend(measured);
        }
    }
    Ok(samples.into_iter().map(Samples::summarize).collect())
}

async fn sequential_calls(
    connection: &mut MultiplexedConnection,
    workload: Workload,
    variant: Variant,
    calls: usize,
) -> Result<Samples, BoxError> {
    let mut samples = Samples::with_capacity(calls);
    let began = Instant::now();
    for _ in 0..calls {
        let start = Instant::now();
        call_once(connection, workload, variant).await?;
        samples.latencies_ns.push(nanos(start.elapsed()));
    }
    samples.wall = began.elapsed();
    Ok(samples)
}

/// `tasks` tasks sharing one multiplexed connection (each holds a clone of
/// the handle; redis-rs writes their commands to one socket).
pub async fn concurrent(
    connection: &MultiplexedConnection,
    workload: Workload,
    plan: Plan,
    tasks: usize,
) -> Result<Vec<Summary>, BoxError> {
    for variant in Variant::ALL {
        concurrent_calls(connection, workload, variant, plan.warmup, tasks).await?;
    }
    let mut samples: Vec<Samples> = Variant::ALL
        .iter()
        .map(|_| Samples::with_capacity(plan.calls))
        .collect();
    for round in 0..plan.rounds {
        for (index, variant) in plan.order(round) {
            let measured = concurrent_calls(
                connection,
                workload,
                variant,
                plan.round_calls(round),
                tasks,
            )
            .await?;
            samples[index].extend(measured);
        }
    }
    Ok(samples.into_iter().map(Samples::summarize).collect())
}

/// `calls` calls spread over `tasks` tasks that start together; the wall
/// time runs from the first task's start to the last task's end.
async fn concurrent_calls(
    connection: &MultiplexedConnection,
    workload: Workload,
    variant: Variant,
    calls: usize,
    tasks: usize,
) -> Result<Samples, BoxError> {
    let tasks = tasks.min(calls.max(1));
    let barrier = Arc::new(Barrier::new(tasks));
    let mut handles = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let share = calls / tasks + usize::from(task < calls % tasks);
        let mut connection = connection.clone();
        let barrier = Arc::clone(&barrier);
        handles.push(tokio::spawn(async move {
            barrier.wait().await;
            let began = Instant::now();
            let mut latencies = Vec::with_capacity(share);
            for _ in 0..share {
                let start = Instant::now();
                call_once(&mut connection, workload, variant).await?;
                latencies.push(nanos(start.elapsed()));
            }
            Ok::<_, BoxError>((began, Instant::now(), latencies))
        }));
    }
    let mut samples = Samples::with_capacity(calls);
    let mut first_start: Option<Instant> = None;
    let mut last_end: Option<Instant> = None;
    for handle in handles {
        let (began, ended, latencies) = handle.await??;
        first_start = Some(first_start.map_or(began, |t| t.min(began)));
        last_end = Some(last_end.map_or(ended, |t| t.max(ended)));
        samples.latencies_ns.extend(latencies);
    }
    if let (Some(start), Some(end)) = (first_start, last_end) {
        samples.wall = end.duration_since(start);
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile_ns(&values, 50.0), 50.0);
        assert_eq!(percentile_ns(&values, 99.0), 99.0);
        assert_eq!(percentile_ns(&[7], 99.0), 7.0);
        assert_eq!(percentile_ns(&[], 50.0), 0.0);
    }

    #[test]
    fn rounds_cover_every_call_once() {
        let plan = Plan {
            calls: 10,
            warmup: 0,
            rounds: 4,
        };
        let total: usize = (0..plan.rounds).map(|r| plan.round_calls(r)).sum();
        assert_eq!(total, 10);
        let first: Vec<Variant> = plan.order(1).map(|(_, v)| v).collect();
        assert_eq!(
            first,
            vec![
                Variant::HandWritten,
                Variant::RedisRsScript,
                Variant::HandWrittenWithTimer,
                Variant::Generated
            ]
        );
    }
}
