//! Locating the `redis-server` and `redis-cli` executables.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Directories searched after `PATH`, in order.
const FALLBACK_DIRS: &[&str] = &["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"];

/// How to install both binaries; every "not found" panic ends with this.
const INSTALL_HINT: &str = "install it with `apt-get install -y redis-server` (Debian/Ubuntu) \
                            or `brew install redis` (macOS)";

/// Returns the path of the `redis-server` executable.
///
/// The environment variable `REDIS_SERVER_BIN` wins when set; otherwise the
/// directories of `PATH` are searched, then `/usr/bin`, `/usr/local/bin` and
/// `/opt/homebrew/bin`.
///
/// # Panics
///
/// When no executable is found, with a message saying how to install it. Tests
/// that need Redis fail loudly rather than skip.
pub fn redis_server_binary() -> PathBuf {
    locate_or_panic("redis-server", "REDIS_SERVER_BIN")
}

/// Returns the path of the `redis-cli` executable.
///
/// Looked up like [`redis_server_binary`], with `REDIS_CLI_BIN` as the
/// override. On Debian/Ubuntu it comes with the `redis-server` package (via
/// `redis-tools`); on macOS with `brew install redis`.
///
/// # Panics
///
/// When no executable is found, with a message saying how to install it.
pub fn redis_cli_binary() -> PathBuf {
    locate_or_panic("redis-cli", "REDIS_CLI_BIN")
}

fn locate_or_panic(name: &str, env_var: &str) -> PathBuf {
    match locate(
        name,
        env_var,
        std::env::var_os(env_var),
        std::env::var_os("PATH"),
    ) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

/// The lookup itself, with the environment passed in so it can be tested
/// without touching the process environment.
pub(crate) fn locate(
    name: &str,
    env_var: &str,
    override_value: Option<OsString>,
    path_value: Option<OsString>,
) -> Result<PathBuf, String> {
    if let Some(value) = override_value.filter(|v| !v.is_empty()) {
        let candidate = PathBuf::from(&value);
        return if is_executable(&candidate) {
            Ok(candidate)
        } else {
            Err(format!(
                "{name} not found: {env_var}={} is not an executable file; \
                 {INSTALL_HINT}, or set {env_var} to the path of {name}",
                candidate.display()
            ))
        };
    }
    let path_dirs = path_value
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(FALLBACK_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| format!("{name} not found: {INSTALL_HINT}, or set {env_var}"))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_server_message_says_how_to_install() {
        let err = locate(
            "redis-server-that-does-not-exist",
            "REDIS_SERVER_BIN",
            None,
            Some(OsString::from("/nonexistent")),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "redis-server-that-does-not-exist not found: install it with \
             `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS), \
             or set REDIS_SERVER_BIN"
        );
    }

    #[test]
    fn the_exact_message_for_redis_server() {
        // Same format string as above, with the real name: this is the text
        // users see on a machine without Redis.
        let expected = "redis-server not found: install it with `apt-get install -y redis-server` \
                        (Debian/Ubuntu) or `brew install redis` (macOS), or set REDIS_SERVER_BIN";
        assert_eq!(
            format!("redis-server not found: {INSTALL_HINT}, or set REDIS_SERVER_BIN"),
            expected
        );
    }

    #[test]
    fn override_must_be_executable() {
        let err = locate(
            "redis-server",
            "REDIS_SERVER_BIN",
            Some(OsString::from("/nonexistent/redis-server")),
            None,
        )
        .unwrap_err();
        assert!(
            err.contains("REDIS_SERVER_BIN=/nonexistent/redis-server"),
            "{err}"
        );
        assert!(err.contains("apt-get install -y redis-server"), "{err}");
    }

    #[test]
    fn override_wins_over_path() {
        // /bin/sh exists everywhere this crate is tested.
        let found = locate(
            "redis-server",
            "REDIS_SERVER_BIN",
            Some(OsString::from("/bin/sh")),
            None,
        )
        .unwrap();
        assert_eq!(found, PathBuf::from("/bin/sh"));
    }

    #[test]
    fn path_is_searched_in_order() {
        let found = locate("sh", "X", None, Some(OsString::from("/nonexistent:/bin"))).unwrap();
        assert_eq!(found, PathBuf::from("/bin/sh"));
    }
}
