//! Commands the project declares itself: the escape hatch for commands the
//! model does not know (a private module, a newer server), so that calls of
//! them are still checked for arity and key discipline.
//!
//! One command per line; `#` starts a comment:
//!
//! ```text
//! # name       arity      key positions      flags
//! MYMOD.PUT    arity=-3   keys=1             write
//! MYMOD.MGET   arity=-2   keys=1..-1         readonly
//! MYMOD.MOVE   arity=3    keys=1,2           write
//! MYMOD.MSET   arity=-3   keys=1..-1/2       write
//! MYMOD.UNION  arity=-3   keys=count@1       readonly
//! MYMOD.STATS  arity=1    keys=none          readonly
//! ```
//!
//! * `arity` counts the command name, as `COMMAND` does: `3` is exactly
//!   two arguments after the name, `-3` at least two.
//! * `keys` (default `none`) lists argument positions (1 is the first
//!   argument after the name): `N`, `A,B`, a range `A..B` (a negative `B`
//!   counts from the end: `-1` is the last argument) with an optional step
//!   `/S`, or `count@N`: argument `N` holds the number of keys, which follow it.
//! * flags: `write` or `readonly` (without either, the command may write and
//!   a `no-writes` script is not refused it), and optionally `noscript`,
//!   `denyoom`, `blocking`, `fast`, `admin`.
//!
//! A declared name takes precedence over the model, so a declaration can also
//! correct a command whose syntax a newer server changed.

use crate::model::commands::{BeginSearch, Command, CommandFlags, FindKeys, KeySpec, KeySpecFlags};
use crate::model::target::ReleaseSet;

/// The commands a project declares (see the module docs for the format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredCommands {
    /// Sorted by name, unique.
    commands: Vec<DeclaredCommand>,
}

/// One declared command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredCommand {
    /// Lowercase name.
    pub name: String,
    pub arity: i32,
    pub flags: CommandFlags,
    pub key_specs: Vec<KeySpec>,
    /// Line of the declaration, 1-based.
    pub line: usize,
}

/// A mistake in the declarations, at a 1-based `line:column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The environment variable naming a project's declared-commands file, for
/// the attribute (relative to the crate's directory) and the command-line
/// checker (relative to the current directory).
pub const COMMANDS_VARIABLE: &str = "REDIS_SCRIPT_COMMANDS";

impl DeclaredCommands {
    /// Reads and parses the declared-commands file at `path`, which
    /// messages call `shown` (as the user wrote it); `relative_to` says
    /// what a relative path is relative to, for the hint of an unreadable
    /// file. Each message is ready to print: where, what, the line, and a
    /// hint. The attribute and the command-line checker both load the file
    /// this way, so that they check the same commands.
    pub fn read_file(
        path: &std::path::Path,
        shown: &str,
        relative_to: &str,
    ) -> Result<Self, Vec<String>> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            vec![format!(
                "cannot read the declared commands `{}` ({COMMANDS_VARIABLE}): {error}\n = hint: the path is relative to {relative_to}",
                path.display()
            )]
        })?;
        Self::parse(&text).map_err(|mistakes| {
            mistakes
                .iter()
                .map(|mistake| {
                    let line = text.lines().nth(mistake.line.saturating_sub(1)).unwrap_or_default();
                    format!(
                        "{shown}:{}:{}: {}\n  |\n  | {line}\n = hint: declare one command per line: `NAME arity=N keys=POSITIONS write|readonly` (see the redis-script docs, \"Commands the model does not know\")",
                        mistake.line, mistake.column, mistake.message
                    )
                })
                .collect()
        })
    }

    /// Parses the declarations; every mistake is reported, with its position.
    pub fn parse(text: &str) -> Result<Self, Vec<DeclarationError>> {
        let mut commands: Vec<DeclaredCommand> = Vec::new();
        let mut errors = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let content = line.split('#').next().unwrap_or_default();
            let words = words_with_columns(content);
            let Some(((name_column, name), rest)) = words.split_first() else {
                continue;
            };
            match parse_line(name, rest, line_number) {
                Ok(command) => {
                    if let Some(previous) = commands.iter().find(|c| c.name == command.name) {
                        errors.push(DeclarationError {
                            line: line_number,
                            column: *name_column,
                            message: format!(
                                "`{name}` is declared twice (first on line {})",
                                previous.line
                            ),
                        });
                    } else {
                        commands.push(command);
                    }
                }
                Err((column, message)) => errors.push(DeclarationError {
                    line: line_number,
                    column: column.unwrap_or(*name_column),
                    message,
                }),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        commands.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { commands })
    }

    /// No command is declared.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The declared commands, sorted by name.
    pub fn commands(&self) -> &[DeclaredCommand] {
        &self.commands
    }

    /// The declared command `name` (ASCII case-insensitive).
    pub fn get(&self, name: &str) -> Option<Command<'_>> {
        let lower = name.to_ascii_lowercase();
        let index = self
            .commands
            .binary_search_by(|command| command.name.as_str().cmp(&lower))
            .ok()?;
        let command = self.commands.get(index)?;
        Some(Command {
            name: &command.name,
            arity: command.arity,
            flags: command.flags,
            key_specs: &command.key_specs,
            subcommands: &[],
            releases: ReleaseSet::ALL,
        })
    }
}

fn words_with_columns(line: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (offset, char) in line.char_indices() {
        if char.is_whitespace() {
            if let Some(begin) = start.take() {
                words.push((begin, line.get(begin..offset).unwrap_or_default()));
            }
        } else if start.is_none() {
            start = Some(offset);
        }
    }
    if let Some(begin) = start {
        words.push((begin, line.get(begin..).unwrap_or_default()));
    }
    words
        .into_iter()
        .map(|(offset, word)| {
            (
                line.get(..offset).unwrap_or_default().chars().count() + 1,
                word,
            )
        })
        .collect()
}

type LineError = (Option<usize>, String);

fn parse_line(
    name: &str,
    rest: &[(usize, &str)],
    line: usize,
) -> Result<DeclaredCommand, LineError> {
    let valid_name = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':'));
    if !valid_name {
        return Err((
            None,
            format!(
                "`{name}` is not a command name: use letters, digits, `.`, `_`, `-` or `:` (subcommands cannot be declared; declare the parent command)"
            ),
        ));
    }
    let mut arity = None;
    let mut key_specs = Vec::new();
    let mut flags = CommandFlags::NONE;
    for (column, word) in rest {
        let at = Some(*column);
        match word.split_once('=') {
            Some(("arity", value)) => {
                let parsed: i32 = value.parse().map_err(|_| {
                    (at, format!("`arity={value}` is not an integer: write e.g. `arity=-3` (at least two arguments after the name)"))
                })?;
                if parsed == 0 || parsed == -1 {
                    return Err((
                        at,
                        format!(
                            "`arity={parsed}` is not a valid arity: it counts the name, so use 1 or more, or -2 or less"
                        ),
                    ));
                }
                arity = Some(parsed);
            }
            Some(("keys", value)) => {
                key_specs = parse_keys(value).map_err(|message| (at, message))?;
            }
            Some((other, _)) => {
                return Err((
                    at,
                    format!("unknown setting `{other}`: the settings are `arity=` and `keys=`"),
                ));
            }
            None => {
                let flag = match word.to_ascii_lowercase().as_str() {
                    "write" => CommandFlags::WRITE,
                    "readonly" => CommandFlags::READONLY,
                    "noscript" => CommandFlags::NOSCRIPT,
                    "denyoom" => CommandFlags::DENYOOM,
                    "blocking" => CommandFlags::BLOCKING,
                    "fast" => CommandFlags::FAST,
                    "admin" => CommandFlags::ADMIN,
                    _ => {
                        return Err((
                            at,
                            format!(
                                "unknown flag `{word}`: the flags are write, readonly, noscript, denyoom, blocking, fast and admin"
                            ),
                        ));
                    }
                };
                flags = flags.union(flag);
            }
        }
    }
    if flags.contains(CommandFlags::WRITE.union(CommandFlags::READONLY)) {
        return Err((
            None,
            format!("`{name}` is declared both `write` and `readonly`"),
        ));
    }
    if !flags.intersects(CommandFlags::WRITE.union(CommandFlags::READONLY)) {
        flags = flags.union(CommandFlags::FLAGS_UNKNOWN);
    }
    let Some(arity) = arity else {
        return Err((
            None,
            format!(
                "`{name}` has no `arity=`: give the argument count, counting the name (e.g. `arity=-3`)"
            ),
        ));
    };
    Ok(DeclaredCommand {
        name: name.to_ascii_lowercase(),
        arity,
        flags,
        key_specs,
        line,
    })
}

const KEYS_SYNTAX: &str =
    "write `keys=none`, `keys=1`, `keys=1,3`, `keys=1..-1`, `keys=1..-1/2` or `keys=count@1`";

fn parse_keys(value: &str) -> Result<Vec<KeySpec>, String> {
    let invalid = || format!("`keys={value}` is not a key position list: {KEYS_SYNTAX}");
    let position = |text: &str| -> Result<usize, String> {
        match text.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!(
                "`{text}` in `keys={value}` is not a position: positions start at 1, the first argument after the name"
            )),
        }
    };
    if value == "none" {
        return Ok(Vec::new());
    }
    if let Some(at) = value.strip_prefix("count@") {
        return Ok(vec![spec(
            BeginSearch::Index(position(at)?),
            FindKeys::KeyNum {
                key_num_index: 0,
                first_key: 1,
                key_step: 1,
            },
        )]);
    }
    if let Some((first, rest)) = value.split_once("..") {
        let first = position(first)?;
        let (last, step) = match rest.split_once('/') {
            Some((last, step)) => (last, step.parse::<usize>().map_err(|_| invalid())?),
            None => (rest, 1),
        };
        if step == 0 {
            return Err(invalid());
        }
        let last: isize = last.parse().map_err(|_| invalid())?;
        let last_key = if last < 0 {
            last
        } else {
            let last = last.unsigned_abs();
            if last < first {
                return Err(format!(
                    "`keys={value}` ends before it starts: write the first position, then the last"
                ));
            }
            isize::try_from(last - first).map_err(|_| invalid())?
        };
        return Ok(vec![spec(
            BeginSearch::Index(first),
            FindKeys::Range {
                last_key,
                key_step: step,
                limit: 0,
            },
        )]);
    }
    value
        .split(',')
        .map(|item| {
            Ok(spec(
                BeginSearch::Index(position(item)?),
                FindKeys::Range {
                    last_key: 0,
                    key_step: 1,
                    limit: 0,
                },
            ))
        })
        .collect()
}

fn spec(begin_search: BeginSearch, find_keys: FindKeys) -> KeySpec {
    KeySpec {
        flags: KeySpecFlags::NONE,
        begin_search,
        find_keys,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::commands::KeyPositions;

    fn parse(text: &str) -> DeclaredCommands {
        match DeclaredCommands::parse(text) {
            Ok(commands) => commands,
            Err(errors) => panic!("{errors:?}"),
        }
    }

    fn keys(commands: &DeclaredCommands, words: &str) -> Vec<usize> {
        let args: Vec<Option<&str>> = words
            .split_whitespace()
            .map(|word| (word != "?").then_some(word))
            .collect();
        let name = words.split_whitespace().next().unwrap_or_default();
        match commands
            .get(name)
            .map(|command| command.key_positions(&args))
        {
            Some(KeyPositions::Exact(keys)) => keys.iter().map(|key| key.index).collect(),
            other => panic!("{words}: {other:?}"),
        }
    }

    #[test]
    fn parses_declarations() {
        let commands = parse(
            "# private module\n\
             MYMOD.PUT arity=-3 keys=1 write   # the put\n\
             \n\
             mymod.mget  arity=-2 keys=1..-1 readonly\n\
             MYMOD.MOVE arity=3 keys=1,2 write\n\
             MYMOD.MSET arity=-3 keys=1..-1/2 write\n\
             MYMOD.UNION arity=-3 keys=count@1\n\
             MYMOD.STATS arity=1\n",
        );
        assert_eq!(commands.commands().len(), 6);
        let put = commands.get("mymod.put");
        assert!(put.is_some_and(|c| c.arity == -3 && c.is_write()));
        assert!(commands.get("MYMOD.MGET").is_some_and(|c| c.is_readonly()));
        assert!(
            commands
                .get("MYMOD.UNION")
                .is_some_and(|c| c.flags_unknown())
        );
        assert!(commands.get("MYMOD.NOPE").is_none());
        assert_eq!(keys(&commands, "MYMOD.PUT k v"), [1]);
        assert_eq!(keys(&commands, "MYMOD.MGET a b c"), [1, 2, 3]);
        assert_eq!(keys(&commands, "MYMOD.MOVE a b"), [1, 2]);
        assert_eq!(keys(&commands, "MYMOD.MSET a 1 b 2"), [1, 3]);
        assert_eq!(keys(&commands, "MYMOD.UNION 2 a b x"), [2, 3]);
        assert_eq!(keys(&commands, "MYMOD.STATS"), Vec::<usize>::new());
    }

    #[test]
    fn reports_every_mistake_with_its_position() {
        let errors = match DeclaredCommands::parse(
            "MYMOD.PUT arity=x keys=1\n\
             MYMOD.GET arity=2 wirte\n\
             MYMOD.DEL keys=1\n\
             MYMOD.A arity=2 keys=0\n\
             MYMOD.B arity=2 keys=3..1\n\
             MYMOD.C arity=2 size=3\n\
             MYMOD.D arity=2 write readonly\n\
             MYMOD.E arity=-1\n\
             CONFIG|GET arity=2\n\
             MYMOD.OK arity=2\n\
             mymod.ok arity=3\n",
        ) {
            Ok(commands) => panic!("parsed {commands:?}"),
            Err(errors) => errors,
        };
        let shown: Vec<String> = errors
            .iter()
            .map(|e| format!("{}:{} {}", e.line, e.column, e.message))
            .collect();
        assert_eq!(
            shown,
            [
                "1:11 `arity=x` is not an integer: write e.g. `arity=-3` (at least two arguments after the name)",
                "2:19 unknown flag `wirte`: the flags are write, readonly, noscript, denyoom, blocking, fast and admin",
                "3:1 `MYMOD.DEL` has no `arity=`: give the argument count, counting the name (e.g. `arity=-3`)",
                "4:17 `0` in `keys=0` is not a position: positions start at 1, the first argument after the name",
                "5:17 `keys=3..1` ends before it starts: write the first position, then the last",
                "6:17 unknown setting `size`: the settings are `arity=` and `keys=`",
                "7:1 `MYMOD.D` is declared both `write` and `readonly`",
                "8:9 `arity=-1` is not a valid arity: it counts the name, so use 1 or more, or -2 or less",
                "9:1 `CONFIG|GET` is not a command name: use letters, digits, `.`, `_`, `-` or `:` (subcommands cannot be declared; declare the parent command)",
                "11:1 `mymod.ok` is declared twice (first on line 10)",
            ]
        );
    }
}
