//! What the analysis produces for others: the source sent to the server
//! (marking every error a script ends with, recording exactly-once calls)
//! and the review a pull request reads.

pub mod acl;
pub mod exactly_once;
pub(crate) mod review;
pub mod sent;
