//! What the workflows need loaded on a server, for a deploy pipeline that
//! runs with a user allowed to load (`+script|load +function|load
//! +function|list`) before an application user that may only call them:
//! every script as the calls send it, and the library.
//!
//! ```no_run
//! # async fn demo(deployer: &mut redis::aio::MultiplexedConnection) -> Result<(), redis_script::Error> {
//! redis_script_examples::workflows::deploy::deploy_all(deployer).await?;
//! # Ok(()) }
//! ```

use redis::aio::ConnectionLike;
use redis_script::{Error, Library, OnConflict, Script, preload};

use super::{counter, idempotency, lock, quota, rate_limit, session, transfer, versioned};

/// Every script the workflows call. Each is loaded as its calls send it
/// (`SCRIPT.source()`, SHA1 `SCRIPT.sha1()`), not as its `.lua` file.
pub const SCRIPTS: [&Script; 12] = [
    &counter::counter_increment::SCRIPT,
    &idempotency::idempotency_claim::SCRIPT,
    &idempotency::idempotency_complete::SCRIPT,
    &lock::lock_acquire::SCRIPT,
    &lock::lock_extend::SCRIPT,
    &lock::lock_release::SCRIPT,
    &rate_limit::rate_limit_fixed::SCRIPT,
    &rate_limit::rate_limit_sliding::SCRIPT,
    &session::session_touch::SCRIPT,
    &transfer::transfer::SCRIPT,
    &versioned::versioned_set::SCRIPT,
    &versioned::versioned_get::SCRIPT,
];

/// Every library the workflows call.
pub const LIBRARIES: [&Library; 1] = [&quota::quota_lib::LIBRARY];

/// Loads every script and deploys every library on the server of
/// `connection`: a new version of a library replaces the one loaded.
pub async fn deploy_all<C>(connection: &mut C) -> Result<(), Error>
where
    C: ConnectionLike + Send,
{
    preload(connection, &SCRIPTS).await?;
    for library in LIBRARIES {
        library.deploy(connection, OnConflict::Replace).await?;
    }
    Ok(())
}

/// One line per script and library, tab-separated: its kind, name, SHA1
/// and file. What a pipeline outside Rust loads is each script's
/// `SCRIPT.source()`, which [`write_sources`] writes next to it.
pub fn manifest() -> String {
    let mut lines = String::new();
    for script in SCRIPTS {
        lines.push_str(&format!(
            "script\t{}\t{}\t{}\n",
            script.name(),
            script.sha1(),
            script.path()
        ));
    }
    for library in LIBRARIES {
        lines.push_str(&format!(
            "library\t{}\t{}\t{}\n",
            library.name(),
            library.sha1(),
            library.path()
        ));
    }
    lines
}

/// Writes `manifest.tsv` ([`manifest`]) and each script's and library's
/// source as sent, `<name>.lua`, into `directory`: what `SCRIPT LOAD` and
/// `FUNCTION LOAD` take.
pub fn write_sources(directory: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(directory)?;
    std::fs::write(directory.join("manifest.tsv"), manifest())?;
    for script in SCRIPTS {
        std::fs::write(
            directory.join(format!("{}.lua", script.name())),
            script.source(),
        )?;
    }
    for library in LIBRARIES {
        std::fs::write(
            directory.join(format!("{}.lua", library.name())),
            library.source(),
        )?;
    }
    Ok(())
}
