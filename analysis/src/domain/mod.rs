//! What the walk computes with: Lua types, the abstract values a local
//! holds, scopes, and where a key comes from. Nothing here walks.

pub(crate) mod keys;
pub(crate) mod scope;
pub(crate) mod types;
pub(crate) mod value;
