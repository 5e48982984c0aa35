//! What the telemetry costs a call, without the network: the generated
//! call of `lua/rate_limit_fixed.lua` (a tagged reply, so the reply tag is
//! read too) on a connection that answers at once with a canned reply,
//! with nothing listening, with a `tracing` subscriber recording its span,
//! with a `metrics` recorder (Prometheus) recording its metrics, and with
//! both; next to a hand-written `EVALSHA` on the same connection.

use std::hint::black_box;

use redis::{RedisResult, Value};

use crate::encode::measure;
use crate::functions::{Decision, rate_limit_fixed};

const COUNTER: &str = "redis-script-bench:{quota}:counter";

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
#[derive(Debug)]
pub struct InstrumentationRow {
    pub label: &'static str,
    pub ns: f64,
    pub allocations: f64,
}

fn generated_call(connection: &mut Canned) {
    let decision = rate_limit_fixed::call(COUNTER, 1, 60_000).invoke_blocking(connection);
    assert!(matches!(decision, Ok(Decision::Denied { .. })));
}

/// Runs on one thread with nothing else running, like the encoding table.
pub fn instrumentation(iterations: usize) -> Vec<InstrumentationRow> {
    let mut connection = Canned;
    let mut rows = Vec::new();
    let mut row = |label, (ns, allocations)| {
        rows.push(InstrumentationRow {
            label,
            ns,
            allocations,
        })
    };
    let sha = rate_limit_fixed::SCRIPT.sha1();
    row(
        "hand-written `cmd(\"EVALSHA\")…query()`",
        measure(iterations, || {
            let reply: Value = redis::cmd("EVALSHA")
                .arg(sha)
                .arg(1)
                .arg(COUNTER)
                .arg(1)
                .arg(60_000)
                .query(&mut connection)
                .unwrap_or(Value::Nil);
            black_box(reply);
        }),
    );
    row(
        "generated call, no subscriber, no recorder",
        measure(iterations, || generated_call(&mut connection)),
    );
    let subscriber = || {
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(std::io::sink)
            .finish()
    };
    row(
        "generated call, `tracing` subscriber (fmt, INFO): span recorded",
        tracing::subscriber::with_default(subscriber(), || {
            measure(iterations, || generated_call(&mut connection))
        }),
    );
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    row(
        "generated call, Prometheus recorder: metrics recorded",
        metrics::with_local_recorder(&recorder, || {
            measure(iterations, || generated_call(&mut connection))
        }),
    );
    row(
        "generated call, both",
        tracing::subscriber::with_default(subscriber(), || {
            metrics::with_local_recorder(&recorder, || {
                measure(iterations, || generated_call(&mut connection))
            })
        }),
    );
    rows
}
