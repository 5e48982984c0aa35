//! The workflow library: typed functions over the project's `lua/` scripts,
//! plus the client-side logic some workflows need (Redlock's quorum).

pub mod counter;
pub mod idempotency;
pub mod lock;
pub mod quota;
pub mod rate_limit;
pub mod redlock;
pub mod session;
pub mod transfer;
pub mod versioned;

pub mod deploy;
