//! Invariant tests of the workflow library (`lua/` + `examples/src/workflows/`):
//! many tasks on the same keys, on a standalone server and on a cluster.

mod counter;
mod idempotency;
mod lock;
mod quota;
mod rate_limit;
mod redlock;
mod session;
mod transfer;
mod versioned;
