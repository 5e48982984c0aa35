//! What the analysis produces for others: the source sent to the server
//! (marking every error a script ends with, recording exactly-once calls)
//! and the access rules a restricted user needs.

pub mod acl;
pub mod exactly_once;
pub mod sent;
