//! Tests of what came with Redis 7.0 (Redis Functions, script flags), on
//! the releases before it (Redis 6.0 and 6.2): such a test does not skip
//! there. It proves the clear error a user gets instead, says in its
//! output that the rest of it needs the feature, and ends.

use std::fmt::Debug;

use redis::aio::ConnectionLike;
use redis_script::{Batch, Error, OnConflict, ServerFeature};
use redis_script_test::{ServerFlavor, server_executable_version};

use crate::functions::quota_lib;

/// The key the proofs below would write, were a function to run.
const UNTOUCHED: &str = "releases:{functions}";

/// Whether the servers under test are Redis releases before 7.0.
pub(crate) fn before_redis_7() -> bool {
    matches!(
        server_executable_version(),
        Some((ServerFlavor::Redis, version)) if version.major < 7
    )
}

/// Whether the servers under test are Redis releases before 6.2, which
/// lack `rejected_calls` in `INFO commandstats`, `INFO errorstats`, the
/// `resetchannels` ACL rule, `SET … GET` and `CLIENT PAUSE … ALL`.
pub(crate) fn before_redis_6_2() -> bool {
    matches!(
        server_executable_version(),
        Some((ServerFlavor::Redis, version)) if (version.major, version.minor) < (6, 2)
    )
}

/// How many times `INFO commandstats` counts a command the server refused
/// before running it: once, but not at all before Redis 6.2.
pub(crate) fn counted_refusals(refused: u64) -> u64 {
    if before_redis_6_2() { 0 } else { refused }
}

/// The release under test, for messages: `Redis 6.2.5`.
fn release() -> String {
    match server_executable_version() {
        Some((flavor, version)) => format!("{flavor} {version}"),
        None => "an unknown server".to_owned(),
    }
}

/// Asserts that `result` is the error of a server without `feature`, which
/// says nothing ran.
pub(crate) fn assert_unsupported<T: Debug>(
    what: &str,
    result: Result<T, Error>,
    feature: ServerFeature,
) {
    match result {
        Err(
            error @ Error::Unsupported {
                feature: lacked, ..
            },
        ) if lacked == feature => {
            assert!(!error.may_have_executed(), "{what}: {error}");
            assert!(error.to_string().contains("Redis 7.0"), "{what}: {error}");
        }
        other => panic!("{what} on {}: {other:?}", release()),
    }
}

/// Prints why `test` ends here on the release under test.
fn ends_here(test: &str, feature: &str) {
    eprintln!(
        "{test}: {} has no {feature} (Redis 7.0 added them): the errors a user gets there are proven, the rest of the test needs them",
        release()
    );
}

/// Whether the servers under test lack Redis Functions. When they do, it
/// first proves on `connection` that a call of a function that writes,
/// one of a `no-writes` function (sent as `FCALL_RO`, then `FCALL`), a
/// pipeline holding one, and a deploy of their library each end with
/// `Error::Unsupported` naming Functions, and that nothing ran.
pub(crate) async fn lacks_functions<C: ConnectionLike + Send>(
    connection: &mut C,
    test: &str,
) -> bool {
    if !before_redis_7() {
        return false;
    }
    let functions = ServerFeature::Functions;
    let writes = quota_lib::fixed_window_allow(connection, UNTOUCHED, 5, 60).await;
    assert_unsupported("a function that writes", writes, functions);
    for round in ["first", "second"] {
        let reads = quota_lib::quota_peek(connection, &[UNTOUCHED]).await;
        assert_unsupported(
            &format!("a no-writes function, {round} call"),
            reads,
            functions,
        );
    }
    let batched = one_call_in(Batch::pipeline(), connection).await;
    assert_unsupported("a pipeline's call", batched, functions);
    // In a transaction the library's FUNCTION LOAD is an unknown command
    // inside MULTI: the server discards the whole transaction, which names
    // the lack.
    let refused = one_call_in(Batch::transaction(), connection).await;
    assert_unsupported("a transaction's call", refused, functions);
    let deployed = quota_lib::LIBRARY
        .deploy(connection, OnConflict::Refuse)
        .await;
    assert_unsupported("a deploy", deployed, functions);
    let exists: bool = redis::cmd("EXISTS")
        .arg(UNTOUCHED)
        .query_async(connection)
        .await
        .expect("EXISTS");
    assert!(!exists, "no function ran");
    ends_here(test, "Redis Functions");
    true
}

/// The outcome of a call of a library function, alone in `batch` run on
/// `connection`.
async fn one_call_in<C: ConnectionLike + Send>(
    mut batch: Batch,
    connection: &mut C,
) -> Result<(String, i64), Error> {
    let handle = batch
        .add(quota_lib::fixed_window_allow::call(UNTOUCHED, 5, 60))
        .expect("a call joins the batch");
    match batch.run(connection).await {
        Ok(mut replies) => replies.take(handle),
        Err(error) => Err(error),
    }
}

/// [`lacks_functions`] on a synchronous connection: a call and a deploy.
pub(crate) fn lacks_functions_blocking<C: redis::ConnectionLike>(
    connection: &mut C,
    test: &str,
) -> bool {
    if !before_redis_7() {
        return false;
    }
    let functions = ServerFeature::Functions;
    let writes = quota_lib::fixed_window_allow::call(UNTOUCHED, 5, 60).invoke_blocking(connection);
    assert_unsupported("a blocking call of a function", writes, functions);
    let deployed = quota_lib::LIBRARY.deploy_blocking(connection, OnConflict::Refuse);
    assert_unsupported("a blocking deploy", deployed, functions);
    ends_here(test, "Redis Functions");
    true
}
