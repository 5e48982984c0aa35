//! Latency and throughput of ways of making a call, sequential and
//! concurrent, the ways taking turns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Barrier;

use crate::BoxError;

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

/// How the measured calls of every way are split: `rounds` rounds, each
/// giving every way its share in turn, the order rotating each round.
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

    /// The indices of `ways` ways in the order they go in `round`.
    fn order(&self, round: usize, ways: usize) -> impl Iterator<Item = usize> {
        (0..ways).map(move |i| (round + i) % ways)
    }
}

/// One way of making a call: a row measured in turns with the others.
/// Clones share the way's connection; each concurrent task takes one.
pub trait Way: Clone + Send + 'static {
    /// The call numbered `n` within one share (unique across its tasks),
    /// so that a way may spread its calls over keys.
    fn call(&mut self, n: usize) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// `plan.rounds` rounds in which each of `ways` ways runs its share of
/// `plan.calls` through `share(index, calls)`, the order rotating each
/// round so that drift (CPU frequency, server state) is shared. The
/// samples come back in the order of the indices.
///
/// `share` may do unmeasured work around the calls it times, e.g. reset
/// and read server counters, so that they count one way's calls alone.
pub async fn in_turns(
    plan: Plan,
    ways: usize,
    mut share: impl AsyncFnMut(usize, usize) -> Result<Samples, BoxError>,
) -> Result<Vec<Samples>, BoxError> {
    let mut samples: Vec<Samples> = (0..ways)
        .map(|_| Samples::with_capacity(plan.calls))
        .collect();
    for round in 0..plan.rounds {
        for index in plan.order(round, ways) {
            let measured = share(index, plan.round_calls(round)).await?;
            samples[index].extend(measured);
        }
    }
    Ok(samples)
}

/// One call in flight: `plan.warmup` calls of each way, then the measured
/// calls in turns; summaries in the order of `ways`.
pub async fn sequential<W: Way>(ways: &mut [W], plan: Plan) -> Result<Vec<Summary>, BoxError> {
    for way in ways.iter_mut() {
        sequential_calls(way, plan.warmup).await?;
    }
    let samples = in_turns(plan, ways.len(), async |index, calls| {
        sequential_calls(&mut ways[index], calls).await
    })
    .await?;
    Ok(samples.into_iter().map(Samples::summarize).collect())
}

/// `calls` calls back to back on `way`.
pub async fn sequential_calls<W: Way>(way: &mut W, calls: usize) -> Result<Samples, BoxError> {
    let mut samples = Samples::with_capacity(calls);
    let began = Instant::now();
    for n in 0..calls {
        let start = Instant::now();
        way.call(n).await?;
        samples.latencies_ns.push(nanos(start.elapsed()));
    }
    samples.wall = began.elapsed();
    Ok(samples)
}

/// `tasks` tasks per way, each with a clone of it (for a redis-rs
/// connection, a handle of the same connection: its commands go to one
/// socket): `plan.warmup` calls of each way, then the measured calls in
/// turns; summaries in the order of `ways`.
pub async fn concurrent<W: Way>(
    ways: &[W],
    plan: Plan,
    tasks: usize,
) -> Result<Vec<Summary>, BoxError> {
    for way in ways {
        concurrent_calls(way, plan.warmup, tasks).await?;
    }
    let samples = in_turns(plan, ways.len(), async |index, calls| {
        concurrent_calls(&ways[index], calls, tasks).await
    })
    .await?;
    Ok(samples.into_iter().map(Samples::summarize).collect())
}

/// `calls` calls spread over `tasks` tasks that start together; the wall
/// time runs from the first task's start to the last task's end.
pub async fn concurrent_calls<W: Way>(
    way: &W,
    calls: usize,
    tasks: usize,
) -> Result<Samples, BoxError> {
    let tasks = tasks.min(calls.max(1));
    let barrier = Arc::new(Barrier::new(tasks));
    let mut handles = Vec::with_capacity(tasks);
    for task in 0..tasks {
        let share = calls / tasks + usize::from(task < calls % tasks);
        let mut way = way.clone();
        let barrier = Arc::clone(&barrier);
        handles.push(tokio::spawn(async move {
            barrier.wait().await;
            let began = Instant::now();
            let mut latencies = Vec::with_capacity(share);
            for i in 0..share {
                let start = Instant::now();
                way.call(task + i * tasks).await?;
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
        let second: Vec<usize> = plan.order(1, 4).collect();
        assert_eq!(second, vec![1, 2, 3, 0]);
    }
}
