//! Integration tests against real `redis-server` (or, with
//! `REDIS_SCRIPT_TEST_SERVER=valkey`, `valkey-server`) processes started on
//! free loopback ports: a standalone server and a 3-primary cluster with one
//! replica each. Every scenario runs on both.

mod batches;
mod blocking;
mod calls;
mod corpus;
mod deadlines;
mod derived_keys;
mod endless_loops;
mod exactly_once;
mod exactly_once_faults;
mod failover;
mod fault_kit;
mod faults;
mod forged_refusals;
mod functions;
mod preload;
mod replies;
mod reply_conversions;
mod server_refusals;
mod servers;
mod slots;
mod telemetry;
mod workflows;
