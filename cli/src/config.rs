//! `redis-script.toml`: what a repository's scripts need besides their
//! text, kept next to them so that every run of the checker (a developer's,
//! CI's, a pre-commit hook's) checks them the same way. The checker finds
//! it in the checked path's directory or the nearest parent.
//!
//! ```toml
//! target = "redis-7.2"
//! includes = "bullmq"            # resolve `--- @include "file"`
//! exclude = ["vendor/**"]        # never checked
//!
//! [[scripts]]
//! files = "*-*.lua"              # `addJob-6.lua`: 6 keys
//! keys = "file-name"
//! dynamic_keys = true
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redis_script_analysis::{Code, DeclaredCommands, Target, TargetScope};
use serde::Deserialize;

use crate::glob::Glob;
use crate::options::Count;

/// The file name the checker looks for.
pub const FILE_NAME: &str = "redis-script.toml";

/// How includes are written in the scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum IncludeSyntax {
    /// `--- @include "path"` (two or three dashes, either quote), resolved
    /// against the including file's directory, `.lua` added when the name
    /// has no extension, each file once per script: the loader of bullmq
    /// and bull.
    #[serde(rename = "bullmq")]
    Bullmq,
}

/// Where a script's key count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysFrom {
    Count(Count),
    /// The number after the last `-` of the file name (`addJob-6.lua`).
    FileName,
}

/// One `[[scripts]]` section: settings for the files its patterns match.
/// Every section matching a file applies, in order: a later one's values
/// win, except `allow` and `prelude`, whose lists add up.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub files: Vec<Glob>,
    pub keys: Option<KeysFrom>,
    pub args: Option<Count>,
    pub allow_unused: Option<bool>,
    pub dynamic_keys: Option<bool>,
    pub read_only: Option<bool>,
    pub key_prefix_args: Option<BTreeSet<usize>>,
    pub allow: Vec<String>,
    /// Files the loader sends before the script, in order, relative to the
    /// configuration's directory; appended to those of earlier sections.
    pub prelude: Vec<PathBuf>,
}

/// A read configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file, for messages.
    pub file: PathBuf,
    /// Its directory: what its paths and patterns are relative to.
    pub directory: PathBuf,
    pub target: Option<Target>,
    pub declared_commands: Option<DeclaredCommands>,
    pub allow: Vec<String>,
    pub deny_warnings: bool,
    pub includes: Option<IncludeSyntax>,
    /// Directories are searched for host-language sources too.
    pub embedded: bool,
    pub exclude: Vec<Glob>,
    pub sections: Vec<Section>,
}

/// What applies to one script: the merge of the sections matching it.
#[derive(Debug, Clone, Default)]
pub struct ScriptSettings {
    pub keys: Option<Count>,
    /// `keys = "file-name"` matched, but the name holds no count.
    pub keys_from_unnamed_file: bool,
    pub args: Option<Count>,
    pub allow_unused: bool,
    pub dynamic_keys: bool,
    pub read_only: bool,
    pub key_prefix_args: BTreeSet<usize>,
    pub allow: Vec<String>,
    pub prelude: Vec<PathBuf>,
}

impl Config {
    /// The configuration that applies to `path`: `redis-script.toml` in
    /// its directory (itself, for a directory) or the nearest parent.
    pub fn find(path: &Path) -> Result<Option<Config>, String> {
        let absolute = std::path::absolute(path)
            .map_err(|error| format!("cannot read `{}`: {error}", path.display()))?;
        let start = if absolute.is_dir() {
            absolute.as_path()
        } else {
            absolute.parent().unwrap_or(&absolute)
        };
        for directory in start.ancestors() {
            let file = directory.join(FILE_NAME);
            if file.is_file() {
                return Config::read(&file).map(Some);
            }
        }
        Ok(None)
    }

    /// Reads `file`. The error is the message for the user, naming the file
    /// and, for a TOML or schema mistake, the line.
    pub fn read(file: &Path) -> Result<Config, String> {
        let shown = file.display();
        let text = std::fs::read_to_string(file)
            .map_err(|error| format!("cannot read `{shown}`: {error}"))?;
        let raw: RawConfig = toml::from_str(&text).map_err(|error| {
            format!(
                "`{shown}`: {}",
                error.to_string().trim_end().replace('\n', "\n  ")
            )
        })?;
        let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let directory = absolute
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let context = |what: &str, message: String| format!("`{shown}`, {what}: {message}");
        let target = raw
            .target
            .map(|text| {
                Target::parse(&text)
                    .map(|target| target.with_scope(TargetScope::Script))
                    .map_err(|error| context("`target`", error.to_string()))
            })
            .transpose()?;
        let declared_commands = raw
            .commands
            .map(|name| {
                let path = directory.join(&name);
                DeclaredCommands::read_file(&path, &name, "the configuration's directory")
                    .map_err(|messages| context("`commands`", messages.join("\n\n")))
            })
            .transpose()?;
        check_findings(&raw.allow).map_err(|message| context("`allow`", message))?;
        let exclude = globs(&raw.exclude).map_err(|message| context("`exclude`", message))?;
        let mut sections = Vec::new();
        for (index, section) in raw.scripts.into_iter().enumerate() {
            let what = format!("`[[scripts]]` number {}", index + 1);
            sections.push(
                section
                    .resolve()
                    .map_err(|message| context(&what, message))?,
            );
        }
        Ok(Config {
            file: file.to_path_buf(),
            directory,
            target,
            declared_commands,
            allow: raw.allow,
            deny_warnings: raw.deny_warnings,
            includes: raw.includes,
            embedded: raw.embedded,
            exclude,
            sections,
        })
    }

    /// `path` relative to the configuration's directory, `/`-separated;
    /// `None` for a file outside it.
    pub fn relative(&self, path: &Path) -> Option<String> {
        let absolute = std::path::absolute(path).ok()?;
        let relative = absolute.strip_prefix(&self.directory).ok()?;
        Some(
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        )
    }

    /// Whether `exclude` names `path`.
    pub fn excludes(&self, path: &Path) -> bool {
        self.relative(path)
            .is_some_and(|relative| self.exclude.iter().any(|glob| glob.matches(&relative)))
    }

    /// The settings of every section matching `path`, merged in order.
    pub fn settings_for(&self, path: &Path) -> ScriptSettings {
        let mut settings = ScriptSettings {
            allow: self.allow.clone(),
            ..ScriptSettings::default()
        };
        let Some(relative) = self.relative(path) else {
            return settings;
        };
        let sections = self
            .sections
            .iter()
            .filter(|section| section.files.iter().any(|glob| glob.matches(&relative)));
        for section in sections {
            match section.keys {
                Some(KeysFrom::Count(count)) => {
                    settings.keys = Some(count);
                    settings.keys_from_unnamed_file = false;
                }
                Some(KeysFrom::FileName) => {
                    settings.keys = keys_in_file_name(path);
                    settings.keys_from_unnamed_file = settings.keys.is_none();
                }
                None => {}
            }
            settings.args = section.args.or(settings.args);
            settings.allow_unused = section.allow_unused.unwrap_or(settings.allow_unused);
            settings.dynamic_keys = section.dynamic_keys.unwrap_or(settings.dynamic_keys);
            settings.read_only = section.read_only.unwrap_or(settings.read_only);
            if let Some(prefixes) = &section.key_prefix_args {
                settings.key_prefix_args = prefixes.clone();
            }
            settings.allow.extend(section.allow.iter().cloned());
            settings
                .prelude
                .extend(section.prelude.iter().map(|file| self.directory.join(file)));
        }
        settings
    }
}

/// `addJob-6.lua`: 6. The number after the last `-` of the name without
/// its extension, as bullmq's and bull's loaders read it.
pub fn keys_in_file_name(path: &Path) -> Option<Count> {
    let stem = path.file_stem()?.to_str()?;
    let (_, digits) = stem.rsplit_once('-')?;
    let fixed = digits.parse::<usize>().ok()?;
    Some(Count {
        fixed,
        variadic: false,
    })
}

fn globs(patterns: &Patterns) -> Result<Vec<Glob>, String> {
    patterns
        .as_slice()
        .iter()
        .map(|text| Glob::parse(text))
        .collect()
}

fn check_findings(names: &[String]) -> Result<(), String> {
    for name in names {
        if Code::finding(name).is_none() {
            return Err(format!(
                "`{name}` names no finding; {}",
                Code::finding_help(name)
            ));
        }
    }
    Ok(())
}

/// The file as written; `resolve` checks what serde cannot.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    target: Option<String>,
    commands: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny_warnings: bool,
    includes: Option<IncludeSyntax>,
    #[serde(default)]
    embedded: bool,
    #[serde(default)]
    exclude: Patterns,
    #[serde(default)]
    scripts: Vec<RawSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSection {
    files: Patterns,
    keys: Option<RawCount>,
    args: Option<RawCount>,
    allow_unused: Option<bool>,
    dynamic_keys: Option<bool>,
    read_only: Option<bool>,
    key_prefix_args: Option<BTreeSet<usize>>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    prelude: Vec<PathBuf>,
}

/// One pattern or a list.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
enum Patterns {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Patterns {
    fn as_slice(&self) -> &[String] {
        match self {
            Patterns::None => &[],
            Patterns::One(one) => std::slice::from_ref(one),
            Patterns::Many(many) => many,
        }
    }
}

/// `2`, `"2+"` or `"file-name"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawCount {
    Number(usize),
    Text(String),
}

impl RawSection {
    fn resolve(self) -> Result<Section, String> {
        let files = globs(&self.files)?;
        if files.is_empty() {
            return Err("`files` names no pattern: give one, as in `files = \"*.lua\"`".to_owned());
        }
        let keys = match self.keys {
            Some(RawCount::Text(text)) if text == "file-name" => Some(KeysFrom::FileName),
            Some(raw) => Some(KeysFrom::Count(count("keys", raw)?)),
            None => None,
        };
        let args = self.args.map(|raw| count("args", raw)).transpose()?;
        if self
            .key_prefix_args
            .as_ref()
            .is_some_and(|set| set.contains(&0))
        {
            return Err("`key_prefix_args` holds ARGV positions, from 1".to_owned());
        }
        check_findings(&self.allow)?;
        Ok(Section {
            files,
            keys,
            args,
            allow_unused: self.allow_unused,
            dynamic_keys: self.dynamic_keys,
            read_only: self.read_only,
            key_prefix_args: self.key_prefix_args,
            allow: self.allow,
            prelude: self.prelude,
        })
    }
}

fn count(name: &str, raw: RawCount) -> Result<Count, String> {
    match raw {
        RawCount::Number(fixed) => Ok(Count {
            fixed,
            variadic: false,
        }),
        RawCount::Text(text) => crate::options::count(name, &text).map_err(|_| {
            let file_name = if name == "keys" { ", or \"file-name\"" } else { "" };
            format!("`{name} = \"{text}\"`: expected a number such as 2, \"2+\" for two followed by a variadic list{file_name}")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(name: &str, text: &str) -> (PathBuf, Result<Config, String>) {
        let directory =
            std::env::temp_dir().join(format!("redis-script-toml-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("a directory");
        let file = directory.join(FILE_NAME);
        std::fs::write(&file, text).expect("write");
        let config = Config::read(&file);
        (directory, config)
    }

    #[test]
    fn sections_merge_in_order_and_file_names_give_key_counts() {
        let (directory, config) = written(
            "merge",
            r#"
target = "redis-7.2"
allow = ["nil_value"]
exclude = "includes/**"

[[scripts]]
files = "*.lua"
args = "0+"
dynamic_keys = true

[[scripts]]
files = ["*-*.lua"]
keys = "file-name"
allow = ["reply_hole"]
"#,
        );
        let config = config.expect("a valid configuration");
        let settings = config.settings_for(&directory.join("addJob-6.lua"));
        assert_eq!(
            settings.keys,
            Some(Count {
                fixed: 6,
                variadic: false
            })
        );
        assert_eq!(
            settings.args,
            Some(Count {
                fixed: 0,
                variadic: true
            })
        );
        assert!(settings.dynamic_keys && !settings.allow_unused);
        assert_eq!(settings.allow, ["nil_value", "reply_hole"]);
        let plain = config.settings_for(&directory.join("refs.lua"));
        assert_eq!(plain.keys, None);
        assert!(config.excludes(&directory.join("includes/x.lua")));
        assert!(!config.excludes(&directory.join("x.lua")));
        let unnamed = config.settings_for(&directory.join("odd-name.lua"));
        assert!(unnamed.keys.is_none() && unnamed.keys_from_unnamed_file);
        let _ = std::fs::remove_dir_all(directory);
    }

    #[test]
    fn mistakes_are_named_with_their_place() {
        for (name, text, expected) in [
            (
                "unknown",
                "tagret = \"redis-7.2\"\n",
                "unknown field `tagret`",
            ),
            ("target", "target = \"redis-1.0\"\n", "`target`"),
            (
                "keys",
                "[[scripts]]\nfiles = \"*.lua\"\nkeys = \"two\"\n",
                "`keys = \"two\"`: expected a number such as 2, \"2+\" for two followed by a variadic list, or \"file-name\"",
            ),
            (
                "allow",
                "allow = [\"nil_valu\"]\n",
                "`nil_valu` names no finding",
            ),
            ("files", "[[scripts]]\nkeys = 1\n", "missing field `files`"),
            (
                "includes",
                "includes = \"lua-require\"\n",
                "unknown variant `lua-require`",
            ),
            (
                "glob",
                "exclude = [\"src/**.lua\"]\n",
                "`**` must be a whole path component",
            ),
        ] {
            let (directory, config) = written(name, text);
            match config {
                Err(message) => assert!(
                    message.contains(expected) && message.contains(FILE_NAME),
                    "{name}: {message}"
                ),
                Ok(config) => panic!("{name}: {config:?}"),
            }
            let _ = std::fs::remove_dir_all(directory);
        }
    }

    #[test]
    fn names_count_after_their_last_dash() {
        let keys = |name: &str| keys_in_file_name(Path::new(name)).map(|count| count.fixed);
        assert_eq!(keys("moveToFinished-14.lua"), Some(14));
        assert_eq!(keys("dir/obliterate-2.lua"), Some(2));
        assert_eq!(keys("refs.lua"), None);
        assert_eq!(keys("take-lock.lua"), None);
    }
}
