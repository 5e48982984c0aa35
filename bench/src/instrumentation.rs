//! What the telemetry costs a call, without the network: the generated
//! call of `lua/rate_limit_fixed.lua` (a tagged reply, so the reply tag is
//! read too) on a connection that answers at once with a canned reply,
//! next to a hand-written `EVALSHA` on the same connection; with nothing
//! listening, with a `tracing` subscriber recording the span, and, in the
//! build with the runtime's `metrics` feature, with a `metrics` recorder
//! (Prometheus) and with both.
//!
//! This program runs without the feature, as users do by default; it asks
//! a second build of itself (`--features telemetry`) for the rows with it.

use std::hint::black_box;

use redis::{RedisResult, Value};

use crate::encode::measure;
use crate::functions::{Decision, rate_limit_fixed};

const COUNTER: &str = "redis-script-bench:{quota}:counter";

/// Whether this build has the runtime's `metrics` feature.
const METRICS: bool = cfg!(feature = "telemetry");

/// A synchronous connection that answers every command with `DENIED`.
struct Canned;

impl redis::ConnectionLike for Canned {
    fn req_packed_command(&mut self, command: &[u8]) -> RedisResult<Value> {
        black_box(command);
        Ok(Value::Array(vec![
            Value::BulkString(b"DENIED".to_vec()),
            Value::Int(1),
            Value::Int(5000),
        ]))
    }

    fn req_packed_commands(
        &mut self,
        commands: &[u8],
        _offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        (0..count)
            .map(|_| self.req_packed_command(commands))
            .collect()
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// One row: nanoseconds and allocations per call.
#[derive(Debug, Clone)]
pub struct InstrumentationRow {
    pub label: String,
    pub ns: f64,
    pub allocations: f64,
}

impl InstrumentationRow {
    /// The row as one tab-separated line, for the main run.
    pub fn to_line(&self) -> String {
        format!("{}\t{}\t{}", self.label, self.ns, self.allocations)
    }

    fn from_line(line: &str) -> Option<Self> {
        let mut parts = line.split('\t');
        Some(Self {
            label: parts.next()?.to_owned(),
            ns: parts.next()?.parse().ok()?,
            allocations: parts.next()?.parse().ok()?,
        })
    }
}

fn generated_call(connection: &mut Canned) {
    let decision = rate_limit_fixed::call(COUNTER, 1, 60_000).invoke_blocking(connection);
    assert!(matches!(decision, Ok(Decision::Denied { .. })));
}

fn subscriber() -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(std::io::sink)
        .finish()
}

/// The rows this build can measure. Runs on one thread with nothing else
/// running, like the encoding table.
pub fn this_build(iterations: usize) -> Vec<InstrumentationRow> {
    let feature = if METRICS { "on" } else { "off" };
    let mut connection = Canned;
    let mut rows = Vec::new();
    let mut row = |label: String, (ns, allocations)| {
        rows.push(InstrumentationRow {
            label,
            ns,
            allocations,
        })
    };
    if !METRICS {
        let sha = rate_limit_fixed::SCRIPT.sha1();
        row(
            "hand-written `cmd(\"EVALSHA\")…query()`, no decoding".to_owned(),
            measure(iterations, || {
                let reply: Value = hand_written(sha)
                    .query(&mut connection)
                    .unwrap_or(Value::Nil);
                black_box(reply);
            }),
        );
    }
    row(
        format!("generated call, `metrics` feature {feature}, no subscriber, no recorder"),
        measure(iterations, || generated_call(&mut connection)),
    );
    row(
        format!("generated call, `metrics` feature {feature}, `tracing` subscriber (fmt, INFO)"),
        tracing::subscriber::with_default(subscriber(), || {
            measure(iterations, || generated_call(&mut connection))
        }),
    );
    #[cfg(feature = "telemetry")]
    {
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        row(
            "generated call, `metrics` feature on, Prometheus recorder".to_owned(),
            metrics::with_local_recorder(&recorder, || {
                measure(iterations, || generated_call(&mut connection))
            }),
        );
        row(
            "generated call, `metrics` feature on, subscriber and recorder".to_owned(),
            tracing::subscriber::with_default(subscriber(), || {
                metrics::with_local_recorder(&recorder, || {
                    measure(iterations, || generated_call(&mut connection))
                })
            }),
        );
    }
    rows
}

/// An async connection that answers every command with `DENIED`, at once
/// or after one pending poll.
struct CannedAsync(Answer);

impl redis::aio::ConnectionLike for CannedAsync {
    fn req_packed_command<'a>(
        &'a mut self,
        command: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, Value> {
        black_box(command);
        let answer = self.0;
        Box::pin(async move {
            wait_for(answer).await;
            redis::ConnectionLike::req_packed_command(&mut Canned, b"")
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        commands: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        black_box(commands);
        let answer = self.0;
        Box::pin(async move {
            wait_for(answer).await;
            redis::ConnectionLike::req_packed_commands(&mut Canned, b"", offset, count)
        })
    }

    fn get_db(&self) -> i64 {
        0
    }
}

/// How the canned async connection answers.
#[derive(Clone, Copy)]
enum Answer {
    /// At once: the call's futures are ready on their first poll.
    AtOnce,
    /// After one `Pending` (it wakes itself first), as a reply from the
    /// network is: the deadline's timer is armed, the span entered twice.
    AfterOnePending,
}

/// The hand-written call of the telemetry and breakdown rows: `EVALSHA`
/// of `lua/rate_limit_fixed.lua` as sent, with the SHA precomputed.
fn hand_written(sha: &str) -> redis::Cmd {
    let mut command = redis::cmd("EVALSHA");
    command.arg(sha).arg(1).arg(COUNTER).arg(1).arg(60_000);
    command
}

/// What the canned connection waits before it answers.
async fn wait_for(answer: Answer) {
    if let Answer::AfterOnePending = answer {
        pending_once().await;
    }
}

/// A future that is pending once, having woken its task, then ready.
async fn pending_once() {
    let mut pending = true;
    std::future::poll_fn(|context| {
        if std::mem::take(&mut pending) {
            context.waker().wake_by_ref();
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
}

/// One row of the warm-call breakdown: nanoseconds per call on each
/// runtime flavor and answer ([`BREAKDOWN_COLUMNS`]), and allocations.
#[derive(Debug, Clone)]
pub struct BreakdownRow {
    pub label: &'static str,
    pub ns: Vec<f64>,
    pub allocations: f64,
}

/// The columns of the breakdown, in the order of [`BreakdownRow::ns`].
pub const BREAKDOWN_COLUMNS: [&str; 4] = [
    "current-thread, answer at once",
    "current-thread, answer after a pending",
    "multi-thread, answer at once",
    "multi-thread, answer after a pending",
];

/// Where a warm call's client-side time goes, without the network: the
/// generated call and a hand-written `query_async` on an async connection
/// that answers `DENIED` canned, at once or after one pending poll, with
/// one `block_on` per call on tokio's current-thread and multi-thread
/// runtimes, also with a `tracing` subscriber installed; and the parts
/// alone: the `block_on`, the deadline's timer around the answer, the
/// telemetry span around it (nothing installed).
pub fn breakdown(iterations: usize) -> Vec<BreakdownRow> {
    let runtimes = [
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    ];
    let mut columns: Vec<Vec<(&'static str, (f64, f64))>> = Vec::new();
    for runtime in runtimes.iter().flatten() {
        for answer in [Answer::AtOnce, Answer::AfterOnePending] {
            columns.push(breakdown_column(runtime, answer, iterations));
        }
    }
    let Some(first) = columns.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|row| BreakdownRow {
            label: first[row].0,
            ns: columns.iter().map(|column| column[row].1.0).collect(),
            allocations: first[row].1.1,
        })
        .collect()
}

fn breakdown_column(
    runtime: &tokio::runtime::Runtime,
    answer: Answer,
    iterations: usize,
) -> Vec<(&'static str, (f64, f64))> {
    let mut connection = CannedAsync(answer);
    let sha = rate_limit_fixed::SCRIPT.sha1();
    let wait = || wait_for(answer);
    vec![
        (
            "hand-written `cmd(\"EVALSHA\")…query_async()`, no decoding",
            measure(iterations, || {
                runtime.block_on(async {
                    let reply: Value = hand_written(sha)
                        .query_async(&mut connection)
                        .await
                        .unwrap_or(Value::Nil);
                    black_box(reply);
                })
            }),
        ),
        (
            "generated function (its deadline and span included, the reply decoded)",
            measure(iterations, || {
                runtime.block_on(async {
                    let decision = rate_limit_fixed(&mut connection, COUNTER, 1, 60_000).await;
                    assert!(matches!(decision, Ok(Decision::Denied { .. })));
                })
            }),
        ),
        (
            "generated function, a `tracing` subscriber installed (fmt at INFO, to a sink)",
            tracing::subscriber::with_default(subscriber(), || {
                measure(iterations, || {
                    runtime.block_on(async {
                        let decision = rate_limit_fixed(&mut connection, COUNTER, 1, 60_000).await;
                        assert!(matches!(decision, Ok(Decision::Denied { .. })));
                    })
                })
            }),
        ),
        (
            "`block_on` of the answer alone (what every row pays)",
            measure(iterations, || runtime.block_on(wait())),
        ),
        (
            "`block_on` of `tokio::time::timeout` of the answer (the deadline's timer)",
            measure(iterations, || {
                runtime.block_on(async {
                    let ended = tokio::time::timeout(redis_script::DEFAULT_DEADLINE, wait()).await;
                    black_box(ended.ok());
                })
            }),
        ),
        (
            "`block_on` of the answer in a `tracing` span, nothing installed (the call's span)",
            measure(iterations, || {
                runtime.block_on(async {
                    use tracing::Instrument;
                    let span = tracing::info_span!("redis_script.call", db = 0_i64);
                    wait().instrument(span).await;
                })
            }),
        ),
    ]
}

/// This build's rows, then those of the build with the `metrics` feature,
/// which this one builds and runs (`cargo run --release --features
/// telemetry`); when that fails, the reason instead of its rows.
pub fn both_builds(iterations: usize) -> (Vec<InstrumentationRow>, Result<(), String>) {
    let mut rows = this_build(iterations);
    let other = with_metrics_feature(iterations).map(|other| rows.extend(other));
    (rows, other)
}

fn with_metrics_feature(iterations: usize) -> Result<Vec<InstrumentationRow>, String> {
    if METRICS {
        return Ok(Vec::new());
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("telemetry: building and running this benchmark with `--features telemetry`…");
    let output = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "redis-script-bench",
            "--bin",
            "bench",
            "--features",
            "telemetry",
            "--",
            "--telemetry-rows",
            &iterations.to_string(),
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "the build with the feature failed ({})",
            output.status
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<InstrumentationRow> = text
        .lines()
        .filter_map(InstrumentationRow::from_line)
        .collect();
    if rows.is_empty() {
        return Err("the build with the feature printed no rows".to_owned());
    }
    Ok(rows)
}
