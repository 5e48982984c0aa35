//! Versioned write (optimistic concurrency) over `lua/versioned_set.lua`
//! and `lua/versioned_get.lua`.
//!
//! A document is stored with a version number. A writer reads the document
//! and its version, computes a change, and writes it back *expecting* that
//! version: if someone else wrote in between, the write is refused with
//! [`VersionError::VersionConflict`] and the writer re-reads and tries again.
//! Each version therefore has exactly one writer and no update is lost.
//!
//! ```no_run
//! # async fn demo(connection: &mut redis::aio::MultiplexedConnection) -> Result<(), Box<dyn std::error::Error>> {
//! use redis_script::Failure;
//! use redis_script_examples::workflows::versioned::{self, VersionError, WriteOutcome};
//!
//! let key = "doc:{cart-7}";
//! let outcome = versioned::set_versioned(connection, key, &serde_json::json!({"items": []}), None, None).await?;
//! assert_eq!(outcome, WriteOutcome::Added { version: 1 });
//! match versioned::set_versioned(connection, key, &serde_json::json!({"items": [1]}), Some(1), None).await {
//!     Ok(WriteOutcome::Updated { version }) => println!("now at version {version}"),
//!     Err(Failure::Declared(VersionError::VersionConflict { found, .. })) => println!("lost the race to version {found}"),
//!     other => println!("{other:?}"),
//! }
//! # Ok(()) }
//! ```

use std::time::Duration;

use redis::aio::ConnectionLike;
use redis_script::{Error, Failure, Json, ScriptError, ScriptReply, redis_script};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A successful write of `lua/versioned_set.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ScriptReply)]
pub enum WriteOutcome {
    /// `{'ADDED', 1}`: nothing was stored; the document now exists at version 1.
    Added {
        /// Always 1.
        version: u64,
    },
    /// `{'UPDATED', version}`: the expected version was stored and is now
    /// replaced by `version` (the expected one plus one).
    Updated {
        /// The new version.
        version: u64,
    },
}

impl WriteOutcome {
    /// The version the document has after this write.
    pub fn version(self) -> u64 {
        match self {
            Self::Added { version } | Self::Updated { version } => version,
        }
    }
}

/// A write that `lua/versioned_set.lua` refused.
#[derive(Debug, Clone, PartialEq, Eq, ScriptError)]
pub enum VersionError {
    /// `VERSION_CONFLICT expected <v> found <v>`: another writer moved the
    /// document on since it was read. Re-read and try again.
    VersionConflict {
        /// The version the write was based on.
        expected: u64,
        /// The version stored now.
        found: u64,
    },
    /// `NOT_FOUND expected <v>`: an update expected a version but nothing is
    /// stored (never written, deleted, or expired).
    NotFound {
        /// The version the write was based on.
        expected: u64,
    },
    /// `ALREADY_EXISTS found <v>`: a create (no expected version) found a
    /// document already stored.
    AlreadyExists {
        /// The version stored now.
        found: u64,
    },
    /// `INVALID_DOCUMENT <reason>`: the document is not JSON, or the TTL is
    /// not a number. [`set_versioned`] also returns it, without sending
    /// anything, when the document cannot be serialized.
    InvalidDocument {
        /// What is wrong.
        message: String,
    },
}

/// Stores `json` at `document` if its version is `expected` (`''`: if
/// nothing is stored). Prefer [`set_versioned`], which takes typed values.
#[redis_script(
    path = "../lua/versioned_set.lua",
    keys = 1,
    returns = WriteOutcome,
    errors = VersionError
)]
pub async fn versioned_set(document: &str, json: &str, expected: &str, ttl_ms: u64)
-> WriteOutcome;

/// The version and JSON text stored at `document`, `None` when nothing is.
/// Prefer [`get_versioned`], which decodes the document.
#[redis_script(path = "../lua/versioned_get.lua", keys = 1)]
pub async fn versioned_get<T: DeserializeOwned>(document: &str) -> Option<(u64, Json<T>)>;

/// A document read with [`get_versioned`], and the version to expect when
/// writing a change of it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned<T> {
    /// The stored version (1 after the first write).
    pub version: u64,
    /// The document.
    pub doc: T,
}

/// Writes `doc` at `key` as JSON.
///
/// * `expected_version: None` creates the document: it answers
///   [`WriteOutcome::Added`], or [`VersionError::AlreadyExists`] when a
///   document is already stored.
/// * `Some(version)` updates the document read at `version`: it answers
///   [`WriteOutcome::Updated`] with `version + 1`, or
///   [`VersionError::VersionConflict`] / [`VersionError::NotFound`].
///
/// `ttl: None` keeps the document until it is deleted (and removes an
/// expiry set by an earlier write); `Some(ttl)` expires it `ttl` after this
/// write (rounded up to a millisecond).
pub async fn set_versioned<C, T>(
    connection: &mut C,
    key: &str,
    doc: &T,
    expected_version: Option<u64>,
    ttl: Option<Duration>,
) -> Result<WriteOutcome, Failure<VersionError>>
where
    C: ConnectionLike + Send,
    T: Serialize + ?Sized,
{
    let json = serde_json::to_string(doc).map_err(|error| {
        Failure::Declared(VersionError::InvalidDocument {
            message: format!("cannot serialize the document: {error}"),
        })
    })?;
    let expected = expected_version.map(|v| v.to_string()).unwrap_or_default();
    let ttl_ms = ttl.map_or(0, |ttl| ttl.as_millis().max(1) as u64);
    versioned_set(connection, key, &json, &expected, ttl_ms).await
}

/// Reads the document at `key` and its version, `None` when nothing is
/// stored. A stored document that does not decode as `T` is an
/// [`Error::Decode`].
pub async fn get_versioned<C, T>(
    connection: &mut C,
    key: &str,
) -> Result<Option<Versioned<T>>, Error>
where
    C: ConnectionLike + Send,
    T: DeserializeOwned,
{
    let stored = versioned_get::<T>(connection, key).await?;
    Ok(stored.map(|(version, Json(doc))| Versioned { version, doc }))
}

/// Read-modify-write with retries: reads the document at `key` (`None` when
/// absent), applies `change`, and writes the result expecting the version it
/// read; on a conflict (someone else wrote first) it reads again, up to
/// `attempts` times. Returns the write that landed and how many conflicts it
/// went through.
pub async fn update<C, T, F>(
    connection: &mut C,
    key: &str,
    ttl: Option<Duration>,
    attempts: u32,
    mut change: F,
) -> Result<(WriteOutcome, u32), Failure<VersionError>>
where
    C: ConnectionLike + Send,
    T: Serialize + DeserializeOwned,
    F: FnMut(Option<T>) -> T,
{
    let mut conflicts = 0;
    loop {
        let current: Option<Versioned<T>> = get_versioned(connection, key).await?;
        let expected = current.as_ref().map(|current| current.version);
        let next = change(current.map(|current| current.doc));
        match set_versioned(connection, key, &next, expected, ttl).await {
            Err(Failure::Declared(
                VersionError::VersionConflict { .. }
                | VersionError::AlreadyExists { .. }
                | VersionError::NotFound { .. },
            )) if conflicts + 1 < attempts => conflicts += 1,
            result => return result.map(|outcome| (outcome, conflicts)),
        }
    }
}
