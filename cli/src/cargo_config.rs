//! The `[env]` table of Cargo's configuration, read as `cargo build` reads
//! it for the attribute, so that the checker run inside a crate checks for
//! the same target and declared commands: `.cargo/config.toml` (or
//! `.cargo/config`) in the current directory and in each parent, the
//! nearest first, then `$CARGO_HOME/config.toml`.

use std::path::{Path, PathBuf};

/// A value of `[env]`, and the file it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub value: String,
    pub file: PathBuf,
    /// Set with `force = true`: it wins over the process environment.
    pub force: bool,
}

/// The `[env]` value named `name` in the configuration files that apply
/// from `directory`, the nearest first. A value with `relative = true` is
/// resolved against the directory holding that file's `.cargo` directory,
/// as Cargo does. The error is a file that cannot be read as TOML.
pub fn env(name: &str, directory: &Path) -> Result<Option<Setting>, String> {
    for file in config_files(directory) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let table: toml::Table = text
            .parse()
            .map_err(|error| format!("{}: {error}", file.display()))?;
        let Some(entry) = table.get("env").and_then(|env| env.get(name)) else {
            continue;
        };
        let (value, relative, force) = match entry {
            toml::Value::String(value) => (value.clone(), false, false),
            toml::Value::Table(detailed) => {
                let Some(value) = detailed.get("value").and_then(toml::Value::as_str) else {
                    return Err(format!(
                        "{}: `[env] {name}` has no string `value`",
                        file.display()
                    ));
                };
                let flag =
                    |key: &str| detailed.get(key).and_then(toml::Value::as_bool) == Some(true);
                (value.to_owned(), flag("relative"), flag("force"))
            }
            _ => {
                return Err(format!(
                    "{}: `[env] {name}` is neither a string nor a table",
                    file.display()
                ));
            }
        };
        let value = if relative {
            root_of(&file).join(value).to_string_lossy().into_owned()
        } else {
            value
        };
        return Ok(Some(Setting { value, file, force }));
    }
    Ok(None)
}

/// The directory holding the `.cargo` directory `file` is in: what a
/// relative value is relative to.
fn root_of(file: &Path) -> PathBuf {
    file.parent()
        .and_then(Path::parent)
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

/// The configuration files that apply from `directory`, the nearest first.
fn config_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for ancestor in directory.ancestors() {
        let cargo = ancestor.join(".cargo");
        for name in ["config.toml", "config"] {
            let file = cargo.join(name);
            if file.is_file() {
                files.push(file);
                break;
            }
        }
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    if let Some(home) = home {
        let file = home.join("config.toml");
        if file.is_file() && !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_detailed_values_nearest_first() {
        let root = std::env::temp_dir().join(format!("redis-script-config-{}", std::process::id()));
        let inner = root.join("crate");
        std::fs::create_dir_all(root.join(".cargo")).expect("a directory");
        std::fs::create_dir_all(inner.join(".cargo")).expect("a directory");
        std::fs::write(
            root.join(".cargo/config.toml"),
            "[env]\nREDIS_SCRIPT_TARGET = \"redis-7.2\"\nREDIS_SCRIPT_COMMANDS = { value = \"commands.txt\", relative = true }\n",
        )
        .expect("write");
        std::fs::write(
            inner.join(".cargo/config.toml"),
            "[env]\nREDIS_SCRIPT_TARGET = { value = \"valkey-8.1\", force = true }\n",
        )
        .expect("write");
        let target = env("REDIS_SCRIPT_TARGET", &inner)
            .expect("read")
            .expect("set");
        assert_eq!((target.value.as_str(), target.force), ("valkey-8.1", true));
        let commands = env("REDIS_SCRIPT_COMMANDS", &inner)
            .expect("read")
            .expect("set");
        assert_eq!(PathBuf::from(commands.value), root.join("commands.txt"));
        assert_eq!(env("REDIS_SCRIPT_NOTHING", &inner), Ok(None));
        std::fs::write(inner.join(".cargo/config.toml"), "[env\n").expect("write");
        assert!(env("REDIS_SCRIPT_TARGET", &inner).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
