//! Typed JSON both ways against a real server: a `Json<Job>` argument the
//! script reads with `cjson.decode`, and the `cjson.encode` reply read
//! back into `Json<Job>`, for generated jobs (unicode, quotes,
//! backslashes, control characters, the largest counts cjson writes
//! exactly, `Some` and `None`, empty and full lists), on every kind of
//! connection, in a batch, and a value serde_json cannot write failing
//! the call before anything is sent.

use std::collections::HashMap;

use redis::aio::ConnectionLike;
use redis_script::{ArgumentProblem, Batch, Error, Json, JsonShape, redis_script};
use redis_script_test::patience;
use redis_script_test::{RedisServer, Stats};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonShape)]
#[serde(rename_all = "camelCase")]
struct Job {
    job_id: String,
    attempts: u64,
    note: Option<String>,
    /// Left out by the script when empty (cjson writes an empty table as
    /// `{}`), so read as empty when missing.
    #[serde(default)]
    tags: Vec<String>,
    max_attempts: u32,
}

#[redis_script(path = "lua/json/round_trip.lua", keys = 1)]
async fn round_trip(state: &str, job: Json<&Job>) -> Json<Job>;

#[redis_script(path = "lua/json/tags.lua", keys = 0)]
async fn tags_of(job: Json<&Job>) -> Json<Vec<String>>;

#[redis_script(path = "lua/json/store.lua", keys = 1)]
async fn store_grid(document: &str, grid: Json<HashMap<(u8, u8), u8>>) -> i64;

/// Lua numbers are doubles, and cjson writes them with 14 significant
/// digits (`%.14g`): from 10^14 on, an integer comes back rounded
/// (`1e+14`), which serde reads as no `u64` at all. The script adds one,
/// so the largest count sent is 10^14 - 2.
const LARGEST_EXACT_COUNT: u64 = 100_000_000_000_000 - 2;

/// Text with what JSON escapes and what it does not: quotes,
/// backslashes, `/` (cjson writes `\/`), control characters, non-ASCII
/// letters, symbols outside the basic plane.
const PIECES: &[&str] = &[
    "a", "job", " ", "\"", "\\", "/", "\\\"", "\n", "\t", "\u{1}", "\u{7f}", "é", "ß", "☃", "日本",
    "😀", "{", "}", "[", "]", ":", ",", "null", "\\u0041", "'", "%s", "\0",
];

/// A small deterministic generator (xorshift), so every run sends the
/// same jobs.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn text(&mut self) -> String {
        let length = self.below(12);
        (0..length)
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }

    fn job(&mut self, index: usize) -> Job {
        let attempts = match index % 5 {
            0 => 0,
            1 => LARGEST_EXACT_COUNT,
            2 => u64::from(u32::MAX),
            _ => self.below(LARGEST_EXACT_COUNT + 1),
        };
        Job {
            job_id: format!("{index}:{}", self.text()),
            attempts,
            note: index.is_multiple_of(2).then(|| self.text()),
            tags: (0..self.below(4)).map(|_| self.text()).collect(),
            max_attempts: match index % 3 {
                0 => u32::MAX,
                _ => self.below(u64::from(u32::MAX)) as u32,
            },
        }
    }
}

fn jobs() -> Vec<Job> {
    let mut generator = Generator(0x9e37_79b9_7f4a_7c15);
    (0..200).map(|index| generator.job(index)).collect()
}

fn counted(job: &Job) -> Job {
    Job {
        attempts: job.attempts + 1,
        ..job.clone()
    }
}

async fn get<C: ConnectionLike + Send>(connection: &mut C, key: &str) -> Option<String> {
    redis::cmd("GET")
        .arg(key)
        .query_async(connection)
        .await
        .expect("GET")
}

/// Every job comes back exactly, one attempt more, and the stored state
/// is the same JSON.
async fn every_job_comes_back_exactly<C: ConnectionLike + Send>(connection: &mut C, _: &dyn Stats) {
    let jobs = jobs();
    assert!(jobs.iter().any(|job| job.note.is_none()));
    assert!(jobs.iter().any(|job| job.tags.is_empty()));
    assert!(jobs.iter().any(|job| job.attempts == LARGEST_EXACT_COUNT));
    for (index, job) in jobs.iter().enumerate() {
        let key = format!("job:{{{index}}}");
        let Json(back) = round_trip(connection, &key, Json(job))
            .await
            .unwrap_or_else(|error| panic!("{job:?}: {error}"));
        assert_eq!(back, counted(job), "sent {job:?}");
        let stored = get(connection, &key).await.expect("the script stored it");
        let stored: Job = serde_json::from_str(&stored).expect("stored JSON");
        assert_eq!(stored, back);

        let Json(tags) = tags_of(connection, Json(job)).await.expect("tags");
        assert_eq!(
            tags, job.tags,
            "an empty list comes back as `{{}}`, read as []"
        );
    }
}

/// Jobs in a pipeline and in a transaction come back in order.
async fn jobs_in_a_batch_come_back_in_order<C: ConnectionLike + Send>(
    connection: &mut C,
    _: &dyn Stats,
) {
    let jobs = jobs();
    for mut batch in [Batch::pipeline(), Batch::transaction()] {
        let handles: Vec<_> = jobs
            .iter()
            .take(40)
            .enumerate()
            .map(|(index, job)| {
                let key = format!("{{batch}}:job:{index}");
                batch
                    .add(round_trip::call(&key, Json(job)))
                    .expect("one slot")
            })
            .collect();
        let mut replies = batch.run(connection).await.expect("the batch runs");
        for (handle, job) in handles.into_iter().zip(&jobs) {
            let Json(back) = replies.take(handle).expect("a job");
            assert_eq!(back, counted(job));
        }
    }
}

/// A map with tuple keys has no JSON: the call fails naming ARGV[1] and
/// serde_json's message, and nothing reaches the server, alone or in a
/// batch.
async fn an_unwritable_argument_sends_nothing<C: ConnectionLike + Send>(
    connection: &mut C,
    stats: &dyn Stats,
) {
    let grid = HashMap::from([((0, 0), 1), ((2, 3), 4)]);
    stats.reset_stats();
    let error = store_grid(connection, "grid:{7}", Json(grid.clone()))
        .await
        .expect_err("serde_json cannot write tuple keys");
    match &error {
        Error::Argument {
            operation,
            parameter,
            problem: ArgumentProblem::Json {
                type_name, message, ..
            },
            ..
        } => {
            assert_eq!(*operation, "store_grid");
            assert_eq!(parameter, "ARGV[1]");
            assert_eq!(type_name, "Json<HashMap<(u8, u8), u8>>");
            assert_eq!(message, "key must be a string");
        }
        other => panic!("expected Error::Argument, got {other:?}"),
    }
    assert!(!error.may_have_executed());

    let mut batch = Batch::transaction();
    let refused = batch.add(store_grid::call("grid:{7}", Json(grid)));
    assert!(
        matches!(refused, Err(Error::Argument { .. })),
        "{refused:?}"
    );
    assert!(batch.is_empty());

    let calls = stats.command_calls();
    for command in ["evalsha", "eval", "evalsha_ro", "eval_ro", "multi", "exec"] {
        assert!(
            !calls.contains_key(command),
            "{command} was sent: {calls:?}"
        );
    }
    assert_eq!(get(connection, "grid:{7}").await, None);
}

on_both_backends!(
    every_job_comes_back_exactly,
    jobs_in_a_batch_come_back_in_order,
    an_unwritable_argument_sends_nothing,
);

#[tokio::test]
async fn a_connection_manager_sends_and_reads_json() {
    let server = RedisServer::start();
    let mut manager =
        redis::aio::ConnectionManager::new_with_config(server.client(), patience::manager_config())
            .await
            .expect("connection manager");
    every_job_comes_back_exactly(&mut manager, &server).await;
    an_unwritable_argument_sends_nothing(&mut manager, &server).await;
}

#[test]
fn a_blocking_connection_sends_and_reads_json() {
    let server = RedisServer::start();
    let mut connection = server.client().get_connection().expect("connection");
    for (index, job) in jobs().iter().enumerate().step_by(7) {
        let key = format!("job:{{{index}}}");
        let Json(back) = round_trip::call(&key, Json(job))
            .invoke_blocking(&mut connection)
            .expect("a job");
        assert_eq!(back, counted(job));
    }
    let error = store_grid::call("grid:{7}", Json(HashMap::from([((0, 0), 1)])))
        .invoke_blocking(&mut connection)
        .expect_err("no JSON");
    assert_eq!(error.kind(), "argument");
}
