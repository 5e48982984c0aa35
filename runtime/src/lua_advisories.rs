//! Known vulnerabilities of the servers' Lua engine, per release, and the
//! warning the runtime logs once per server when it first learns the
//! server's version (in [`preload`](crate::preload) and
//! [`Library::deploy`](crate::Library::deploy), which already talk to it).
//!
//! The table below is the guide's table
//! ([`guide::safety`](crate::guide::safety), "Known Lua-engine
//! vulnerabilities"), which cites the release notes or advisory behind each
//! fact. A branch the table says nothing about is never reported: a
//! warning needs a fact.

use std::sync::Mutex;

/// A server family: its releases are numbered apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerFamily {
    /// Redis (`redis_version` in `INFO server`).
    Redis,
    /// Valkey (`valkey_version`; its `redis_version` is a fixed
    /// compatibility number, not its release).
    Valkey,
}

/// A server release, as `INFO server` states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerVersion {
    /// Redis or Valkey.
    pub family: ServerFamily,
    /// `major.minor.patch`.
    pub release: (u32, u32, u32),
}

impl ServerVersion {
    /// The release an `INFO server` reply names: `valkey_version` when the
    /// server has one, else `redis_version`. `None` when neither reads as
    /// `major.minor.patch`.
    pub fn from_info(info: &str) -> Option<ServerVersion> {
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.trim_end().strip_prefix(name)?.strip_prefix(':'))
        };
        let (family, text) = match field("valkey_version") {
            Some(text) => (ServerFamily::Valkey, text),
            None => (ServerFamily::Redis, field("redis_version")?),
        };
        let mut parts = text.split('.').map(|part| part.parse::<u32>().ok());
        let release = (parts.next()??, parts.next()??, parts.next()??);
        Some(ServerVersion { family, release })
    }
}

/// A known vulnerability of the Lua engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LuaAdvisory {
    /// `CVE-…`, or the advisory's `GHSA-…` when it has no CVE.
    pub id: &'static str,
    /// What it is, in one line.
    pub summary: &'static str,
}

/// What the sources say of one branch (`major.minor`).
#[derive(Debug, Clone, Copy)]
enum Branch {
    /// Fixed from this patch release on.
    Fixed(u32),
    /// No release of the branch fixes it, up to and including this patch
    /// (the branch's last release the notes list); later ones are unknown.
    UnfixedThrough(u32),
    /// The branch's notes were not available: no claim either way.
    Unknown,
}

/// One advisory and the releases it concerns.
#[derive(Clone, Copy)]
struct Row {
    advisory: LuaAdvisory,
    family: ServerFamily,
    /// The advisory's own affected range, `< this` (Redis numbering): a
    /// release below it on a branch the table does not list is exposed,
    /// since the advisories say every release with Lua scripting is. `None`
    /// when only the listed branches are known.
    affected_below: Option<(u32, u32, u32)>,
    branches: &'static [((u32, u32), Branch)],
}

const QUARTET_REDIS: &[((u32, u32), Branch)] = &[
    ((6, 2), Branch::Fixed(20)),
    ((7, 2), Branch::Fixed(11)),
    ((7, 4), Branch::Fixed(6)),
    ((8, 0), Branch::Fixed(4)),
    ((8, 2), Branch::Fixed(2)),
];

const QUARTET_VALKEY: &[((u32, u32), Branch)] = &[
    ((7, 2), Branch::Fixed(11)),
    ((8, 0), Branch::Fixed(6)),
    ((8, 1), Branch::Fixed(4)),
    ((9, 0), Branch::Fixed(0)),
];

const fn quartet(id: &'static str, summary: &'static str) -> [Row; 2] {
    let advisory = LuaAdvisory { id, summary };
    [
        Row {
            advisory,
            family: ServerFamily::Redis,
            affected_below: Some((8, 2, 2)),
            branches: QUARTET_REDIS,
        },
        Row {
            advisory,
            family: ServerFamily::Valkey,
            affected_below: None,
            branches: QUARTET_VALKEY,
        },
    ]
}

const CVE_2025_49844: [Row; 2] = quartet(
    "CVE-2025-49844",
    "a script can make the garbage collector free memory still in use (remote code execution)",
);
const CVE_2025_46817: [Row; 2] = quartet(
    "CVE-2025-46817",
    "a script can overflow an integer in the Lua library (remote code execution)",
);
const CVE_2025_46818: [Row; 2] = quartet(
    "CVE-2025-46818",
    "a script can run code in the context of another user",
);
const CVE_2025_46819: [Row; 2] = quartet(
    "CVE-2025-46819",
    "a script can read out of bounds or crash the server",
);

const CVE_2026_23631: LuaAdvisory = LuaAdvisory {
    id: "CVE-2026-23631",
    summary: "a script and a full sync can free memory still in use on a writable replica (remote code execution)",
};

/// The table. Sources (cited in full in the guide's table): the Redis
/// release notes in github.com/redis/docs
/// (`content/operate/oss_and_stack/stack-with-enterprise/release-notes/redisce/`,
/// the 7.4, 8.0, 8.2, 8.4 and 8.6 files), Redis `00-RELEASENOTES` at tags
/// 8.0.6 and 8.6.3, the release pages of Redis 6.2.20 and 7.2.11, the CVE
/// records of the advisories (GHSA-4789-qfc9-5f9q, GHSA-8ghh-qpmp-7826),
/// the Valkey release pages of 7.2.11, 8.0.6, 8.1.4 and 9.0.0-rc3, and
/// Valkey `00-RELEASENOTES` at tag 9.1.2.
const TABLE: &[Row] = &[
    CVE_2025_49844[0],
    CVE_2025_49844[1],
    CVE_2025_46817[0],
    CVE_2025_46817[1],
    CVE_2025_46818[0],
    CVE_2025_46818[1],
    CVE_2025_46819[0],
    CVE_2025_46819[1],
    Row {
        advisory: CVE_2026_23631,
        family: ServerFamily::Redis,
        affected_below: Some((8, 6, 3)),
        branches: &[
            ((7, 4), Branch::Fixed(9)),
            ((8, 0), Branch::UnfixedThrough(6)),
            ((8, 2), Branch::Fixed(6)),
            ((8, 4), Branch::Fixed(3)),
            ((8, 6), Branch::Fixed(3)),
            // Their notes after May 2026 were not available.
            ((6, 2), Branch::Unknown),
            ((7, 2), Branch::Unknown),
        ],
    },
    Row {
        advisory: CVE_2026_23631,
        family: ServerFamily::Valkey,
        affected_below: None,
        branches: &[((9, 1), Branch::Fixed(0))],
    },
    Row {
        advisory: LuaAdvisory {
            id: "GHSA-fq2f-crmw-q97r",
            summary: "the script debugger can use a freed Lua interpreter, without authentication",
        },
        family: ServerFamily::Valkey,
        affected_below: None,
        branches: &[((9, 1), Branch::Fixed(2))],
    },
];

impl Row {
    fn exposes(&self, version: ServerVersion) -> bool {
        if self.family != version.family {
            return false;
        }
        let (major, minor, patch) = version.release;
        let branch = self
            .branches
            .iter()
            .find(|(branch, _)| *branch == (major, minor))
            .map(|(_, fix)| *fix);
        match branch {
            Some(Branch::Unknown) => false,
            Some(Branch::Fixed(fixed)) => patch < fixed,
            Some(Branch::UnfixedThrough(last)) => patch <= last,
            None => self
                .affected_below
                .is_some_and(|below| version.release < below),
        }
    }
}

/// The known Lua-engine vulnerabilities `version` is exposed to, by the
/// release notes and advisories the guide cites. Empty when none is known
/// (which is no proof of safety for a release the notes do not cover).
pub fn lua_advisories(version: ServerVersion) -> Vec<LuaAdvisory> {
    TABLE
        .iter()
        .filter(|row| row.exposes(version))
        .map(|row| row.advisory)
        .collect()
}

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

    fn ids(family: ServerFamily, release: (u32, u32, u32)) -> Vec<&'static str> {
        lua_advisories(ServerVersion { family, release })
            .into_iter()
            .map(|advisory| advisory.id)
            .collect()
    }

    const QUARTET: [&str; 4] = [
        "CVE-2025-49844",
        "CVE-2025-46817",
        "CVE-2025-46818",
        "CVE-2025-46819",
    ];

    #[test]
    fn redis_releases_by_branch() {
        use ServerFamily::Redis;
        let with = |extra: &[&'static str]| {
            let mut all = QUARTET.to_vec();
            all.extend_from_slice(extra);
            all
        };
        // Branches without a backport: every release before the fix.
        assert_eq!(ids(Redis, (6, 0, 9)), with(&["CVE-2026-23631"]));
        assert_eq!(ids(Redis, (7, 0, 15)), with(&["CVE-2026-23631"]));
        // The quartet's backports; 6.2 and 7.2 say nothing of 2026-23631.
        assert_eq!(ids(Redis, (6, 2, 5)), QUARTET);
        assert!(ids(Redis, (6, 2, 20)).is_empty());
        assert_eq!(ids(Redis, (7, 2, 10)), QUARTET);
        assert!(ids(Redis, (7, 2, 11)).is_empty());
        assert_eq!(ids(Redis, (7, 4, 5)), with(&["CVE-2026-23631"]));
        assert_eq!(ids(Redis, (7, 4, 6)), ["CVE-2026-23631"]);
        assert!(ids(Redis, (7, 4, 9)).is_empty());
        // 8.0 has no fix of 2026-23631 up to 8.0.6; a later one is unknown.
        assert_eq!(ids(Redis, (8, 0, 2)), with(&["CVE-2026-23631"]));
        assert_eq!(ids(Redis, (8, 0, 6)), ["CVE-2026-23631"]);
        assert!(ids(Redis, (8, 0, 7)).is_empty());
        assert_eq!(ids(Redis, (8, 2, 1)), with(&["CVE-2026-23631"]));
        assert_eq!(ids(Redis, (8, 2, 5)), ["CVE-2026-23631"]);
        assert_eq!(ids(Redis, (8, 4, 0)), ["CVE-2026-23631"]);
        assert!(ids(Redis, (8, 4, 3)).is_empty());
        assert_eq!(ids(Redis, (8, 6, 2)), ["CVE-2026-23631"]);
        assert!(ids(Redis, (8, 6, 3)).is_empty());
        assert!(ids(Redis, (8, 8, 0)).is_empty());
    }

    #[test]
    fn valkey_releases_by_branch() {
        use ServerFamily::Valkey;
        assert_eq!(ids(Valkey, (7, 2, 10)), QUARTET);
        assert!(ids(Valkey, (7, 2, 11)).is_empty());
        assert_eq!(ids(Valkey, (8, 0, 5)), QUARTET);
        assert_eq!(ids(Valkey, (8, 1, 3)), QUARTET);
        assert!(ids(Valkey, (8, 1, 8)).is_empty());
        assert!(ids(Valkey, (9, 0, 0)).is_empty());
        assert_eq!(ids(Valkey, (9, 1, 1)), ["GHSA-fq2f-crmw-q97r"]);
        assert!(ids(Valkey, (9, 1, 2)).is_empty());
    }

    #[test]
    fn the_release_comes_from_info() {
        let redis = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n";
        assert_eq!(
            ServerVersion::from_info(redis),
            Some(ServerVersion {
                family: ServerFamily::Redis,
                release: (7, 0, 15)
            })
        );
        // Valkey's redis_version is its compatibility number.
        let valkey =
            "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.8\r\n";
        assert_eq!(
            ServerVersion::from_info(valkey),
            Some(ServerVersion {
                family: ServerFamily::Valkey,
                release: (8, 1, 8)
            })
        );
        assert_eq!(ServerVersion::from_info("redis_version:unstable\r\n"), None);
        assert_eq!(ServerVersion::from_info(""), None);
    }

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
