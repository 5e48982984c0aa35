//! Telemetry against a real server: a subscriber that captures every span
//! and a recorder that counts every metric check the span fields (the
//! OpenTelemetry database conventions) and the metric counts of a warm
//! call, a cold call, a script error, a decode error, a cross-slot refusal
//! and a batch; keys and arguments never appear, hash tags only when asked.
//!
//! The scripts are declared here under names no other test uses: the
//! recorder is global to the test binary, and counts are read by script.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use redis_script::{Batch, Error, redis_script};
use redis_script_test::RedisServer;
use redis_script_tests::Decision;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use crate::releases::{assert_unsupported, before_redis_7};

/// `{'ALLOWED', n}` and its siblings; writes a counter.
#[redis_script(path = "lua/replies/decision.lua", keys = 1)]
async fn telemetry_decision(counter: &str, case: &str) -> Decision;

/// Moves an amount; `BADAMOUNT` for a non-positive one.
#[redis_script(path = "../lua/transfer.lua", keys = 2)]
async fn telemetry_transfer(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// The same script for the second test, whose counts are its own.
#[redis_script(path = "../lua/transfer.lua", keys = 2)]
async fn telemetry_preloaded(source: &str, destination: &str, amount: i64) -> (i64, i64);

/// Adds to a counter, exactly once per call.
#[redis_script(path = "lua/exactly_once/incr_once.lua", keys = 1, exactly_once)]
async fn telemetry_once(counter: &str, amount: i64) -> i64;

/// The JSON document given, as a Lua value: decoded as an integer here.
#[redis_script(path = "lua/replies/echo.lua", keys = 0)]
async fn telemetry_echo(json: &str) -> i64;

// ---------------------------------------------------------------------------
// A subscriber that keeps every closed span with its fields
// ---------------------------------------------------------------------------

/// One closed span: its name, its fields as text, and its parent's name.
#[derive(Debug, Clone)]
struct CapturedSpan {
    name: &'static str,
    parent: Option<&'static str>,
    fields: BTreeMap<String, String>,
}

impl CapturedSpan {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// The spans closed on one test's thread (a `#[tokio::test]` runs its
/// calls on the thread that started it).
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<CapturedSpan>>>);

thread_local! {
    static CAPTURING: std::cell::RefCell<Option<Spans>> = const { std::cell::RefCell::new(None) };
}

impl Spans {
    /// Captures the spans this thread closes from now on.
    ///
    /// The subscriber is global to the test binary, not a thread's default:
    /// tracing caches per call site whether anyone listens, and a call site
    /// first reached by another test's thread while no subscriber listened
    /// could be cached as silent for good.
    fn capture() -> Self {
        install();
        let spans = Spans::default();
        CAPTURING.with(|capturing| *capturing.borrow_mut() = Some(spans.clone()));
        spans
    }

    fn take(&self) -> Vec<CapturedSpan> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The binary's one subscriber, [`CaptureLayer`], installed once.
fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(CaptureLayer);
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other subscriber in this binary");
    });
}

/// The messages of the warnings logged on one test's thread.
#[derive(Clone, Default)]
pub(crate) struct Warnings(Arc<Mutex<Vec<String>>>);

thread_local! {
    static WARNINGS: std::cell::RefCell<Option<Warnings>> = const { std::cell::RefCell::new(None) };
}

impl Warnings {
    /// Captures the warnings this thread logs from now on, through the
    /// binary's global subscriber (see [`Spans::capture`] for why not a
    /// thread's default).
    pub(crate) fn capture() -> Self {
        install();
        let warnings = Warnings::default();
        WARNINGS.with(|capturing| *capturing.borrow_mut() = Some(warnings.clone()));
        warnings
    }

    /// The messages captured so far.
    pub(crate) fn taken(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Keeps each closed span in the [`Spans`] of the thread that closes it,
/// and each warning in its [`Warnings`].
struct CaptureLayer;

/// An event's message.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> tracing_subscriber::Layer<S> for CaptureLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        let mut fields = Fields(BTreeMap::new());
        attributes.record(&mut fields);
        if let Some(span) = context.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        if let Some(span) = context.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() != tracing::Level::WARN {
            return;
        }
        WARNINGS.with(|capturing| {
            if let Some(warnings) = &*capturing.borrow() {
                let mut message = Message(String::new());
                event.record(&mut message);
                warnings
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(message.0);
            }
        });
    }

    fn on_close(&self, id: Id, context: Context<'_, S>) {
        let Some(span) = context.span(&id) else {
            return;
        };
        let fields = span
            .extensions_mut()
            .remove::<Fields>()
            .map(|fields| fields.0)
            .unwrap_or_default();
        let captured = CapturedSpan {
            name: span.name(),
            parent: span.parent().map(|parent| parent.name()),
            fields,
        };
        CAPTURING.with(|capturing| {
            if let Some(spans) = &*capturing.borrow() {
                spans
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(captured);
            }
        });
    }
}

// ---------------------------------------------------------------------------
// A recorder that counts
// ---------------------------------------------------------------------------

/// Counter totals and histogram sample counts by `name{label=value,…}`.
#[derive(Default)]
struct Counts(Mutex<BTreeMap<String, Arc<AtomicU64>>>);

impl Counts {
    fn slot(&self, key: &Key, kind: &str) -> Arc<AtomicU64> {
        let mut labels: Vec<String> = key
            .labels()
            .map(|label| format!("{}={}", label.key(), label.value()))
            .collect();
        labels.sort();
        let name = format!("{kind}{}{{{}}}", key.name(), labels.join(","));
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name)
            .or_default()
            .clone()
    }

    /// The count of `name` with exactly these labels (0 if never seen).
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        let mut labels: Vec<String> = labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        labels.sort();
        let key = format!("{name}{{{}}}", labels.join(","));
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .map_or(0, |count| count.load(Ordering::Relaxed))
    }
}

struct Total(Arc<AtomicU64>);

impl metrics::CounterFn for Total {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }
}

impl metrics::HistogramFn for Total {
    fn record(&self, value: f64) {
        assert!(
            (0.0..60.0).contains(&value),
            "a latency in seconds: {value}"
        );
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl Recorder for Counts {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::new(Total(self.slot(key, ""))))
    }

    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(Total(self.slot(key, "samples:"))))
    }
}

/// The recorder of this test binary, installed on first use.
fn counts() -> &'static Counts {
    static COUNTS: OnceLock<&'static Counts> = OnceLock::new();
    COUNTS.get_or_init(|| {
        let counts: &'static Counts = Box::leak(Box::default());
        metrics::set_global_recorder(counts).expect("no other recorder in this binary");
        counts
    })
}

const CALLS: &str = "redis.atomic.operation.count";
const DURATION: &str = "samples:redis.atomic.operation.duration";
const NOSCRIPT: &str = "redis.atomic.noscript.count";
const ERRORS: &str = "redis.atomic.error.count";
const REPLIES: &str = "redis.atomic.reply.count";
const RETRIES: &str = "redis.atomic.retry.count";

// ---------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------

/// The call spans of `script` among `spans`.
fn calls_of<'a>(spans: &'a [CapturedSpan], script: &str) -> Vec<&'a CapturedSpan> {
    spans
        .iter()
        .filter(|span| span.name == "redis_script.call" && span.field("otel.name") == Some(script))
        .collect()
}

/// No key or argument of the calls appears in any field.
fn assert_nothing_private(spans: &[CapturedSpan], private: &[&str]) {
    for span in spans {
        for (field, value) in &span.fields {
            for secret in private {
                assert!(
                    !value.contains(secret),
                    "{}.{field} = {value:?} shows {secret:?}",
                    span.name
                );
            }
        }
    }
}

#[tokio::test]
async fn calls_report_spans_with_database_conventions_and_metrics() {
    let counts = counts();
    let spans = Spans::capture();
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    let counter = "telemetry:{tenant-7}:counter";

    // Cold, then warm; a tagged reply.
    let () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut connection)
        .await
        .expect("SCRIPT FLUSH");
    let cold = telemetry_decision(&mut connection, counter, "allowed").await;
    assert_eq!(cold.expect("cold call"), Decision::Allowed { count: 1 });
    let warm = telemetry_decision(&mut connection, counter, "denied").await;
    assert!(matches!(warm, Ok(Decision::Denied { .. })), "{warm:?}");
    let captured = spans.take();
    let [cold, warm] = calls_of(&captured, "telemetry_decision")[..] else {
        panic!("two call spans: {captured:#?}");
    };
    for (span, operation, path, attempts, tag) in [
        (cold, "EVAL", "noscript_eval", "2", "ALLOWED"),
        (warm, "EVALSHA", "warm", "1", "DENIED"),
    ] {
        assert_eq!(span.field("db.system.name"), Some("redis"));
        assert_eq!(span.field("db.operation.name"), Some(operation));
        assert_eq!(
            span.field("db.stored_procedure.name"),
            Some("telemetry_decision")
        );
        assert_eq!(span.field("db.namespace"), Some("0"));
        assert_eq!(span.field("otel.kind"), Some("client"));
        assert_eq!(span.field("redis_script.path"), Some(path));
        assert_eq!(span.field("redis_script.attempts"), Some(attempts));
        assert_eq!(span.field("redis_script.retries"), Some("0"));
        assert_eq!(span.field("redis_script.outcome"), Some("ok"));
        assert_eq!(span.field("redis_script.reply_tag"), Some(tag));
        assert_eq!(span.field("otel.status_code"), None);
        assert_eq!(
            span.field("redis_script.hash_tag"),
            None,
            "hash tags are opt-in"
        );
        let sha = span.field("redis_script.sha").unwrap_or_default();
        assert!(telemetry_decision::SCRIPT.sha1().starts_with(sha) && sha.len() == 8);
    }
    let decision = [("operation", "telemetry_decision")];
    assert_eq!(counts.get(CALLS, &[decision[0], ("status", "ok")]), 2);
    assert_eq!(counts.get(DURATION, &decision), 2);
    assert_eq!(counts.get(NOSCRIPT, &decision), 1);
    for tag in ["ALLOWED", "DENIED"] {
        assert_eq!(
            counts.get(REPLIES, &[decision[0], ("tag", tag)]),
            1,
            "{tag}"
        );
    }

    // A script error, a decode error, a cross-slot refusal.
    let refused = telemetry_transfer(&mut connection, "{a}:source", "{a}:destination", 0).await;
    assert!(matches!(refused, Err(Error::Script { .. })), "{refused:?}");
    let undecodable = telemetry_echo(&mut connection, "[1, 2]").await;
    assert!(
        matches!(undecodable, Err(Error::Decode { .. })),
        "{undecodable:?}"
    );
    let cross_slot = telemetry_transfer(&mut connection, "{a}:source", "{b}:destination", 5).await;
    assert!(
        matches!(cross_slot, Err(Error::CrossSlot { .. })),
        "{cross_slot:?}"
    );
    let captured = spans.take();
    let transfers = calls_of(&captured, "telemetry_transfer");
    let echo = calls_of(&captured, "telemetry_echo");
    // Both are cold (the cache was flushed): NOSCRIPT, then EVAL. On Redis
    // 6.x the read-only echo meets the unknown EVALSHA_RO first.
    let echo_attempts = if before_redis_7() { "3" } else { "2" };
    for (span, kind, attempts, may_have_executed) in [
        (transfers[0], "script", "2", "true"),
        (echo[0], "decode", echo_attempts, "true"),
        (transfers[1], "cross_slot", "0", "false"),
    ] {
        assert_eq!(span.field("redis_script.outcome"), Some("error"));
        assert_eq!(span.field("otel.status_code"), Some("ERROR"));
        assert_eq!(span.field("error.type"), Some(kind));
        assert_eq!(span.field("redis_script.attempts"), Some(attempts));
        assert_eq!(
            span.field("redis_script.may_have_executed"),
            Some(may_have_executed)
        );
    }
    let transfer = ("operation", "telemetry_transfer");
    assert_eq!(counts.get(CALLS, &[transfer, ("status", "error")]), 2);
    assert_eq!(counts.get(ERRORS, &[transfer, ("kind", "script")]), 1);
    assert_eq!(counts.get(ERRORS, &[transfer, ("kind", "cross_slot")]), 1);
    let echo_operation = ("operation", "telemetry_echo");
    assert_eq!(counts.get(ERRORS, &[echo_operation, ("kind", "decode")]), 1);

    // A batch: one span, each call counted.
    let mut batch = Batch::pipeline();
    let first = batch
        .add(telemetry_decision::call(counter, "allowed"))
        .expect("same slot");
    let second = batch
        .add(telemetry_decision::call(counter, "busy_string"))
        .expect("same slot");
    let mut replies = batch.run(&mut connection).await.expect("batch");
    assert!(replies.take(first).is_ok() && replies.take(second).is_ok());
    let captured = spans.take();
    let [batch_span] = &captured[..] else {
        panic!("one batch span: {captured:#?}");
    };
    assert_eq!(batch_span.name, "redis_script.batch");
    assert_eq!(batch_span.field("db.operation.name"), Some("PIPELINE"));
    assert_eq!(batch_span.field("db.operation.batch.size"), Some("2"));
    assert_eq!(batch_span.field("redis_script.calls"), Some("2"));
    assert_eq!(batch_span.field("redis_script.outcome"), Some("ok"));
    assert_eq!(counts.get(CALLS, &[decision[0], ("status", "ok")]), 4);

    // Keys and arguments never appear; the hash tag only when asked.
    let private = [
        "telemetry:",
        "source",
        "destination",
        "[1, 2]",
        "busy_string",
    ];
    let shown = redis_script::telemetry::show_hash_tags_on_this_thread(true);
    let tagged = telemetry_decision(&mut connection, counter, "allowed").await;
    drop(shown);
    assert!(tagged.is_ok());
    let captured = spans.take();
    assert_eq!(
        calls_of(&captured, "telemetry_decision")[0].field("redis_script.hash_tag"),
        Some("tenant-7")
    );
    assert_nothing_private(&captured, &private);
}

#[tokio::test]
async fn preloads_deploys_and_blocking_calls_have_spans_too() {
    let spans = Spans::capture();
    let server = RedisServer::start();
    let mut connection = server.connection().await;
    redis_script::preload(&mut connection, &[&telemetry_preloaded::SCRIPT])
        .await
        .expect("preload");
    let library = &redis_script_examples::workflows::quota::quota_lib::LIBRARY;
    let deployed = library
        .deploy(&mut connection, redis_script::OnConflict::Refuse)
        .await;
    // Redis 6.x has no Functions: the deploy's span records its error.
    let without_functions = before_redis_7();
    if without_functions {
        assert_unsupported("deploy", deployed, redis_script::ServerFeature::Functions);
    } else {
        assert_eq!(
            deployed.expect("deploy").deployed,
            redis_script::Deployed::Loaded
        );
    }
    let mut blocking = server.client().get_connection().expect("connection");
    let moved = telemetry_preloaded::call("{p}:source", "{p}:destination", 0)
        .invoke_blocking(&mut blocking);
    assert!(moved.is_err());
    let captured = spans.take();
    let admin: Vec<&CapturedSpan> = captured
        .iter()
        .filter(|span| span.name == "redis_script.admin")
        .collect();
    let [preload, deploy] = admin[..] else {
        panic!("a preload span and a deploy span: {captured:#?}");
    };
    assert_eq!(preload.field("db.operation.name"), Some("SCRIPT LOAD"));
    assert_eq!(preload.field("redis_script.count"), Some("1"));
    assert_eq!(preload.field("redis_script.outcome"), Some("ok"));
    assert_eq!(deploy.field("db.operation.name"), Some("FUNCTION LOAD"));
    assert_eq!(deploy.field("redis_script.target"), Some("quota_lib"));
    let (outcome, error) = if without_functions {
        ("error", Some("unsupported"))
    } else {
        ("ok", None)
    };
    assert_eq!(deploy.field("redis_script.outcome"), Some(outcome));
    assert_eq!(deploy.field("error.type"), error);
    let call = calls_of(&captured, "telemetry_preloaded");
    assert_eq!(call[0].field("error.type"), Some("script"));
    assert_eq!(call[0].field("redis_script.path"), Some("warm"));
    assert_eq!(call[0].parent, None);
}

#[tokio::test]
async fn retries_are_counted_by_reason() {
    let counts = counts();
    let spans = Spans::capture();
    let server = RedisServer::start();
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(std::time::Duration::from_millis(100)));
    let mut connection = server
        .client()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("connection");
    // Warm, then paused longer than the response timeout: the call times
    // out and is sent again with its id until the pause ends.
    telemetry_once(&mut connection, "retry:{r}", 1)
        .await
        .expect("warm");
    // Every client (no mode: Redis 6.0 takes none).
    let () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(250)
        .query_async(&mut server.connection().await)
        .await
        .expect("CLIENT PAUSE");
    let added = telemetry_once(&mut connection, "retry:{r}", 1).await;
    assert_eq!(added.expect("retried until the pause ended"), 2);
    let captured = spans.take();
    let paused = calls_of(&captured, "telemetry_once")[1];
    let retries: u64 = paused
        .field("redis_script.retries")
        .and_then(|retries| retries.parse().ok())
        .unwrap_or_default();
    assert!(retries >= 1, "{paused:?}");
    assert_eq!(paused.field("redis_script.exactly_once"), Some("true"));
    assert_eq!(paused.field("redis_script.outcome"), Some("ok"));
    let operation = ("operation", "telemetry_once");
    assert_eq!(
        counts.get(RETRIES, &[operation, ("reason", "timeout")]),
        retries
    );
    assert_eq!(counts.get(CALLS, &[operation, ("status", "ok")]), 2);
}
