//! Procedural macros of `redis-script`. Depend on the `redis-script` crate,
//! which re-exports them, rather than on this crate directly.

mod lua;
