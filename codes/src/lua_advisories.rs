//! Known vulnerabilities of the servers' Lua engine, per release: the
//! table and its lookups, which the runtime reads to warn about the server
//! it deploys to and the command-line checker to say what a target's
//! releases are exposed to.
//!
//! The table is the guide's table (the `redis-script` crate's
//! `guide::safety`, "Known Lua-engine vulnerabilities"), which cites the
//! release notes or advisory behind each fact. A branch the table says
//! nothing about is never reported: a warning needs a fact.
//!
//! ```
//! use redis_script_codes::lua_advisories::{
//!     BranchExposure, ServerFamily, ServerVersion, branch_advisories, lua_advisories,
//! };
//!
//! let info = "# Server\r\nredis_version:7.2.10\r\n";
//! let Some(version) = ServerVersion::from_info(info) else { unreachable!() };
//! assert!(lua_advisories(version).iter().any(|advisory| advisory.id == "CVE-2025-49844"));
//! let branch = branch_advisories(ServerFamily::Redis, (7, 2));
//! assert!(branch.iter().all(|(_, exposure)| *exposure == BranchExposure::Before(11)));
//! ```

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

/// Which releases of one branch (`major.minor`) an advisory concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BranchExposure {
    /// Every release of the branch: the advisory's range covers it and no
    /// release of it fixes the vulnerability.
    Every,
    /// The releases before this patch release of the branch, which fixes it.
    Before(u32),
    /// The releases up to and including this patch release, the last one
    /// whose notes the table read: none of them fixes it, and whether a
    /// later one does is not known.
    Through(u32),
}

impl Row {
    /// The releases of `branch` the row concerns; `None` when none, or
    /// when the table makes no claim for the branch.
    fn on_branch(&self, family: ServerFamily, branch: (u32, u32)) -> Option<BranchExposure> {
        if self.family != family {
            return None;
        }
        let listed = self
            .branches
            .iter()
            .find(|(listed, _)| *listed == branch)
            .map(|(_, fix)| *fix);
        match listed {
            Some(Branch::Unknown) | Some(Branch::Fixed(0)) => None,
            Some(Branch::Fixed(fixed)) => Some(BranchExposure::Before(fixed)),
            Some(Branch::UnfixedThrough(last)) => Some(BranchExposure::Through(last)),
            None => {
                let (major, minor, patch) = self.affected_below?;
                if branch < (major, minor) {
                    Some(BranchExposure::Every)
                } else if branch == (major, minor) && patch > 0 {
                    Some(BranchExposure::Before(patch))
                } else {
                    None
                }
            }
        }
    }
}

/// The known Lua-engine vulnerabilities some release of the branch
/// `major.minor` of `family` is exposed to, with which of its releases
/// are, in the table's order. Empty when the table knows of none (which is
/// no proof of safety for a branch the notes do not cover).
pub fn branch_advisories(
    family: ServerFamily,
    branch: (u32, u32),
) -> Vec<(LuaAdvisory, BranchExposure)> {
    TABLE
        .iter()
        .filter_map(|row| Some((row.advisory, row.on_branch(family, branch)?)))
        .collect()
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

    /// Every release of a branch is exposed exactly where the branch's
    /// exposure says, for every branch of both families.
    #[test]
    fn branch_exposures_agree_with_each_release() {
        for family in [ServerFamily::Redis, ServerFamily::Valkey] {
            for major in 5..=10 {
                for minor in 0..=10 {
                    let branch = branch_advisories(family, (major, minor));
                    for patch in 0..=30 {
                        let exposed = lua_advisories(ServerVersion {
                            family,
                            release: (major, minor, patch),
                        });
                        for row in TABLE.iter().filter(|row| row.family == family) {
                            let by_branch = branch.iter().any(|(advisory, exposure)| {
                                *advisory == row.advisory
                                    && match *exposure {
                                        BranchExposure::Every => true,
                                        BranchExposure::Before(fixed) => patch < fixed,
                                        BranchExposure::Through(last) => patch <= last,
                                    }
                            });
                            assert_eq!(
                                by_branch,
                                exposed.contains(&row.advisory),
                                "{family:?} {major}.{minor}.{patch} {}",
                                row.advisory.id
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn branches_as_the_guide_states_them() {
        use BranchExposure::{Before, Every, Through};
        let of = |family, branch| -> Vec<(&'static str, BranchExposure)> {
            branch_advisories(family, branch)
                .into_iter()
                .map(|(advisory, exposure)| (advisory.id, exposure))
                .collect()
        };
        let quartet = |exposure| QUARTET.map(|id| (id, exposure)).to_vec();
        let with = |mut rows: Vec<(&'static str, BranchExposure)>, extra| {
            rows.push(("CVE-2026-23631", extra));
            rows
        };
        assert_eq!(of(ServerFamily::Redis, (6, 0)), with(quartet(Every), Every));
        assert_eq!(of(ServerFamily::Redis, (6, 2)), quartet(Before(20)));
        assert_eq!(of(ServerFamily::Redis, (7, 0)), with(quartet(Every), Every));
        assert_eq!(of(ServerFamily::Redis, (7, 2)), quartet(Before(11)));
        assert_eq!(
            of(ServerFamily::Redis, (8, 0)),
            with(quartet(Before(4)), Through(6))
        );
        assert_eq!(
            of(ServerFamily::Redis, (8, 4)),
            [("CVE-2026-23631", Before(3))]
        );
        assert!(of(ServerFamily::Redis, (8, 8)).is_empty());
        assert_eq!(of(ServerFamily::Valkey, (8, 1)), quartet(Before(4)));
        assert!(of(ServerFamily::Valkey, (9, 0)).is_empty());
        assert_eq!(
            of(ServerFamily::Valkey, (9, 1)),
            [("GHSA-fq2f-crmw-q97r", Before(2))]
        );
    }
}
