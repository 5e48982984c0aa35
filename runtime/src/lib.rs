//! Typed, compile-time-checked Redis Lua scripts.
//!
//! Declare a script with [`macro@redis_script`] on a bodyless `async fn`
//! signature; the macro reads and checks the `.lua` file at compile time and
//! generates a typed function that runs it with `EVALSHA`, falling back to
//! `EVAL` on `NOSCRIPT`, after checking that all keys share one Redis
//! Cluster hash slot.
//!
//! ```no_run
//! use redis_script::redis_script;
//!
//! /// Deletes the lock only if `token` still owns it. Returns 1 if deleted.
//! #[redis_script(path = "../lua/release_lock.lua", keys = 1)]
//! pub async fn release_lock(lock: &str, token: &str) -> i64;
//!
//! # async fn demo(conn: &mut redis::aio::MultiplexedConnection, token: &str) -> Result<(), redis_script::Error> {
//! let released = release_lock(conn, "lock:{order-7}", token).await?;
//! # Ok(()) }
//! ```
//!
//! (`path` is relative to the directory of the crate's `Cargo.toml`.)
//!
//! The generated items for `release_lock` are:
//! - `async fn release_lock(conn: &mut (dyn AsyncConnection + Send), lock: &str, token: &str) -> Result<i64, redis_script::Error>`
//!   for any async redis-rs connection ([`AsyncConnection`]:
//!   `MultiplexedConnection`, `ConnectionManager`, the async cluster
//!   connection, pooled connections);
//! - `release_lock::SCRIPT`, the embedded [`Script`] (source, SHA1, flags);
//! - `release_lock::call(lock, token)`, a prepared [`Call`] to invoke later;
//! - for a script declared `exactly_once`, also `f::call_with_id(id, …)`:
//!   the call carries the caller's [`CallId`], its reply is recorded on the
//!   server, and every send with that id runs the script at most once
//!   ([`ExactlyOnce`]; the guide's [exactly-once page](guide::exactly_once)).

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

// Lets the derives' `::redis_script::…` paths resolve inside this crate's own tests.
#[cfg(test)]
extern crate self as redis_script;

pub mod batch;
mod call;
mod checked;
pub mod cluster;
mod decode;
mod deploy;
mod error;
mod exactly_once;
#[cfg(test)]
mod guide_links;
#[cfg(feature = "json")]
mod json;
mod library;
mod lua_advisories;
mod preload;
mod refusal;
mod replicas;
mod reply;
mod retry;
mod script;
mod script_error;
#[cfg(feature = "sentinel")]
pub mod sentinel;
pub mod shape;
mod slot;
pub mod telemetry;
#[cfg(test)]
mod test_support;
mod timer;
#[cfg(feature = "cluster")]
mod topology;

pub use batch::{Batch, KnownScripts};
pub use call::{Call, DEFAULT_DEADLINE, Invocation};
pub use checked::AsyncConnection;
pub use deploy::{Deployed, Deployment, OnConflict};
pub use error::{ArgumentProblem, Error, KeyPrefixProblem, ScriptLocation, ServerFeature};
pub use exactly_once::{CallId, ExactlyOnce};
#[cfg(feature = "json")]
pub use json::Json;
pub use library::Library;
pub use lua_advisories::{LuaAdvisory, ServerFamily, ServerVersion, lua_advisories};
pub use preload::{Preloaded, preload, preload_blocking};
/// The redis-rs version the calls take connections of, for crates that
/// would otherwise have to keep their own `redis` dependency in step.
pub use redis;
#[doc = include_str!("doc/json_shape.md")]
pub use redis_script_macros::JsonShape;
#[doc = include_str!("doc/script_error.md")]
pub use redis_script_macros::ScriptError;
#[doc = include_str!("doc/script_reply.md")]
pub use redis_script_macros::ScriptReply;
pub use redis_script_macros::{redis_library, redis_script};
pub use replicas::{ReadFrom, Replicas};
pub use retry::RetryRefusals;
pub use script::Script;
pub use script_error::{Failure, ScriptError};
pub use shape::JsonShape;
pub use shape::ReplyShape;

/// Guides: what the checks prove and how to read them. Each page is
/// reference material for one topic; the crate root has the overview.
///
/// The pages are read on the code host too, so their links to items are
/// reference links defined twice: at the end of each page for the code host
/// (a page or a source file), and first, in `intra_doc_links.md`, for
/// rustdoc. Markdown takes the first definition of a label.
pub mod guide {
    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/generated.md")]
    pub mod generated {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/functions.md")]
    pub mod functions {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/exactly_once.md")]
    pub mod exactly_once {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/checks.md")]
    pub mod checks {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/codes.md")]
    pub mod codes {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/runtime.md")]
    pub mod runtime {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/observability.md")]
    pub mod observability {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/values.md")]
    pub mod values {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/safety.md")]
    pub mod safety {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/cluster.md")]
    pub mod cluster {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/least_privilege.md")]
    pub mod least_privilege {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/servers.md")]
    pub mod servers {}

    #[doc = include_str!("doc/guide/intra_doc_links.md")]
    #[doc = include_str!("doc/guide/replicas.md")]
    pub mod replicas {}
}

/// Items used by the code `#[redis_script]` and the derives generate. Not a
/// public API: it may change in any release. The version in its name
/// changes whenever generated code and this crate stop fitting together,
/// so a mismatch of `redis-script-macros` and `redis-script` fails with
/// "could not find `__private_v3`" rather than a stranger error.
#[doc(hidden)]
pub mod __private_v3 {
    pub use crate::call::{Keys, push_argument, push_key_prefix, start_call, start_call_with_id};
    pub use crate::checked::{
        AsyncConnection, Decodable, Encodable, KnownShape, Probe, Undecodable, Unencodable,
        UnknownShape,
    };
    pub use crate::decode::{
        ReplyTag, ReplyTagOwned, error_field, error_fields, error_optional, error_words,
        reply_array, reply_array_owned, reply_tag, reply_tag_owned,
    };
    pub use crate::exactly_once::exactly_once;
    pub use crate::library::new_library;
    pub use crate::script::{
        new_function, new_script, with_exactly_once, with_key_prefixes, with_read_from,
    };
    pub use crate::shape::checks::{
        CheckMessage, NoReplyShape, ShapeProbe, accepts_array, accepts_bare, accepts_field_values,
        accepts_single_value, accepts_table, accepts_tag, array_mismatch, array_shape,
        contains_code, has_element, has_tag, hmget_fix, str_eq, tagged_shape, unknown_code_message,
        unknown_tag_message, unraised_code, unreturned_variant, variant,
    };
    pub use crate::shape::json::{JsonProbe, NoJsonShape, json_field, json_object};
    pub use crate::shape::json_checks::{
        EncodedKind, JsonUse, json_field_problem, json_missing_fields, json_path_problem,
        json_use_problem,
    };
    pub use crate::shape::{JsonField, JsonObject, JsonShape, JsonType, Shape, Written};
    pub use crate::{
        Call, CallId, Error, Failure, Library, ReadFrom, ReplyShape, Script, ScriptError,
    };
    pub use redis;
}
