//! What calls tell operators: one `tracing` span per call, batch, preload
//! and deploy, with the OpenTelemetry database conventions, and (feature
//! `metrics`) counters and a latency histogram through the `metrics`
//! facade.
//!
//! Keys and arguments never appear: they carry user ids and tokens. A
//! call's hash tag (the `{…}` part of its first key) appears only after
//! [`show_hash_tags`]`(true)`.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use redis::Value;
use tracing::Span;
use tracing::field::Empty;

use crate::error::Error;
use crate::script::Script;
use crate::shape::Shape;

static HASH_TAGS: AtomicBool = AtomicBool::new(false);

/// Shows each call's hash tag (the part of its first key between `{` and
/// `}`, such as a tenant id) in the span field `redis_script.hash_tag`.
/// Off by default: keys carry user ids. Keys without a hash tag, the rest
/// of the key, and arguments never appear.
///
/// It is a setting of the whole process; tests, which run side by side in
/// one process, use [`show_hash_tags_on_this_thread`] instead.
///
/// ```
/// redis_script::telemetry::show_hash_tags(true);
/// ```
pub fn show_hash_tags(show: bool) {
    HASH_TAGS.store(show, Ordering::Relaxed);
}

thread_local! {
    /// This thread's choice, over the process's while a guard lives.
    static HASH_TAGS_ON_THIS_THREAD: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Shows (or hides) the hash tags of the calls this thread starts while
/// the returned guard lives, whatever [`show_hash_tags`] set for the
/// process; dropping the guard restores what was there before.
///
/// Meant for tests: they run side by side in one process, and a test that
/// shows hash tags must not show them in another test's spans. Under
/// `#[tokio::test]`, whose runtime polls on the test's own thread, it
/// covers the test's calls. The guard cannot leave its thread.
///
/// ```
/// use redis_script::telemetry::show_hash_tags_on_this_thread;
///
/// let shown = show_hash_tags_on_this_thread(true);
/// // … calls whose spans carry `redis_script.hash_tag` …
/// drop(shown);
/// ```
pub fn show_hash_tags_on_this_thread(show: bool) -> HashTagsOnThisThread {
    let previous = HASH_TAGS_ON_THIS_THREAD.with(|here| here.replace(Some(show)));
    HashTagsOnThisThread {
        previous,
        _not_send: PhantomData,
    }
}

/// Restores the thread's earlier choice of hash tags when dropped; see
/// [`show_hash_tags_on_this_thread`].
#[must_use = "the choice lasts only while the guard lives"]
#[derive(Debug)]
pub struct HashTagsOnThisThread {
    previous: Option<bool>,
    /// The choice belongs to the thread that made it.
    _not_send: PhantomData<*const ()>,
}

impl Drop for HashTagsOnThisThread {
    fn drop(&mut self) {
        HASH_TAGS_ON_THIS_THREAD.with(|here| here.set(self.previous));
    }
}

/// Which way a call went, for the span and the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// The first command answered.
    Warm,
    /// `NOSCRIPT`, then `EVAL` with the body.
    NoScriptEval,
    /// `Function not found`, then `[FUNCTION LOAD, FCALL]`.
    FunctionLoad,
    /// The server did not know the `_RO` command; sent again without it.
    ReadOnlyFallback,
}

impl Path {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Warm => "warm",
            Self::NoScriptEval => "noscript_eval",
            Self::FunctionLoad => "function_load",
            Self::ReadOnlyFallback => "read_only_fallback",
        }
    }
}

/// The span of one call, named after the script.
pub(crate) fn call_span(script: &Script, database: i64, first_key: Option<&[u8]>) -> Span {
    let span = tracing::info_span!(
        "redis_script.call",
        otel.name = script.name(),
        otel.kind = "client",
        otel.status_code = Empty,
        db.system.name = "redis",
        db.namespace = database,
        db.operation.name = Empty,
        db.stored_procedure.name = script.name(),
        error.type = Empty,
        redis_script.sha = script.sha1_prefix(),
        redis_script.library = Empty,
        redis_script.exactly_once = script.exactly_once().is_some(),
        redis_script.path = Empty,
        redis_script.attempts = Empty,
        redis_script.retries = Empty,
        redis_script.outcome = Empty,
        redis_script.may_have_executed = Empty,
        redis_script.reply_tag = Empty,
        redis_script.hash_tag = Empty,
    );
    if !span.is_disabled() {
        if let Some(library) = script.library() {
            span.record("redis_script.library", library.name());
        }
        if let Some(tag) = first_key.and_then(shown_hash_tag) {
            span.record(
                "redis_script.hash_tag",
                String::from_utf8_lossy(tag).as_ref(),
            );
        }
    }
    span
}

/// The hash tag of `key`, when hash tags are shown and it has one.
fn shown_hash_tag(key: &[u8]) -> Option<&[u8]> {
    let shown = HASH_TAGS_ON_THIS_THREAD
        .with(Cell::get)
        .unwrap_or_else(|| HASH_TAGS.load(Ordering::Relaxed));
    if !shown {
        return None;
    }
    let tag = crate::slot::hash_tag(key);
    (tag.len() < key.len()).then_some(tag)
}

/// How one call went, recorded once it ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallSummary {
    /// The last command sent (`EVALSHA`, `EVAL`, `FCALL_RO`, …).
    pub command: &'static str,
    pub path: Path,
    /// Commands (or pipelines) sent.
    pub attempts: u32,
    /// Sends after a failure or a refusal.
    pub retries: u32,
    /// The tag of a derived tagged reply (`ALLOWED`).
    pub reply_tag: Option<&'static str>,
}

/// When a call started, for the latency histogram.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Started {
    #[cfg(feature = "metrics")]
    at: std::time::Instant,
}

impl Started {
    pub(crate) fn now() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            at: std::time::Instant::now(),
        }
    }
}

/// Whether anything collects what a call reports: its span is recorded,
/// its debug event is wanted, or metrics are built in. When nothing does,
/// a call spends nothing on telemetry after its span, not even the code
/// it would run.
#[inline]
pub(crate) fn collected(span: &Span) -> bool {
    cfg!(feature = "metrics") || !span.is_disabled() || tracing::enabled!(tracing::Level::DEBUG)
}

/// Records the end of a call (`failure`: how it failed, if it did): span
/// fields, one debug event, metrics.
#[inline]
pub(crate) fn call_finished(
    span: &Span,
    script: &Script,
    summary: &CallSummary,
    started: Started,
    failure: Option<&Error>,
) {
    if collected(span) {
        report_call(span, script, summary, started, failure);
    }
}

/// [`call_finished`]'s work, out of line: a call with nothing collecting
/// its report does not carry this code.
#[inline(never)]
fn report_call(
    span: &Span,
    script: &Script,
    summary: &CallSummary,
    started: Started,
    failure: Option<&Error>,
) {
    let outcome = if failure.is_none() { "ok" } else { "error" };
    if !span.is_disabled() {
        span.record("db.operation.name", summary.command);
        span.record("redis_script.path", summary.path.as_str());
        span.record("redis_script.attempts", summary.attempts);
        span.record("redis_script.retries", summary.retries);
        span.record("redis_script.outcome", outcome);
        if let Some(tag) = summary.reply_tag {
            span.record("redis_script.reply_tag", tag);
        }
        if let Some(error) = failure {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", error.kind());
            span.record("redis_script.may_have_executed", error.may_have_executed());
        }
    }
    match failure {
        None => tracing::debug!(
            script = script.name(),
            sha = script.sha1_prefix(),
            path = summary.path.as_str(),
            outcome,
            "script call"
        ),
        Some(error) => tracing::debug!(
            script = script.name(),
            sha = script.sha1_prefix(),
            path = summary.path.as_str(),
            outcome,
            may_have_executed = error.may_have_executed(),
            %error,
            "script call"
        ),
    }
    #[cfg(feature = "metrics")]
    measures::call(script.name(), summary, started, failure);
    #[cfg(not(feature = "metrics"))]
    let _ = started;
}

/// A call is sent again, for `reason`.
pub(crate) fn call_retried(script: &Script, reason: &'static str) {
    tracing::debug!(
        script = script.name(),
        sha = script.sha1_prefix(),
        reason,
        "sending the script again"
    );
    #[cfg(feature = "metrics")]
    measures::retry(script.name(), reason);
}

/// The tag of `value` when `shape` is a tagged reply type and the value
/// carries one of its tags: `{'DENIED', …}`, or a bare `'BUSY'`. Only the
/// type's own tags are returned, never other reply data.
pub(crate) fn reply_tag(shape: Option<fn() -> Shape>, value: &Value) -> Option<&'static str> {
    let Shape::Tagged { variants, .. } = shape?() else {
        return None;
    };
    let word: &[u8] = match value {
        Value::Array(items) => match items.first()? {
            Value::BulkString(bytes) => bytes,
            Value::SimpleString(text) => text.as_bytes(),
            _ => return None,
        },
        Value::BulkString(bytes) => bytes,
        Value::SimpleString(text) => text.as_bytes(),
        Value::Okay => b"OK",
        _ => return None,
    };
    variants
        .iter()
        .find(|variant| variant.tag.as_bytes() == word)
        .map(|variant| variant.tag)
}

/// The span of a batch: `MULTI` for a transaction, `PIPELINE` otherwise.
pub(crate) fn batch_span(operation: &'static str, commands: usize, calls: usize) -> Span {
    tracing::info_span!(
        "redis_script.batch",
        otel.name = operation,
        otel.kind = "client",
        otel.status_code = Empty,
        db.system.name = "redis",
        db.operation.name = operation,
        db.operation.batch.size = commands,
        error.type = Empty,
        redis_script.calls = calls,
        redis_script.outcome = Empty,
    )
}

/// The span of loading scripts or deploying libraries on one server.
pub(crate) fn admin_span(operation: &'static str, what: &str, count: usize) -> Span {
    tracing::info_span!(
        "redis_script.admin",
        otel.name = operation,
        otel.kind = "client",
        otel.status_code = Empty,
        db.system.name = "redis",
        db.operation.name = operation,
        error.type = Empty,
        redis_script.target = what,
        redis_script.count = count,
        redis_script.outcome = Empty,
    )
}

/// Runs a batch, preload or deploy inside `span`, and records how it ended.
pub(crate) async fn traced<T>(
    span: Span,
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let result = tracing::Instrument::instrument(work, span.clone()).await;
    span_finished(&span, &result);
    result
}

/// [`traced`] for blocking work.
pub(crate) fn traced_blocking<T>(
    span: Span,
    work: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    let result = span.in_scope(work);
    span_finished(&span, &result);
    result
}

/// Records how a batch, preload or deploy ended on its span.
fn span_finished<T>(span: &Span, result: &Result<T, Error>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(_) => span.record("redis_script.outcome", "ok"),
        Err(error) => {
            span.record("redis_script.outcome", "error");
            span.record("otel.status_code", "ERROR");
            span.record("error.type", error.kind())
        }
    };
}

#[cfg(feature = "metrics")]
pub(crate) mod measures {
    //! The metric names and how a call feeds them.
    //!
    //! Every label value is a `&'static str` (a script name, a status, an
    //! error kind, a reply tag), so each label set is built once and kept:
    //! a call builds its metric keys without allocating, recorder or not.

    use std::collections::HashMap;
    use std::hash::BuildHasherDefault;
    use std::sync::{OnceLock, PoisonError, RwLock};

    use metrics::{Key, Label, Level, Metadata};

    use super::{CallSummary, Path, Started};
    use crate::error::Error;

    /// Calls by `operation` (the script) and `status` (`ok`, `error`).
    pub const CALLS: &str = "redis.atomic.operation.count";
    /// Call latency in seconds by `operation`, retries included.
    pub const DURATION: &str = "redis.atomic.operation.duration";
    /// Calls that found the script missing (`NOSCRIPT`, then `EVAL`; or a
    /// function's library, then `FUNCTION LOAD`) by `operation`.
    pub const NOSCRIPT: &str = "redis.atomic.noscript.count";
    /// Sends again by `operation` and `reason`.
    pub const RETRIES: &str = "redis.atomic.retry.count";
    /// Failed calls by `operation` and `kind` ([`Error::kind`]).
    pub const ERRORS: &str = "redis.atomic.error.count";
    /// Replies of tagged reply types by `operation` and `tag`.
    pub const REPLIES: &str = "redis.atomic.reply.count";

    static METADATA: Metadata<'static> =
        Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

    /// A label set by the addresses and lengths of its static strings:
    /// hashed and compared as integers. Two copies of one string at two
    /// addresses only make two entries for the same labels.
    type LabelSet = [(usize, usize); 3];

    /// Hashes a [`LabelSet`]'s integers with a rotate and a multiply: the
    /// keys are few and chosen by the program, not by its input.
    #[derive(Default)]
    struct AddressHasher(u64);

    impl std::hash::Hasher for AddressHasher {
        fn finish(&self) -> u64 {
            self.0
        }

        fn write(&mut self, bytes: &[u8]) {
            for byte in bytes {
                self.write_u64(u64::from(*byte));
            }
        }

        fn write_usize(&mut self, value: usize) {
            self.write_u64(value as u64);
        }

        fn write_u64(&mut self, value: u64) {
            self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    type Sets = HashMap<LabelSet, &'static [Label], BuildHasherDefault<AddressHasher>>;

    /// The labels `operation=<operation>` and `<label>=<value>`, built once
    /// per distinct set (there are as many as scripts times label values).
    pub(super) fn labels(
        operation: &'static str,
        label: &'static str,
        value: &'static str,
    ) -> &'static [Label] {
        static SETS: OnceLock<RwLock<Sets>> = OnceLock::new();
        let sets = SETS.get_or_init(RwLock::default);
        let address = |text: &str| (text.as_ptr() as usize, text.len());
        let key = [address(operation), address(label), address(value)];
        if let Some(found) = sets
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return found;
        }
        let mut sets = sets.write().unwrap_or_else(PoisonError::into_inner);
        sets.entry(key).or_insert_with(|| {
            let mut built = vec![Label::from_static_parts("operation", operation)];
            if !label.is_empty() {
                built.push(Label::from_static_parts(label, value));
            }
            Box::leak(built.into_boxed_slice())
        })
    }

    fn increment(name: &'static str, labels: &'static [Label]) {
        let key = Key::from_static_parts(name, labels);
        metrics::with_recorder(|recorder| recorder.register_counter(&key, &METADATA).increment(1));
    }

    pub(crate) fn call(
        operation: &'static str,
        summary: &CallSummary,
        started: Started,
        error: Option<&Error>,
    ) {
        let status = if error.is_some() { "error" } else { "ok" };
        increment(CALLS, labels(operation, "status", status));
        let key = Key::from_static_parts(DURATION, labels(operation, "", ""));
        let seconds = started.at.elapsed().as_secs_f64();
        metrics::with_recorder(|recorder| {
            recorder.register_histogram(&key, &METADATA).record(seconds);
        });
        if matches!(summary.path, Path::NoScriptEval | Path::FunctionLoad) {
            increment(NOSCRIPT, labels(operation, "", ""));
        }
        if let Some(error) = error {
            increment(ERRORS, labels(operation, "kind", error.kind()));
        }
        if let Some(tag) = summary.reply_tag {
            increment(REPLIES, labels(operation, "tag", tag));
        }
    }

    /// A call is sent again, for `reason`.
    pub(crate) fn retry(operation: &'static str, reason: &'static str) {
        increment(RETRIES, labels(operation, "reason", reason));
    }

    /// One script call of a batch, by its raw reply (a batch is timed and
    /// retried as a whole, so only the call and its error are counted).
    pub(crate) fn batch_call(script: &'static crate::script::Script, reply: &redis::Value) {
        let error = match reply {
            redis::Value::ServerError(error) => Some(Error::from_server(
                crate::error::Origin::script(script),
                error,
            )),
            _ => None,
        };
        let status = if error.is_some() { "error" } else { "ok" };
        increment(CALLS, labels(script.name(), "status", status));
        if let Some(error) = error {
            increment(ERRORS, labels(script.name(), "kind", error.kind()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Variant;

    fn tagged() -> Shape {
        const VARIANTS: &[Variant] = &[
            crate::shape::checks::variant("Allowed", "ALLOWED", 1, 1, false),
            crate::shape::checks::variant("Busy", "BUSY", 0, 0, true),
        ];
        crate::shape::checks::tagged_shape("Decision", VARIANTS)
    }

    #[test]
    fn reply_tags_are_the_types_own_tags_only() {
        let bulk = |text: &str| Value::BulkString(text.as_bytes().to_vec());
        let denied = Value::Array(vec![bulk("ALLOWED"), Value::Int(3)]);
        assert_eq!(reply_tag(Some(tagged), &denied), Some("ALLOWED"));
        assert_eq!(reply_tag(Some(tagged), &bulk("BUSY")), Some("BUSY"));
        assert_eq!(
            reply_tag(Some(tagged), &Value::SimpleString("BUSY".into())),
            Some("BUSY")
        );
        // Other data is never taken for a tag.
        let user_data = Value::Array(vec![bulk("alice@example.com"), Value::Int(3)]);
        assert_eq!(reply_tag(Some(tagged), &user_data), None);
        // Nor is anything of a type that is not tagged.
        assert_eq!(reply_tag(None, &denied), None);
        assert_eq!(reply_tag(Some(|| Shape::Any), &denied), None);
    }

    #[cfg(feature = "metrics")]
    #[test]
    fn each_label_set_is_built_once() {
        let ok = measures::labels("release_lock", "status", "ok");
        assert!(std::ptr::eq(
            ok,
            measures::labels("release_lock", "status", "ok")
        ));
        let pairs: Vec<(&str, &str)> = ok
            .iter()
            .map(|label| (label.key(), label.value()))
            .collect();
        assert_eq!(pairs, [("operation", "release_lock"), ("status", "ok")]);
        let alone = measures::labels("release_lock", "", "");
        assert_eq!(alone.len(), 1);
        assert!(!std::ptr::eq(
            ok,
            measures::labels("release_lock", "status", "error")
        ));
    }

    #[test]
    fn hash_tags_are_shown_only_when_asked_and_only_the_tag() {
        assert_eq!(shown_hash_tag(b"user:{42}:profile"), None);
        let shown = show_hash_tags_on_this_thread(true);
        assert_eq!(shown_hash_tag(b"user:{42}:profile"), Some(&b"42"[..]));
        assert_eq!(shown_hash_tag(b"user:42:profile"), None);
        assert_eq!(shown_hash_tag(b"{}x"), None);
        let hidden = show_hash_tags_on_this_thread(false);
        assert_eq!(shown_hash_tag(b"user:{42}:profile"), None);
        drop(hidden);
        assert_eq!(shown_hash_tag(b"user:{42}:profile"), Some(&b"42"[..]));
        let elsewhere = std::thread::spawn(|| shown_hash_tag(b"user:{42}:profile").is_some());
        assert_eq!(elsewhere.join().ok(), Some(false), "another thread");
        drop(shown);
        assert_eq!(shown_hash_tag(b"user:{42}:profile"), None);
    }
}
