//! The command line: `redis-script-check [OPTIONS] <PATH>...`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cargo_config;
use crate::config::IncludeSyntax;

use redis_script_analysis::{COMMANDS_VARIABLE, Code, DeclaredCommands, TARGET_VARIABLE, Target};

pub const USAGE: &str = "\
Usage: redis-script-check [OPTIONS] <PATH>...

Checks Redis Lua scripts the way redis-script's #[redis_script] attribute
does at compile time: Lua 5.1 syntax, KEYS/ARGV against the declared counts,
sandbox globals, command names and arity, keys that bypass KEYS, shebang
flags.

Arguments:
  <PATH>...            .lua files, sources embedding scripts (.go, .py, .js,
                       .ts, .rb, .php), or directories searched recursively
                       for .lua files (hidden directories are skipped)

Options:
      --keys <N>       every script takes N keys; N+ for N keys followed by
                       a variadic list of keys
      --args <N>       every script takes N arguments; N+ likewise
      --allow-unused   declared keys and arguments may go unused
      --dynamic-keys   commands may take keys that do not come from KEYS
      --key-prefix-args <N,...>
                       these arguments (ARGV positions) are key prefixes
                       with a hash tag: keys built by appending to them
                       are checked like keys built from KEYS; a header
                       line `-- ARGV[1] = key prefix` says the same
      --read-only      the scripts run with EVAL_RO or EVALSHA_RO: a write
                       command is an error, as with `#!lua flags=no-writes`
      --target <T>     the servers the scripts must run on: any (the
                       default: Redis 7.0 and Valkey 7.2 on), a release
                       such as redis-6.2, redis-7.2 or valkey-9.1,
                       with modules (redis-7.2+json), or a comma-separated
                       list; REDIS_SCRIPT_TARGET sets it too, as for the
                       attribute: in the environment, or in `[env]` of
                       .cargo/config.toml here or in a parent directory
      --commands <F>   the project's declared commands (commands the model
                       does not know); REDIS_SCRIPT_COMMANDS names the file
                       too, as for the attribute (environment or `[env]`),
                       relative to the current directory, or with
                       `relative = true` to the config's directory
      --allow <NAMES>  silence these value findings in every script
                       (comma-separated, e.g. reply_hole,nil_value); a
                       script silences one with a comment:
                       `-- redis-script: allow(name)`
      --config <FILE>  read this configuration instead of the
                       redis-script.toml found in the checked path's
                       directory or the nearest parent
      --includes <S>   resolve includes written in syntax S before checking:
                       bullmq (`--- @include \"file\"`, as bullmq's and bull's
                       loaders); a configuration's `includes` says the same;
                       without either, bullmq's lines are read so all the
                       same, and the run says it did
      --embedded       in directories, also read Go, Python, JavaScript,
                       TypeScript, Ruby and PHP sources for the scripts
                       their string literals hold (files named on the
                       command line are always read); a configuration's
                       `embedded = true` says the same
      --format <F>     human (the default), json, or sarif (SARIF 2.1.0,
                       for code scanning)
      --baseline <FILE>
                       report only findings that FILE does not record: a
                       legacy folder adopts the checker and fails on new
                       findings only
      --update-baseline
                       write the findings of this run to the --baseline
                       file, then pass
      --report         print each script's production review in Markdown:
                       keys, writes, retry safety, loops and their bounds,
                       reads that grow with the data, replies, findings and
                       opt-outs (for a pull request)
      --acl            print the ACL rules an application user needs to
                       call each script or library, and all of them: the
                       call command, the commands they run, and a key
                       pattern per key, with read (%R~) or write (%W~)
                       permission as the commands need; replace each
                       <KEYS[n]> or <ARGV[n]>* with your key pattern
      --deny-warnings  warnings fail the check too
      --explain <CODE> explain a diagnostic code (RS103, or its name,
                       always_true) with an example and the fix; `all`
                       lists every code
      --lsp            run as a language server on stdin and stdout: an
                       editor shows each .lua file's diagnostics as it is
                       typed, checked against the Rust declaration naming
                       it (as `cargo build` checks it) or its header
  -h, --help           print this help
  -V, --version        print the version

Each script declares the keys and arguments it takes in its header
comment, before the first line of code:

  -- KEYS[1] = lock key
  -- ARGV[1] = owner token
  -- ARGV[2] = key prefix (hash-tagged, e.g. queue:{emails}:)
  -- ARGV[3..] = more values (a variadic list)

A script that never mentions KEYS or ARGV needs no declaration. --keys
and --args override the header (given one, the other is 0).

A redis-script.toml in the checked path's directory or a parent holds the
target, declared commands, opt-outs, key and argument counts per file
pattern, includes and preludes; options given here win over it. See the
checker's README for its settings.

Exit status: 0 when no script has an error (warnings allowed unless
--deny-warnings), 1 when one has, 2 on a usage error.
";

/// What the user asked for.
#[derive(Debug)]
pub enum Command {
    Help,
    Version,
    /// `--explain RS103`: the long explanation of one code.
    Explain(Code),
    /// `--explain all`: every code with its summary.
    ExplainAll,
    /// `--lsp`: the language server.
    Lsp,
    Check(Box<Options>),
}

/// How to check the scripts.
#[derive(Debug, Default)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    /// `--keys`: the fixed count, and whether a variadic list follows.
    pub keys: Option<Count>,
    /// `--args`, like `keys`.
    pub args: Option<Count>,
    pub allow_unused: bool,
    pub dynamic_keys: bool,
    /// `--key-prefix-args`: ARGV positions declared key prefixes.
    pub key_prefix_args: std::collections::BTreeSet<usize>,
    /// `--read-only`: the scripts run with `EVAL_RO`/`EVALSHA_RO`.
    pub read_only: bool,
    pub format: Format,
    pub deny_warnings: bool,
    /// `--target`, else `REDIS_SCRIPT_TARGET`; `None` leaves it to the
    /// configuration, else any supported server.
    pub target: Option<Target>,
    /// The file `--commands` or `REDIS_SCRIPT_COMMANDS` names; `None`
    /// leaves it to the configuration.
    pub declared_commands: Option<DeclaredCommands>,
    /// `--allow`: value findings silenced everywhere.
    pub allow: Vec<String>,
    /// `--config`: the configuration file, instead of looking for one.
    pub config: Option<PathBuf>,
    /// `--includes`.
    pub includes: Option<IncludeSyntax>,
    /// `--embedded`: directories are searched for host-language sources.
    pub embedded: bool,
    /// `--baseline`, and whether to write it (`--update-baseline`).
    pub baseline: Option<PathBuf>,
    pub update_baseline: bool,
}

/// A target string, or the message naming where it came from. Messages
/// about it say "this script targets …": each script is checked for it.
fn target(source: &str, text: &str) -> Result<Target, String> {
    redis_script_declaration::script_target(text).map_err(|error| format!("`{source}`: {error}"))
}

/// `N` or `N+`: the counts every declaration of a script gives the
/// signature builder.
pub use redis_script_declaration::Count;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
    /// `--report`: the review checklist in Markdown.
    Report,
    /// `--acl`: the ACL rules each script and library needs.
    Acl,
    /// `--format sarif`: SARIF 2.1.0.
    Sarif,
}

/// Reads the command line (without the program name). The error is the
/// message for the user.
pub fn parse(arguments: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut options = Options::default();
    let here = std::env::current_dir().unwrap_or_default();
    let mut commands_file = setting(COMMANDS_VARIABLE, &here)?.map(|(file, _)| PathBuf::from(file));
    if let Some((text, source)) = setting(TARGET_VARIABLE, &here)? {
        options.target = Some(target(&source, &text)?);
    }
    let mut arguments = arguments.into_iter();
    let mut only_paths = false;
    while let Some(argument) = arguments.next() {
        let text = argument.to_str().unwrap_or_default();
        if only_paths || !text.starts_with('-') || text == "-" {
            options.paths.push(PathBuf::from(argument));
            continue;
        }
        // `--name=value` or `--name value`.
        let (name, inline_value) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_string())),
            _ => (text, None),
        };
        let mut value = |option: &str| -> Result<String, String> {
            if let Some(value) = inline_value.clone() {
                return Ok(value);
            }
            arguments
                .next()
                .and_then(|value| value.into_string().ok())
                .ok_or_else(|| format!("`{option}` needs a value"))
        };
        match name {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            // Editors' clients often add `--stdio`: stdio is the only
            // transport.
            "--lsp" => {
                return match arguments.all(|rest| rest == "--stdio") {
                    true => Ok(Command::Lsp),
                    false => {
                        Err("`--lsp` takes no other option: the editor sends the files".to_owned())
                    }
                };
            }
            "--explain" => return explain(&value("--explain")?),
            "--" => only_paths = true,
            "--keys" => options.keys = Some(count("--keys", &value("--keys")?)?),
            "--args" => options.args = Some(count("--args", &value("--args")?)?),
            "--allow-unused" => options.allow_unused = true,
            "--dynamic-keys" => options.dynamic_keys = true,
            "--key-prefix-args" => {
                let text = value("--key-prefix-args")?;
                for position in text.split(',').map(str::trim) {
                    match position.parse::<usize>() {
                        Ok(position) if position > 0 => {
                            options.key_prefix_args.insert(position);
                        }
                        _ => {
                            return Err(format!(
                                "`--key-prefix-args {text}`: expected ARGV positions from 1, such as 1 or 1,3"
                            ));
                        }
                    }
                }
            }
            "--read-only" => options.read_only = true,
            "--deny-warnings" => options.deny_warnings = true,
            "--report" => options.format = Format::Report,
            "--acl" => options.format = Format::Acl,
            "--target" => options.target = Some(target("--target", &value("--target")?)?),
            "--config" => options.config = Some(PathBuf::from(value("--config")?)),
            "--includes" => {
                options.includes = match value("--includes")?.as_str() {
                    "bullmq" => Some(IncludeSyntax::Bullmq),
                    other => {
                        return Err(format!(
                            "unknown include syntax `{other}`: use `--includes bullmq` (`--- @include \"file\"`)"
                        ));
                    }
                }
            }
            "--baseline" => options.baseline = Some(PathBuf::from(value("--baseline")?)),
            "--update-baseline" => options.update_baseline = true,
            "--embedded" => options.embedded = true,
            "--commands" => commands_file = Some(PathBuf::from(value("--commands")?)),
            "--allow" => {
                for name in value("--allow")?.split(',').map(str::trim) {
                    if Code::finding(name).is_none() {
                        return Err(unknown_finding(name));
                    }
                    options.allow.push(name.to_owned());
                }
            }
            "--format" => {
                options.format = match value("--format")?.as_str() {
                    "human" => Format::Human,
                    "json" => Format::Json,
                    "sarif" => Format::Sarif,
                    other => {
                        return Err(format!(
                            "unknown format `{other}`: use `--format human`, `json` or `sarif`"
                        ));
                    }
                }
            }
            _ => return Err(format!("unknown option `{text}`")),
        }
        let takes_no_value = matches!(
            name,
            "--" | "--allow-unused"
                | "--dynamic-keys"
                | "--read-only"
                | "--deny-warnings"
                | "--report"
                | "--acl"
                | "--update-baseline"
                | "--embedded"
        );
        if takes_no_value && inline_value.is_some() {
            return Err(format!("`{name}` takes no value"));
        }
    }
    if options.paths.is_empty() {
        return Err("no script given: pass .lua files or directories".to_string());
    }
    if options.update_baseline && options.baseline.is_none() {
        return Err("`--update-baseline` writes the `--baseline` file: name it, as in `--baseline redis-script-baseline.json`".to_string());
    }
    if let Some(file) = commands_file {
        let shown = file.display().to_string();
        options.declared_commands = Some(
            DeclaredCommands::read_file(&file, &shown, "the current directory")
                .map_err(|messages| messages.join("\n\n"))?,
        );
    }
    Ok(Command::Check(Box::new(options)))
}

/// The value of the variable `name` as the attribute sees it when the crate
/// under `directory` builds: the process environment, else `[env]` of
/// Cargo's configuration (whose `force = true` wins over the environment);
/// with where it was set, for messages.
pub(crate) fn setting(name: &str, directory: &Path) -> Result<Option<(String, String)>, String> {
    let configured = cargo_config::env(name, directory)?;
    let environment = std::env::var(name).ok();
    Ok(match (environment, configured) {
        (Some(value), Some(setting)) if !setting.force => {
            Some((value.clone(), format!("{name}={value}")))
        }
        (_, Some(setting)) => {
            let source = format!(
                "{name} = \"{}\" in {}",
                setting.value,
                setting.file.display()
            );
            Some((setting.value, source))
        }
        (Some(value), None) => Some((value.clone(), format!("{name}={value}"))),
        (None, None) => None,
    })
}

/// `--explain <CODE>`: a code (`RS103`, `rs103`), a name (`always_true`),
/// or `all`.
fn explain(text: &str) -> Result<Command, String> {
    if text.trim() == "all" {
        return Ok(Command::ExplainAll);
    }
    Code::parse(text).map(Command::Explain).ok_or_else(|| {
        let candidates = Code::ALL.iter().flat_map(|code| [code.code(), code.name()]);
        match redis_script_analysis::suggest::closest(text, candidates) {
            Some(near) => format!("`--explain {text}`: no such code; did you mean `{near}`?"),
            None => format!("`--explain {text}`: no such code; `--explain all` lists them"),
        }
    })
}

/// Every code with its name, its level and what it finds.
pub fn code_list() -> String {
    let mut out = String::new();
    for code in Code::ALL {
        out.push_str(&format!(
            "{code}  {:<26} {:<17} {}\n",
            code.name(),
            code.level().describe(),
            code.summary()
        ));
    }
    out
}

/// The message for `--allow` of a name that is no finding.
fn unknown_finding(name: &str) -> String {
    format!(
        "`--allow {name}` names no finding; {}",
        Code::finding_help(name)
    )
}

/// `2` or `2+`.
pub(crate) fn count(option: &str, text: &str) -> Result<Count, String> {
    let (digits, variadic) = match text.strip_suffix('+') {
        Some(digits) => (digits, true),
        None => (text, false),
    };
    let fixed = digits.parse::<usize>().map_err(|_| {
        format!("`{option} {text}`: expected a number of parameters, such as 2, or 2+ for two followed by a variadic list")
    })?;
    Ok(Count { fixed, variadic })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(arguments: &[&str]) -> Result<Command, String> {
        parse(arguments.iter().map(OsString::from))
    }

    fn options(arguments: &[&str]) -> Options {
        match parsed(arguments) {
            Ok(Command::Check(options)) => *options,
            other => panic!("{arguments:?}: {other:?}"),
        }
    }

    #[test]
    fn reads_counts_flags_and_paths() {
        let read = options(&[
            "--keys",
            "2+",
            "--args=1",
            "lua",
            "--deny-warnings",
            "--format",
            "json",
            "x.lua",
        ]);
        assert_eq!(
            read.keys,
            Some(Count {
                fixed: 2,
                variadic: true
            })
        );
        assert_eq!(
            read.args,
            Some(Count {
                fixed: 1,
                variadic: false
            })
        );
        assert_eq!(read.paths, [PathBuf::from("lua"), PathBuf::from("x.lua")]);
        assert!(read.deny_warnings && read.format == Format::Json);
        assert_eq!(options(&["--", "--keys"]).paths, [PathBuf::from("--keys")]);
        let prefixes = options(&["--key-prefix-args", "1, 3", "a.lua"]).key_prefix_args;
        assert_eq!(prefixes.into_iter().collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        for (arguments, message) in [
            (
                &["--keys", "two", "a.lua"][..],
                "`--keys two`: expected a number of parameters, such as 2, or 2+ for two followed by a variadic list",
            ),
            (&["--keys"][..], "`--keys` needs a value"),
            (
                &["--format", "xml", "a.lua"][..],
                "unknown format `xml`: use `--format human`, `json` or `sarif`",
            ),
            (&["--fast", "a.lua"][..], "unknown option `--fast`"),
            (
                &["--key-prefix-args", "0", "a.lua"][..],
                "`--key-prefix-args 0`: expected ARGV positions from 1, such as 1 or 1,3",
            ),
            (
                &["--deny-warnings=yes", "a.lua"][..],
                "`--deny-warnings` takes no value",
            ),
            (&[][..], "no script given: pass .lua files or directories"),
        ] {
            match parsed(arguments) {
                Err(found) => assert_eq!(found, message, "{arguments:?}"),
                other => panic!("{arguments:?}: {other:?}"),
            }
        }
        assert!(matches!(parsed(&["a.lua", "--help"]), Ok(Command::Help)));
        assert!(matches!(parsed(&["--lsp"]), Ok(Command::Lsp)));
        assert!(matches!(parsed(&["--lsp", "--stdio"]), Ok(Command::Lsp)));
        assert!(
            parsed(&["--lsp", "lua/"])
                .is_err_and(|message| message.contains("takes no other option"))
        );
    }
}
