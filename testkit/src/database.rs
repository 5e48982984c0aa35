//! A database of its own for each test: on the server the test binary
//! shares between its tests (the default), on a server of its own, or on a
//! server the user already runs (`REDIS_SCRIPT_TEST_URL`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::RedisServer;
use crate::patience::scaled;
use crate::state::State;

/// How many databases the shared server has: tests of one binary take them
/// in turn, each flushed when handed out, so only more than this many tests
/// running at the same moment could meet.
pub const SHARED_DATABASES: u32 = 1024;

/// The standalone server the tests of this binary share, started by the
/// first test that asks for it. Its watchdog stops it when the binary ends.
fn shared_server() -> &'static RedisServer {
    static SERVER: OnceLock<RedisServer> = OnceLock::new();
    SERVER.get_or_init(|| RedisServer::start_with(&["--databases", &SHARED_DATABASES.to_string()]))
}

/// The variable naming a server the tests use instead of starting one,
/// such as a CI service container: `redis://host:port` (with a user and
/// password if the server wants them), without a database.
pub const SERVER_URL_VARIABLE: &str = "REDIS_SCRIPT_TEST_URL";

/// The variable naming the databases of that server the tests may take,
/// `first-last`; `1-15` when unset, so database 0 is left alone.
pub const DATABASES_VARIABLE: &str = "REDIS_SCRIPT_TEST_DATABASES";

/// How long a test waits for a database of the server named by
/// [`SERVER_URL_VARIABLE`] while every one is taken.
const LEASE_PATIENCE: Duration = Duration::from_secs(120);

/// A server the user runs, and which of its databases no test holds.
#[derive(Debug)]
struct External {
    /// Its URL without a database.
    url: String,
    free: Mutex<Vec<u32>>,
    returned: Condvar,
}

impl External {
    /// The server named by [`SERVER_URL_VARIABLE`], if any.
    fn configured() -> Option<&'static External> {
        static EXTERNAL: OnceLock<Option<External>> = OnceLock::new();
        EXTERNAL
            .get_or_init(|| {
                let url = std::env::var(SERVER_URL_VARIABLE).ok()?;
                let databases = std::env::var(DATABASES_VARIABLE).ok();
                Some(External::new(&url, databases.as_deref()))
            })
            .as_ref()
    }

    fn new(url: &str, databases: Option<&str>) -> External {
        let url = url.trim_end_matches('/');
        let has_database = url
            .split_once("://")
            .is_some_and(|(_, rest)| rest.contains('/'));
        if has_database {
            panic!(
                "{SERVER_URL_VARIABLE}={url}: give the server without a database; the tests take theirs from {DATABASES_VARIABLE}"
            );
        }
        let free = match databases {
            None => (1..=15).collect(),
            Some(range) => parse_range(range).unwrap_or_else(|| {
                panic!("{DATABASES_VARIABLE}={range}: expected `first-last`, such as 1-15")
            }),
        };
        External {
            url: url.to_owned(),
            free: Mutex::new(free),
            returned: Condvar::new(),
        }
    }

    /// A database no other test holds, waiting for one while all are
    /// taken.
    fn lease(&self) -> u32 {
        let patience = scaled(LEASE_PATIENCE);
        let deadline = Instant::now() + patience;
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(index) = free.pop() {
                return index;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!(
                    "every database {DATABASES_VARIABLE} gives on {} has been taken for {} s: run fewer tests at once (`--test-threads`) or give more databases",
                    self.url,
                    patience.as_secs()
                );
            }
            free = self
                .returned
                .wait_timeout(free, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn release(&self, index: u32) {
        self.free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(index);
        self.returned.notify_one();
    }
}

/// `first-last` as the numbers it spans.
fn parse_range(text: &str) -> Option<Vec<u32>> {
    let (first, last) = text.trim().split_once('-')?;
    let (first, last): (u32, u32) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    (first <= last).then(|| (first..=last).rev().collect())
}

/// Where a [`TestDb`] lives.
#[derive(Debug)]
enum Host {
    Shared(&'static RedisServer),
    Own(Box<RedisServer>),
    External(&'static External),
}

/// An empty database for one test, on a real server.
///
/// [`TestDb::new`] takes the next database of a standalone server that the
/// whole test binary shares (started on first use, stopped when the binary
/// ends, however it ends): tests run in parallel under `cargo test` and
/// `cargo nextest`, each in a database no other test sees. A test that
/// stops, freezes or restarts the server, flushes its scripts or changes
/// its configuration takes a server of its own with [`TestDb::own_server`].
///
/// To use a server you already run instead (a CI service container), set
/// [`SERVER_URL_VARIABLE`] (`REDIS_SCRIPT_TEST_URL=redis://127.0.0.1:6379`):
/// each test then holds one database of [`DATABASES_VARIABLE`] (`1-15` by
/// default, so database 0 is left alone) until it ends, empties only that
/// one (`FLUSHDB`, never `FLUSHALL`), and waits while all are taken. Tests
/// that need a server of their own still start one.
///
/// The script cache and loaded libraries belong to the server, not to a
/// database: tests sharing a server share them, which is what production
/// clients see too.
///
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() {
/// use redis_script_test::{State, TestDb};
///
/// let db = TestDb::new();
/// db.given(&State::new().string("stock:{sku-1}", "3")).await;
/// let mut connection = db.connection().await;
/// let left: i64 = redis::cmd("DECR")
///     .arg("stock:{sku-1}")
///     .query_async(&mut connection)
///     .await
///     .unwrap();
/// assert_eq!(left, 2);
/// db.assert_state(&State::new().string("stock:{sku-1}", "2")).await;
/// # }
/// ```
#[derive(Debug)]
pub struct TestDb {
    host: Host,
    index: u32,
}

impl TestDb {
    /// The next database of the server this test binary shares, flushed;
    /// with [`SERVER_URL_VARIABLE`] set, a database of that server that no
    /// other test holds, flushed.
    ///
    /// # Panics
    ///
    /// If the server executable is not installed (the message says how to
    /// install it) or does not start; with [`SERVER_URL_VARIABLE`], if its
    /// value or [`DATABASES_VARIABLE`]'s is malformed, the server does not
    /// answer, or every database stays taken for two minutes.
    pub fn new() -> TestDb {
        if let Some(external) = External::configured() {
            let db = TestDb {
                host: Host::External(external),
                index: external.lease(),
            };
            db.empty();
            return db;
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let index = NEXT.fetch_add(1, Ordering::Relaxed) % SHARED_DATABASES;
        let db = TestDb {
            host: Host::Shared(shared_server()),
            index,
        };
        db.empty();
        db
    }

    /// Database 0 of a new standalone server for this test alone, stopped
    /// when the `TestDb` is dropped: for tests that stop, restart, pause
    /// or reconfigure the server.
    ///
    /// # Panics
    ///
    /// As [`TestDb::new`].
    pub fn own_server() -> TestDb {
        TestDb {
            host: Host::Own(Box::new(RedisServer::start())),
            index: 0,
        }
    }

    /// The server the database is on.
    ///
    /// # Panics
    ///
    /// On a server named by [`SERVER_URL_VARIABLE`], which this crate did
    /// not start: use [`TestDb::url`] or [`TestDb::client`] there.
    pub fn server(&self) -> &RedisServer {
        match &self.host {
            Host::Shared(server) => server,
            Host::Own(server) => server,
            Host::External(external) => panic!(
                "the database is on {}, a server this crate did not start ({SERVER_URL_VARIABLE}): use `url()` or `client()`",
                external.url
            ),
        }
    }

    /// The server, to stop, restart or freeze it: `None` for the shared
    /// server, which other tests use at the same time.
    pub fn server_mut(&mut self) -> Option<&mut RedisServer> {
        match &mut self.host {
            Host::Shared(_) | Host::External(_) => None,
            Host::Own(server) => Some(server),
        }
    }

    /// The database's number on its server.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// `redis://127.0.0.1:<port>/<database>`: a client built from it
    /// selects the database on every connection, reconnections included.
    pub fn url(&self) -> String {
        match &self.host {
            Host::External(external) => format!("{}/{}", external.url, self.index),
            _ => format!("{}{}", self.server().url(), self.index),
        }
    }

    /// A client of the database.
    ///
    /// # Panics
    ///
    /// Never for a URL of this crate's making.
    pub fn client(&self) -> redis::Client {
        let url = self.url();
        redis::Client::open(url.as_str())
            .unwrap_or_else(|error| panic!("cannot build a client for {url}: {error}"))
    }

    /// A new multiplexed connection to the database (clone it to share it
    /// between tasks).
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub async fn connection(&self) -> redis::aio::MultiplexedConnection {
        match self
            .client()
            .get_multiplexed_async_connection_with_config(&crate::patience::connection_config())
            .await
        {
            Ok(connection) => connection,
            Err(error) => panic!("cannot connect to {}: {error}", self.url()),
        }
    }

    /// Writes `state` into the database: each key with its value and TTL.
    ///
    /// # Panics
    ///
    /// If the server refuses a write (a key given twice with two types).
    pub async fn given(&self, state: &State) {
        let mut connection = self.connection().await;
        state.write(&mut connection).await;
    }

    /// Every key of the database with its type, value and TTL.
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub async fn state(&self) -> State {
        State::read(&mut self.connection().await).await
    }

    /// Asserts that the database holds exactly `expected`: the same keys,
    /// each with the same type and value, and a TTL within the expected
    /// one. Panics with a readable diff when it does not.
    ///
    /// # Panics
    ///
    /// When the state differs, listing every difference.
    #[track_caller]
    pub fn assert_state<'a>(&'a self, expected: &'a State) -> impl Future<Output = ()> + 'a {
        let caller = std::panic::Location::caller();
        async move {
            let found = self.state().await;
            if let Some(diff) = expected.diff(&found) {
                panic!("database {} at {caller}: {diff}", self.url());
            }
        }
    }

    /// Deletes every key of the database (`FLUSHDB`), as at the start of
    /// the test: for a property test that runs many cases on one database.
    ///
    /// # Panics
    ///
    /// If the server does not answer.
    pub fn empty(&self) {
        let mut connection = self
            .client()
            .get_connection()
            .unwrap_or_else(|error| panic!("cannot connect to {}: {error}", self.url()));
        let flushed: redis::RedisResult<()> = redis::cmd("FLUSHDB").query(&mut connection);
        if let Err(error) = flushed {
            panic!("FLUSHDB on {}: {error}", self.url());
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Host::External(external) = self.host {
            external.release(self.index);
        }
    }
}

impl Default for TestDb {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_ranges_read_first_to_last() {
        assert_eq!(parse_range("2-4"), Some(vec![4, 3, 2]));
        assert_eq!(parse_range(" 1 - 1 "), Some(vec![1]));
        assert_eq!(parse_range("4-2"), None);
        assert_eq!(parse_range("3"), None);
        assert_eq!(parse_range("a-b"), None);
    }

    #[test]
    #[should_panic(expected = "without a database")]
    fn a_url_with_a_database_is_refused() {
        External::new("redis://127.0.0.1:6379/0", None);
    }
}
