//! The workflow library: typed functions over the project's `lua/` scripts,
//! plus the client-side logic some workflows need (Redlock's quorum).

pub mod idempotency;
pub mod lock;
pub mod redlock;
pub mod versioned;
