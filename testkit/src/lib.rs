//! Throwaway `redis-server` (or `valkey-server`) processes for tests and
//! examples.
//!
//! Every server this crate starts listens on a free port of `127.0.0.1` only,
//! keeps its files in a private directory under [`std::env::temp_dir`], has
//! persistence turned off, and is killed (and reaped) when its handle is
//! dropped, also while a test is unwinding from a panic.
//!
//! * [`RedisServer`] is one standalone (or cluster-mode) server.
//! * [`RedisCluster`] is a cluster of primaries and replicas, created with
//!   `redis-cli --cluster create` (or `valkey-cli`) and waited on until it is
//!   fully healthy.
//! * [`Stats`] reads `INFO commandstats`, resets statistics and flushes the
//!   script cache, on a server or summed over a cluster.
//!
//! # Which server
//!
//! The environment variable `REDIS_SCRIPT_TEST_SERVER` selects the server
//! family ([`server_flavor`]): `redis` (the default) runs `redis-server` and
//! `redis-cli`, `valkey` runs `valkey-server` and `valkey-cli` (found in the
//! directory named by `VALKEY_BIN_DIR`, on `PATH`, or in the usual install
//! directories; `scripts/ensure-valkey` installs them and prints their
//! directory). `REDIS_SERVER_BIN` and `REDIS_CLI_BIN` name the executables
//! explicitly and win over the search. A running server reports what it is
//! with [`RedisServer::flavor`] and [`RedisServer::version`].
//!
//! This is test support: failures (a missing binary, a server that does not
//! come up, a cluster that does not converge) panic with a message that says
//! what happened and includes the relevant server log or CLI output.
//! Nothing is ever skipped silently.
//!
//! ```no_run
//! use redis_script_test::{RedisServer, Stats};
//!
//! let server = RedisServer::start();
//! let mut con = server.client().get_connection().unwrap();
//! let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut con).unwrap();
//! assert_eq!(server.calls("set"), 1);
//! ```

mod admin;
mod binaries;
mod cluster;
mod concurrency;
mod counting;
mod database;
mod identity;
mod ports;
mod server;
mod state;
mod stats;
mod watchdog;

pub use binaries::{
    SERVER_ENV_VAR, ServerFlavor, redis_cli_binary, redis_server_binary, server_flavor,
};
pub use cluster::RedisCluster;
pub use concurrency::{Turn, concurrently};
pub use counting::CountingConnection;
pub use database::{SHARED_DATABASES, TestDb};
pub use identity::ServerVersion;
pub use server::RedisServer;
pub use state::{Data, Entry, State, Ttl};
pub use stats::{CommandStat, Stats, parse_commandstats};
