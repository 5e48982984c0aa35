//! The servers a script is checked for: releases, modules and targets.
//!
//! The model knows the releases in [`RELEASES`] (generated, with where each
//! one's data was read) and the command modules of [`Module`]. A [`Target`]
//! names the servers a crate's scripts must run on:
//!
//! * `any` (the default): every release from Redis 7.0 and Valkey 7.2 on,
//!   with every module. A call is accepted when some release accepts it,
//!   so the default never rejects a script that runs on one of them. The
//!   releases before Redis 7.0 (`redis-6.0`, `redis-6.2`) are checked only
//!   when named: they lack script flags, `EVAL_RO` and Functions, and their
//!   data is partly completed from 7.0's (see [`Release::predates_script_flags`]),
//!   so counting them in the default would only make it looser.
//! * `redis-7.2`, `valkey-9.1`: one release. Redis 8.0 and later bundle the
//!   four modules; other releases have none unless named:
//!   `redis-7.2+json+search`.
//! * `redis-7.2,valkey-9.1`: a script must run on each.
//!
//! A named target is strict: a call is rejected when any named server
//! rejects it.

use std::fmt;

mod table;

pub use table::{MODULE_SOURCES, RELEASES};

/// A server family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Server {
    Redis,
    Valkey,
}

impl Server {
    /// `Redis` or `Valkey`, as the projects spell themselves.
    pub fn title(self) -> &'static str {
        match self {
            Self::Redis => "Redis",
            Self::Valkey => "Valkey",
        }
    }
}

/// One minor release line of a server, pinned to one tag or binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Target name: `redis-7.2`.
    pub name: &'static str,
    pub server: Server,
    pub major: u8,
    pub minor: u8,
    /// The release tag or live server version the data was read from.
    pub tag: &'static str,
    /// How the data was read.
    pub source: &'static str,
}

impl Release {
    /// `Redis 7.2`.
    pub fn title(&self) -> String {
        format!("{} {}.{}", self.server.title(), self.major, self.minor)
    }

    /// A release before Redis 7.0: no `#!lua` flags, no `EVAL_RO`, no
    /// Functions, and no key specs nor `COMMAND DOCS` (its model completes
    /// them from Redis 7.0's). Only a named target checks for it.
    pub fn predates_script_flags(&self) -> bool {
        self.server == Server::Redis && self.major < 7
    }

    /// Redis 8.0 and later ship the JSON, search, time series and
    /// probabilistic modules.
    pub fn bundled_modules(&self) -> ModuleSet {
        if self.server == Server::Redis && self.major >= 8 {
            ModuleSet::ALL
        } else {
            ModuleSet::NONE
        }
    }
}

/// A set of releases: bit `i` is `RELEASES[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReleaseSet(u32);

impl ReleaseSet {
    /// Every release of the model.
    pub const ALL: Self = Self((1 << table::RELEASES.len()) - 1);
    /// No release.
    pub const NONE: Self = Self(0);

    /// The set with these bits (generated tables only).
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits & Self::ALL.0)
    }

    /// The set holding only `RELEASES[index]`.
    pub const fn only(index: usize) -> Self {
        Self::from_bits(1 << index)
    }

    /// Holds `RELEASES[index]`.
    pub const fn contains(self, index: usize) -> bool {
        index < u32::BITS as usize && self.0 & (1 << index) != 0
    }

    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Holds every release of `other`.
    pub const fn contains_all(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The releases in the set, in [`RELEASES`] order.
    pub fn releases(self) -> impl Iterator<Item = (usize, &'static Release)> {
        RELEASES
            .iter()
            .enumerate()
            .filter(move |(index, _)| self.contains(*index))
    }

    /// Where a name exists, for messages: `since Redis 7.4`, `since Redis
    /// 7.2 and Valkey 7.2`, `on Redis 7.0 and since Valkey 8.1`. A server's
    /// releases from one up to its newest read `since X`; otherwise each is
    /// listed.
    pub fn describe(self) -> String {
        let mut since = Vec::new();
        let mut listed = Vec::new();
        for server in [Server::Redis, Server::Valkey] {
            let all: Vec<(usize, &Release)> = RELEASES
                .iter()
                .enumerate()
                .filter(|(_, release)| release.server == server)
                .collect();
            let Some(first) = all.iter().position(|(index, _)| self.contains(*index)) else {
                continue;
            };
            let here: Vec<&Release> = all
                .iter()
                .filter(|(index, _)| self.contains(*index))
                .map(|(_, release)| *release)
                .collect();
            if here.len() == all.len() - first {
                since.push(all.get(first).map(|(_, r)| r.title()).unwrap_or_default());
            } else {
                let titles: Vec<String> = here.iter().map(|release| release.title()).collect();
                listed.push(format!("on {}", join_and(&titles)));
            }
        }
        let mut parts = listed;
        if !since.is_empty() {
            parts.push(format!("since {}", join_and(&since)));
        }
        if parts.is_empty() {
            return "on no release".to_string();
        }
        join_and(&parts)
    }

    /// Servers absent from the set entirely: `Valkey (up to 9.1)`.
    pub fn missing_servers(self) -> Vec<String> {
        let mut out = Vec::new();
        for server in [Server::Redis, Server::Valkey] {
            let mut releases = RELEASES
                .iter()
                .enumerate()
                .filter(|(_, release)| release.server == server);
            if releases.clone().any(|(index, _)| self.contains(index)) {
                continue;
            }
            if let Some((_, newest)) = releases.next_back() {
                out.push(format!(
                    "{} (up to {}.{})",
                    server.title(),
                    newest.major,
                    newest.minor
                ));
            }
        }
        out
    }
}

fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

macro_rules! modules {
    ($( $(#[$meta:meta])* $variant:ident = $bit:literal, $name:literal, $title:literal; )*) => {
        /// A command module Redis 8 bundles (and Redis Stack loads).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Module {
            $( $(#[$meta])* $variant = $bit, )*
        }

        impl Module {
            /// Every module, in bit order.
            pub const ALL: &'static [Module] = &[$(Self::$variant),*];

            /// The name in targets (`json`).
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $name,)* }
            }

            /// What users call it (`JSON`).
            pub fn title(self) -> &'static str {
                match self { $(Self::$variant => $title,)* }
            }

            /// The module named `name` in a target.
            pub fn parse(name: &str) -> Option<Self> {
                match name { $($name => Some(Self::$variant),)* _ => None }
            }
        }
    };
}

modules! {
    /// RedisJSON: `JSON.*`.
    Json = 0, "json", "JSON";
    /// RediSearch: `FT.*`.
    Search = 1, "search", "search";
    /// RedisTimeSeries: `TS.*`.
    Timeseries = 2, "timeseries", "time series";
    /// RedisBloom: `BF.*`, `CF.*`, `CMS.*`, `TOPK.*`, `TDIGEST.*`.
    Bloom = 3, "bloom", "probabilistic";
}

/// A set of modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ModuleSet(u8);

impl ModuleSet {
    pub const NONE: Self = Self(0);
    pub const ALL: Self = Self(0b1111);

    pub const fn with(self, module: Module) -> Self {
        Self(self.0 | 1 << module as u8)
    }

    pub const fn contains(self, module: Module) -> bool {
        self.0 & (1 << module as u8) != 0
    }
}

/// One server a script must run on: a release and the modules it loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Platform {
    /// Index in [`RELEASES`].
    pub release: usize,
    pub modules: ModuleSet,
}

impl Platform {
    /// The release (every index a [`Platform`] holds is valid).
    pub fn release(&self) -> &'static Release {
        RELEASES.get(self.release).unwrap_or(&FALLBACK_RELEASE)
    }

    /// Has `module` loaded: named in the target, or bundled.
    pub fn has_module(&self, module: Module) -> bool {
        self.modules.contains(module)
    }
}

// Only reachable through a corrupt index, which `Target::parse` never makes.
static FALLBACK_RELEASE: Release = Release {
    name: "unknown",
    server: Server::Redis,
    major: 0,
    minor: 0,
    tag: "",
    source: "",
};

/// The environment variable with a crate's target (`redis-7.2`, `any`, …),
/// usually set in `.cargo/config.toml` under `[env]`; the command-line
/// checker reads it too.
pub const TARGET_VARIABLE: &str = "REDIS_SCRIPT_TARGET";

/// The servers the scripts of a crate (or one script) must run on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    platforms: Vec<Platform>,
    strict: bool,
    text: String,
    scope: TargetScope,
}

/// Where a target was set, for messages ("this crate targets redis-7.2").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TargetScope {
    /// Crate-wide (`REDIS_SCRIPT_TARGET`), or the default.
    #[default]
    Crate,
    /// For one script (the attribute's `target = "..."`).
    Script,
}

impl Default for Target {
    fn default() -> Self {
        Self::any()
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a target string is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetError {
    /// The first line of the message.
    pub message: String,
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message, valid_targets())
    }
}

impl std::error::Error for TargetError {}

/// The list of valid target spellings, for error messages.
pub fn valid_targets() -> String {
    let releases: Vec<&str> = RELEASES.iter().map(|release| release.name).collect();
    let modules: Vec<&str> = Module::ALL.iter().map(|module| module.name()).collect();
    format!(
        "valid targets: `any`, a release ({}), a release with modules (`redis-7.2+json+search`; modules: {}), or a comma-separated list of these",
        releases.join(", "),
        modules.join(", ")
    )
}

impl Target {
    /// Every release from Redis 7.0 and Valkey 7.2 on, with every module,
    /// lenient: see the module docs.
    pub fn any() -> Self {
        Self {
            platforms: RELEASES
                .iter()
                .enumerate()
                .filter(|(_, release)| !release.predates_script_flags())
                .map(|(release, _)| Platform {
                    release,
                    modules: ModuleSet::ALL,
                })
                .collect(),
            strict: false,
            text: "any".to_string(),
            scope: TargetScope::Crate,
        }
    }

    /// Parses `any`, `redis-7.2`, `redis-7.2+json`, or a comma-separated
    /// list of releases (whitespace around items is ignored).
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("any") {
            return Ok(Self::any());
        }
        if trimmed.is_empty() {
            return Err(TargetError {
                message: "the target is empty".to_string(),
            });
        }
        let mut platforms: Vec<Platform> = Vec::new();
        let mut names = Vec::new();
        for item in trimmed.split(',') {
            let item = item.trim();
            let mut parts = item.split('+');
            let release_name = parts.next().unwrap_or_default().to_ascii_lowercase();
            let Some(release) = RELEASES
                .iter()
                .position(|release| release.name == release_name)
            else {
                let message = if item.is_empty() {
                    format!("empty item in the target list `{trimmed}`")
                } else if item.eq_ignore_ascii_case("any") {
                    "`any` cannot be combined with releases".to_string()
                } else {
                    format!("unknown release `{release_name}` in target `{trimmed}`")
                };
                return Err(TargetError { message });
            };
            let mut modules = RELEASES
                .get(release)
                .map(Release::bundled_modules)
                .unwrap_or_default();
            let mut spelled = release_name.clone();
            for module_name in parts {
                let lower = module_name.trim().to_ascii_lowercase();
                let Some(module) = Module::parse(&lower) else {
                    return Err(TargetError {
                        message: format!("unknown module `{lower}` in target `{trimmed}`"),
                    });
                };
                modules = modules.with(module);
                spelled.push('+');
                spelled.push_str(&lower);
            }
            let platform = Platform { release, modules };
            if !platforms.contains(&platform) {
                platforms.push(platform);
                names.push(spelled);
            }
        }
        Ok(Self {
            platforms,
            strict: true,
            text: names.join(","),
            scope: TargetScope::Crate,
        })
    }

    /// The same target, set for `scope`.
    pub fn with_scope(mut self, scope: TargetScope) -> Self {
        self.scope = scope;
        self
    }

    /// `this crate targets redis-7.2`.
    pub fn phrase(&self) -> String {
        let who = match self.scope {
            TargetScope::Crate => "this crate",
            TargetScope::Script => "this script",
        };
        format!("{who} targets {}", self.text)
    }

    /// The servers of the target.
    pub fn platforms(&self) -> &[Platform] {
        &self.platforms
    }

    /// A named target: reject what any of its servers rejects. `any` is
    /// lenient: reject only what every server rejects.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The releases of the target.
    pub fn releases(&self) -> ReleaseSet {
        self.platforms
            .iter()
            .fold(ReleaseSet::NONE, |set, platform| {
                set.union(ReleaseSet::only(platform.release))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(name: &str) -> usize {
        match RELEASES.iter().position(|release| release.name == name) {
            Some(index) => index,
            None => panic!("no release {name}"),
        }
    }

    #[test]
    fn releases_are_the_pinned_ones() {
        let names: Vec<&str> = RELEASES.iter().map(|release| release.name).collect();
        assert_eq!(
            names,
            [
                "redis-6.0",
                "redis-6.2",
                "redis-7.0",
                "redis-7.2",
                "redis-7.4",
                "redis-8.0",
                "redis-8.2",
                "redis-8.4",
                "redis-8.6",
                "redis-8.8",
                "redis-8.10",
                "valkey-7.2",
                "valkey-8.0",
                "valkey-8.1",
                "valkey-9.0",
                "valkey-9.1"
            ]
        );
        for release in RELEASES {
            assert!(!release.tag.is_empty() && !release.source.is_empty());
            assert_eq!(
                release.name,
                format!(
                    "{}-{}.{}",
                    release.server.title().to_ascii_lowercase(),
                    release.major,
                    release.minor
                )
            );
        }
        assert_eq!(RELEASES[release("redis-6.0")].tag, "6.0.9");
        assert_eq!(RELEASES[release("redis-6.2")].tag, "6.2.5");
        assert_eq!(RELEASES[release("redis-7.0")].tag, "7.0.15");
        assert_eq!(RELEASES[release("redis-8.0")].tag, "8.0.2");
        assert_eq!(RELEASES[release("valkey-8.1")].tag, "8.1.8");
        assert_eq!(RELEASES[release("valkey-9.1")].tag, "9.1.2");
        assert_eq!(RELEASES[release("redis-8.6")].tag, "8.6.3");
        // Valkey 9.0 and Redis 8.4 are derived from a newer binary of their
        // server (no 9.0 nor 8.4 one runs here).
        assert_eq!(RELEASES[release("valkey-9.0")].tag, "9.1.2");
        assert_eq!(RELEASES[release("redis-8.4")].tag, "8.6.3");
    }

    #[test]
    fn parses_targets() {
        let any = Target::parse("any").unwrap_or_default();
        assert!(!any.is_strict());
        // Every release but the two before Redis 7.0, which only a named
        // target checks for.
        assert_eq!(any.platforms().len(), RELEASES.len() - 2);
        assert!(
            any.platforms()
                .iter()
                .all(|platform| !platform.release().predates_script_flags())
        );
        let six = Target::parse("redis-6.2").unwrap_or_default();
        assert!(six.is_strict() && six.platforms()[0].release().predates_script_flags());
        assert_eq!(Target::default(), any);

        let one = Target::parse(" redis-7.2 ").unwrap_or_default();
        assert!(one.is_strict());
        assert_eq!(one.to_string(), "redis-7.2");
        assert_eq!(one.platforms()[0].modules, ModuleSet::NONE);

        let eight = Target::parse("redis-8.0").unwrap_or_default();
        assert_eq!(eight.platforms()[0].modules, ModuleSet::ALL);

        let with = Target::parse("Redis-7.2+JSON+search").unwrap_or_default();
        assert_eq!(with.to_string(), "redis-7.2+json+search");
        let modules = with.platforms()[0].modules;
        assert!(modules.contains(Module::Json) && modules.contains(Module::Search));
        assert!(!modules.contains(Module::Bloom));

        let list = Target::parse("redis-7.2, valkey-8.1,redis-7.2").unwrap_or_default();
        assert_eq!(list.to_string(), "redis-7.2,valkey-8.1");
        assert_eq!(list.platforms().len(), 2);
        assert_eq!(
            list.releases(),
            ReleaseSet::only(release("redis-7.2")).union(ReleaseSet::only(release("valkey-8.1")))
        );
    }

    #[test]
    fn rejects_bad_targets() {
        for (text, message) in [
            ("", "the target is empty"),
            (
                "redis-5.0",
                "unknown release `redis-5.0` in target `redis-5.0`",
            ),
            (
                "redis-7.2+graph",
                "unknown module `graph` in target `redis-7.2+graph`",
            ),
            ("redis-7.2,", "empty item in the target list `redis-7.2,`"),
            ("any,redis-7.2", "`any` cannot be combined with releases"),
        ] {
            match Target::parse(text) {
                Ok(target) => panic!("{text:?} parsed as {target}"),
                Err(error) => {
                    assert_eq!(error.message, message);
                    assert!(error.to_string().contains("valkey-9.1"), "{error}");
                }
            }
        }
    }

    #[test]
    fn describes_availability() {
        let set = |names: &[&str]| {
            names.iter().fold(ReleaseSet::NONE, |set, name| {
                set.union(ReleaseSet::only(release(name)))
            })
        };
        assert_eq!(
            set(&[
                "redis-7.4",
                "redis-8.0",
                "redis-8.2",
                "redis-8.4",
                "redis-8.6",
                "redis-8.8",
                "redis-8.10"
            ])
            .describe(),
            "since Redis 7.4"
        );
        assert_eq!(
            set(&[
                "redis-7.4",
                "redis-8.0",
                "redis-8.2",
                "redis-8.4",
                "redis-8.6",
                "redis-8.8",
                "redis-8.10"
            ])
            .missing_servers(),
            ["Valkey (up to 9.1)"]
        );
        assert_eq!(ReleaseSet::ALL.describe(), "since Redis 6.0 and Valkey 7.2");
        assert_eq!(
            set(&["redis-7.0", "valkey-8.1", "valkey-9.0", "valkey-9.1"]).describe(),
            "on Redis 7.0 and since Valkey 8.1"
        );
        assert_eq!(
            set(&["redis-7.0", "valkey-8.1"]).describe(),
            "on Redis 7.0 and on Valkey 8.1"
        );
        assert_eq!(set(&["redis-8.2"]).describe(), "on Redis 8.2");
        assert_eq!(
            set(&["redis-8.2", "redis-8.4", "redis-8.6"]).describe(),
            "on Redis 8.2, Redis 8.4 and Redis 8.6"
        );
        assert_eq!(
            set(&["redis-8.8", "redis-8.10"]).describe(),
            "since Redis 8.8"
        );
        assert_eq!(
            set(&[
                "redis-8.0",
                "redis-8.2",
                "redis-8.4",
                "redis-8.6",
                "redis-8.8",
                "redis-8.10",
                "valkey-9.0",
                "valkey-9.1"
            ])
            .describe(),
            "since Redis 8.0 and Valkey 9.0"
        );
        assert_eq!(set(&["valkey-9.1"]).describe(), "since Valkey 9.1");
        assert_eq!(ReleaseSet::NONE.describe(), "on no release");
    }
}
