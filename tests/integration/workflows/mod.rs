//! Invariant tests of the workflow library (`lua/` + `examples/src/workflows/`):
//! many tasks on the same keys, on a standalone server and on a cluster.

mod idempotency;
mod lock;
mod redlock;
mod versioned;
