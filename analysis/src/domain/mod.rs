//! What the walk computes with: Lua types, the abstract values a local
//! holds, scopes, where a key comes from, and what a reply is as a Lua
//! value; and the vocabulary every layer above shares: what the caller
//! declares (the signature) and what the analysis reports (diagnostics
//! aside, which point into the source). Nothing here walks.

pub(crate) mod analysis;
pub(crate) mod json;
pub(crate) mod keys;
pub(crate) mod library;
pub(crate) mod operand;
pub(crate) mod replies;
pub(crate) mod review;
pub(crate) mod scope;
pub(crate) mod signature;
pub(crate) mod types;
pub(crate) mod value;
