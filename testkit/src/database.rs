//! A database of its own for each test: on the server the test binary
//! shares between its tests (the default), or on a server of its own.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::RedisServer;
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

/// Where a [`TestDb`] lives.
#[derive(Debug)]
enum Host {
    Shared(&'static RedisServer),
    Own(Box<RedisServer>),
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
    /// The next database of the server this test binary shares, flushed.
    ///
    /// # Panics
    ///
    /// If the server executable is not installed (the message says how to
    /// install it) or does not start.
    pub fn new() -> TestDb {
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
    pub fn server(&self) -> &RedisServer {
        match &self.host {
            Host::Shared(server) => server,
            Host::Own(server) => server,
        }
    }

    /// The server, to stop, restart or freeze it: `None` for the shared
    /// server, which other tests use at the same time.
    pub fn server_mut(&mut self) -> Option<&mut RedisServer> {
        match &mut self.host {
            Host::Shared(_) => None,
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
        format!("{}{}", self.server().url(), self.index)
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
        match self.client().get_multiplexed_async_connection().await {
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

impl Default for TestDb {
    fn default() -> Self {
        Self::new()
    }
}
