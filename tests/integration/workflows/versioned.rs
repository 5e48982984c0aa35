//! Versioned write (`lua/versioned_set.lua`): 50 writers race from the same
//! version; exactly one wins each version and no update is lost.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::Failure;
use redis_script_examples::workflows::versioned::{
    VersionError, Versioned, WriteOutcome, get_versioned, set_versioned, update,
};
use redis_script_test::patience;
use redis_script_test::{RedisCluster, TestDb};
use tokio::sync::Barrier;
use tokio::time::timeout;

const WRITERS: usize = 50;
const LIMIT: Duration = Duration::from_secs(30);

/// The document: the ids of the writers whose change it holds.
type Doc = Vec<usize>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_one_winner_per_version() {
    let db = TestDb::new();
    one_winner_per_version(db.connection().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_no_update_is_lost() {
    let db = TestDb::new();
    no_update_is_lost(db.connection().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_refusals_are_typed() {
    let db = TestDb::new();
    refusals_are_typed(db.connection().await).await;
}

/// Every scenario on one 3-primary cluster (one cluster start for all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_all_scenarios() {
    let cluster = RedisCluster::start(3, 1);
    let connection = cluster.connection().await;
    one_winner_per_version(connection.clone()).await;
    no_update_is_lost(connection.clone()).await;
    refusals_are_typed(connection).await;
}

/// 50 writers all expect version 1: exactly one writes version 2, the 49
/// others are refused with a conflict naming version 2.
async fn one_winner_per_version<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "versioned:{race}";
    let created = set_versioned(&mut connection, key, &Doc::new(), None, None)
        .await
        .expect("create");
    assert_eq!(created, WriteOutcome::Added { version: 1 });

    let barrier = Arc::new(Barrier::new(WRITERS));
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let (mut connection, barrier) = (connection.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let doc: Doc = vec![writer];
            let result = set_versioned(&mut connection, key, &doc, Some(1), None).await;
            (writer, result)
        }));
    }
    let mut winners = Vec::new();
    let mut conflicts = 0;
    for task in tasks {
        let (writer, result) = timeout(patience::scaled(LIMIT), task)
            .await
            .expect("writer timed out")
            .expect("writer panicked");
        match result {
            Ok(WriteOutcome::Updated { version: 2 }) => winners.push(writer),
            Err(Failure::Declared(VersionError::VersionConflict {
                expected: 1,
                found: 2,
            })) => conflicts += 1,
            other => panic!("writer {writer}: unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners of version 2: {winners:?}");
    assert_eq!(conflicts, WRITERS - 1);
    let stored: Versioned<Doc> = get_versioned(&mut connection, key)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(
        stored,
        Versioned {
            version: 2,
            doc: winners.clone()
        },
        "the stored document is the winner's"
    );
    println!("versioned race: 1 winner, {conflicts} conflicts");
}

/// 50 writers each append their id with a read-modify-write loop that
/// retries on conflicts: every append lands, each on its own version.
async fn no_update_is_lost<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "versioned:{appends}";
    let barrier = Arc::new(Barrier::new(WRITERS));
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let (mut connection, barrier) = (connection.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            update(&mut connection, key, None, 10_000, |doc: Option<Doc>| {
                let mut doc = doc.unwrap_or_default();
                doc.push(writer);
                doc
            })
            .await
        }));
    }
    let mut versions = BTreeSet::new();
    let mut total_conflicts = 0;
    for task in tasks {
        let (outcome, conflicts) = timeout(patience::scaled(LIMIT), task)
            .await
            .expect("writer timed out")
            .expect("writer panicked")
            .unwrap_or_else(|error| panic!("update failed: {error}"));
        assert!(
            versions.insert(outcome.version()),
            "version {} written twice",
            outcome.version()
        );
        total_conflicts += conflicts;
    }
    assert_eq!(
        versions,
        (1..=WRITERS as u64).collect(),
        "one write per version"
    );
    let stored: Versioned<Doc> = get_versioned(&mut connection, key)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.version, WRITERS as u64);
    let mut writers = stored.doc.clone();
    writers.sort_unstable();
    assert_eq!(
        writers,
        (0..WRITERS).collect::<Vec<_>>(),
        "every append is in the document once"
    );
    println!("versioned appends: {WRITERS} writes, {total_conflicts} conflicts retried");
}

/// The refusals other than a conflict, each typed.
async fn refusals_are_typed<C>(mut connection: C)
where
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    let key = "versioned:{refusals}";
    let doc: Doc = vec![7];
    let missing = set_versioned(&mut connection, key, &doc, Some(4), None).await;
    assert!(
        matches!(
            missing,
            Err(Failure::Declared(VersionError::NotFound { expected: 4 }))
        ),
        "{missing:?}"
    );
    let ttl = Some(Duration::from_secs(60));
    let added = set_versioned(&mut connection, key, &doc, None, ttl)
        .await
        .expect("create");
    assert_eq!(added, WriteOutcome::Added { version: 1 });
    let pttl: i64 = redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut connection)
        .await
        .expect("PTTL");
    assert!(pttl > 0, "the TTL is set: {pttl}");
    let again = set_versioned(&mut connection, key, &doc, None, None).await;
    assert!(
        matches!(
            again,
            Err(Failure::Declared(VersionError::AlreadyExists { found: 1 }))
        ),
        "{again:?}"
    );
    let updated = set_versioned(&mut connection, key, &doc, Some(1), None)
        .await
        .expect("update");
    assert_eq!(updated, WriteOutcome::Updated { version: 2 });
    let pttl: i64 = redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut connection)
        .await
        .expect("PTTL");
    assert_eq!(pttl, -1, "a write without TTL keeps the document");

    let invalid = redis_script_examples::workflows::versioned::versioned_set(
        &mut connection,
        key,
        "{not json",
        "2",
        0,
    )
    .await;
    assert!(
        matches!(
            invalid,
            Err(Failure::Declared(VersionError::InvalidDocument { .. }))
        ),
        "{invalid:?}"
    );
    let stored: Versioned<Doc> = get_versioned(&mut connection, key)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.version, 2, "refused writes change nothing");
    let absent: Option<Versioned<Doc>> = get_versioned(&mut connection, "versioned:{absent}")
        .await
        .expect("read");
    assert_eq!(absent, None);
}
