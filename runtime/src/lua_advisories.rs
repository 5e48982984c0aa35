//! The warning the runtime logs once per server about the known
//! vulnerabilities of its Lua engine, when it first learns the server's
//! version (in [`preload`](crate::preload) and
//! [`Library::deploy`](crate::Library::deploy), which already talk to it).
//!
//! The table and its lookups are `redis-script-codes`'s (the checker reads
//! them too), re-exported here: [`lua_advisories`], [`ServerVersion`],
//! [`LuaAdvisory`], [`ServerFamily`].

use std::sync::Mutex;

pub use redis_script_codes::lua_advisories::{
    LuaAdvisory, ServerFamily, ServerVersion, lua_advisories,
};

/// The servers already warned about, by `run_id`, so each is named once
/// per process however many connections deploy to it.
static WARNED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// What `INFO server` said of a server, for the reports of preloads and
/// deploys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The release; `None` when the reply named none (or there was no
    /// reply).
    pub(crate) server: Option<ServerVersion>,
    /// The known Lua-engine vulnerabilities of that release.
    pub(crate) advisories: Vec<LuaAdvisory>,
}

/// Reads an `INFO server` reply and, the first time this process sees the
/// server (its `run_id`), logs a `tracing` warning naming the Lua-engine
/// vulnerabilities its release is exposed to. Returns the release and
/// them, warned or not.
pub(crate) fn observe(info: &str) -> Seen {
    let Some(version) = ServerVersion::from_info(info) else {
        return Seen::default();
    };
    let exposed = lua_advisories(version);
    if exposed.is_empty() {
        return Seen {
            server: Some(version),
            advisories: exposed,
        };
    }
    let run_id = info
        .lines()
        .find_map(|line| line.trim_end().strip_prefix("run_id:"))
        .unwrap_or_default()
        .to_string();
    let first_time = WARNED
        .lock()
        .map(|mut warned| {
            let first = !warned.contains(&run_id);
            if first {
                warned.push(run_id);
            }
            first
        })
        // A poisoned set only loses the once-per-server guarantee.
        .unwrap_or(true);
    if first_time {
        let (major, minor, patch) = version.release;
        let family = match version.family {
            ServerFamily::Redis => "Redis",
            ServerFamily::Valkey => "Valkey",
        };
        let ids: Vec<&str> = exposed.iter().map(|advisory| advisory.id).collect();
        tracing::warn!(
            server.release = %format!("{family} {major}.{minor}.{patch}"),
            advisories = %ids.join(", "),
            "{family} {major}.{minor}.{patch} has known Lua-engine vulnerabilities: {}; upgrade to a patch release that fixes them (see the redis-script guide, safety)",
            ids.join(", ")
        );
    }
    Seen {
        server: Some(version),
        advisories: exposed,
    }
}

/// [`observe`] on the reply to [`info_command`]. An error (a user without
/// permission for `INFO`, a lost connection) only means no warning and
/// nothing seen: the work that asked has already succeeded.
pub(crate) fn observe_reply(reply: redis::RedisResult<redis::Value>) -> Seen {
    match reply {
        Ok(value) => observe_value(&value),
        Err(_) => Seen::default(),
    }
}

/// [`observe`] on one reply value (an error reply sees nothing).
pub(crate) fn observe_value(value: &redis::Value) -> Seen {
    let text = match value {
        redis::Value::BulkString(bytes) => std::str::from_utf8(bytes).ok(),
        redis::Value::VerbatimString { text, .. } | redis::Value::SimpleString(text) => {
            Some(text.as_str())
        }
        _ => None,
    };
    text.map(observe).unwrap_or_default()
}

/// `INFO server`, whose reply names the release.
pub(crate) fn info_command() -> redis::Cmd {
    let mut command = redis::cmd("INFO");
    command.arg("server");
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_named_once() {
        let info = "redis_version:8.0.2\r\nrun_id:a_server_is_named_once\r\n";
        let first = observe(info);
        assert_eq!(first.advisories.len(), 5);
        assert_eq!(
            first.server,
            Some(ServerVersion {
                family: ServerFamily::Redis,
                release: (8, 0, 2)
            })
        );
        assert!(
            WARNED
                .lock()
                .is_ok_and(|warned| warned.iter().any(|id| id == "a_server_is_named_once"))
        );
        assert_eq!(
            observe(info),
            first,
            "the advisories are returned each time"
        );
    }

    #[test]
    fn a_refused_or_unreadable_info_sees_nothing() {
        let refused = crate::test_support::server_error("NOPERM no permissions to run 'info'");
        assert_eq!(observe_value(&refused), Seen::default());
        assert_eq!(observe_value(&redis::Value::Nil), Seen::default());
        let fixed = redis::Value::BulkString(b"redis_version:8.6.3\r\n".to_vec());
        let seen = observe_value(&fixed);
        assert!(seen.server.is_some() && seen.advisories.is_empty());
    }
}
