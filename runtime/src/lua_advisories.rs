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

/// Reads an `INFO server` reply and, the first time this process sees the
/// server (its `run_id`), logs a `tracing` warning naming the Lua-engine
/// vulnerabilities its release is exposed to. Returns them, warned or not.
pub(crate) fn observe(info: &str) -> Vec<LuaAdvisory> {
    let Some(version) = ServerVersion::from_info(info) else {
        return Vec::new();
    };
    let exposed = lua_advisories(version);
    if exposed.is_empty() {
        return exposed;
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
    exposed
}

/// [`observe`] on the reply to [`info_command`]. An error (a user without
/// permission for `INFO`, a lost connection) only means no warning: the
/// work that asked has already succeeded.
pub(crate) fn observe_reply(reply: redis::RedisResult<redis::Value>) {
    let text = match reply {
        Ok(redis::Value::BulkString(bytes)) => String::from_utf8(bytes).ok(),
        Ok(redis::Value::VerbatimString { text, .. } | redis::Value::SimpleString(text)) => {
            Some(text)
        }
        _ => None,
    };
    if let Some(info) = text {
        observe(&info);
    }
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
        assert_eq!(first.len(), 5);
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
}
