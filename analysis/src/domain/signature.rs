//! What the caller declares about a script's inputs: how many keys and
//! arguments, their names, the opt-outs, the target, and who declares
//! them; and where that contradicts the script's header comment.

use crate::model::declared::DeclaredCommands;
use crate::model::target::Target;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::header::{Header, ParamDoc, documented_count};
use crate::source::text::plural_or_no;

/// What the Rust signature declares about the script's inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    /// Number of fixed key parameters (`KEYS[1]..=KEYS[keys]`).
    pub keys: usize,
    /// Number of fixed non-key parameters (`ARGV[1]..=ARGV[args]`).
    pub args: usize,
    /// The last key parameter is a slice sent as the remaining KEYS.
    pub variadic_keys: bool,
    /// The last argument parameter is a slice sent as the remaining ARGV.
    pub variadic_args: bool,
    /// Attribute opt-out: declared keys/arguments may go unused by the script.
    pub allow_unused: bool,
    /// Attribute opt-out: key positions may hold values that do not come from KEYS.
    pub dynamic_keys: bool,
    /// The arguments (1-based ARGV positions) declared key prefixes: a
    /// key built by appending to one is checked like a key built from a
    /// KEYS element, and each call checks the prefix's hash tag.
    pub key_prefix_args: std::collections::BTreeSet<usize>,
    /// The script runs with `EVAL_RO`/`EVALSHA_RO` (the command line's
    /// `--read-only`), which refuses writes as `#!lua flags=no-writes` does.
    pub read_only: bool,
    /// Where the counts come from, so that messages say what to change.
    pub declared_by: DeclaredBy,
    /// The servers the script must run on (default: any supported server).
    pub target: Target,
    /// Commands the project declares (the escape hatch for commands the
    /// model does not know).
    pub declared_commands: DeclaredCommands,
    /// The names of the fixed key parameters, in order, when the
    /// declaration has names (the Rust function's parameters). A name
    /// starting with `_` may go unread, as in Rust.
    pub key_names: Vec<String>,
    /// The names of the fixed argument parameters, in order.
    pub arg_names: Vec<String>,
    /// The Rust types of the fixed argument parameters, in order, where
    /// the declaration has them: what each sends the script.
    pub arg_types: Vec<ArgType>,
    /// Value findings silenced for the whole script (the attribute's
    /// `allow(…)`, the command line's `--allow`): see [`Code::findings`].
    pub allow: Vec<String>,
}

/// The Rust type of an argument parameter, and the text the script
/// receives for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgType {
    /// As written: `bool`, `&str`, `u64`.
    pub rust: String,
    pub sent: SentAs,
}

/// The text redis-rs sends for a value of a Rust type, as the script reads
/// it in `ARGV`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentAs {
    /// `bool`: `"1"` or `"0"`.
    Bool,
    /// A signed integer: its decimal digits (`"-42"`).
    SignedInteger,
    /// An unsigned integer: its decimal digits (`"42"`).
    UnsignedInteger,
    /// `f32` or `f64`: the shortest text that reads back as the same
    /// number (`"1.0"`, `"0.1"`, `"1e21"`, `"NaN"`, `"inf"`).
    Float,
    /// `Json<T>`: the JSON text `serde_json` writes for the value, which
    /// the script reads with `cjson.decode`.
    Json,
    /// Text or bytes the caller chooses, or a type the checker does not
    /// know: any text.
    Any,
}

impl SentAs {
    /// What redis-rs sends for the type written `rust` (`bool`, `&str`,
    /// `u64`, `std::primitive::f64`): the last segment decides.
    pub fn of_rust_type(rust: &str) -> SentAs {
        let rust = rust.trim_start_matches('&');
        let (path, generics) = rust.split_once('<').unwrap_or((rust, ""));
        let name = path.rsplit("::").next().unwrap_or_default().trim();
        match name {
            "bool" => SentAs::Bool,
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => SentAs::SignedInteger,
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => SentAs::UnsignedInteger,
            "f32" | "f64" => SentAs::Float,
            "Json" if !generics.is_empty() => SentAs::Json,
            _ => SentAs::Any,
        }
    }

    /// Whether `text` is a value of this type can be sent as.
    pub fn admits(self, text: &str) -> bool {
        let digits = |text: &str| {
            !text.is_empty()
                && text.bytes().all(|byte| byte.is_ascii_digit())
                && (text == "0" || !text.starts_with('0'))
        };
        match self {
            SentAs::Bool => text == "1" || text == "0",
            SentAs::UnsignedInteger => digits(text),
            SentAs::SignedInteger => match text.strip_prefix('-') {
                Some(magnitude) => magnitude != "0" && digits(magnitude),
                None => digits(text),
            },
            // The shortest round-trip text always has a `.` or an
            // exponent, apart from the names of the special values.
            SentAs::Float => {
                matches!(text, "NaN" | "inf" | "-inf")
                    || (text.parse::<f64>().is_ok_and(f64::is_finite)
                        && (text.contains('.') || text.contains('e')))
            }
            SentAs::Json | SentAs::Any => true,
        }
    }

    /// For a message: what is sent, "\"1\" or \"0\"".
    pub fn describe(self) -> &'static str {
        match self {
            SentAs::Bool => "\"1\" or \"0\"",
            SentAs::SignedInteger | SentAs::UnsignedInteger => "its decimal digits (\"42\")",
            SentAs::Float => {
                "its shortest decimal text, with a `.` or an exponent (\"1.0\", \"0.25\")"
            }
            SentAs::Json => "its JSON text",
            SentAs::Any => "its text",
        }
    }
}

/// Who declares a script's keys and arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeclaredBy {
    /// The parameters of the `#[redis_script]` function.
    #[default]
    RustFunction,
    /// The script's header comment: `-- KEYS[1] = …`, `-- ARGV[2..] = …`.
    Header,
    /// The command-line checker's `--keys` and `--args` options.
    CommandLine,
    /// The command-line checker's configuration file, `redis-script.toml`
    /// (a section's `keys` and `args`).
    Configuration,
    /// A script embedded in another language's source: the counts its
    /// call passes (`redis.NewScript(1, …)`, `eval(src, 2, …)`); where the
    /// call states only one of them, the other is the indices the script
    /// reads.
    HostCall,
    /// A script embedded in another language's source whose counts
    /// nothing states (no call, configuration or header): a guess, the
    /// indices the script reads. It cannot be out of range; an index read
    /// past one never read says the call passes the one never read.
    ScriptReads,
}

impl DeclaredBy {
    /// The subject of "… declares 2 keys".
    pub(crate) fn subject(self) -> &'static str {
        match self {
            DeclaredBy::RustFunction => "the Rust function",
            DeclaredBy::Header => "the script's header",
            DeclaredBy::CommandLine => "the command line",
            DeclaredBy::Configuration => "the configuration",
            DeclaredBy::HostCall => "the call in the host file",
            DeclaredBy::ScriptReads => "the indices the script reads",
        }
    }
}

impl Header {
    /// The keys and arguments the header documents, as a signature:
    /// `-- KEYS[2] = …` declares two keys, `-- ARGV[2..] = …` one argument
    /// followed by a variadic list. `None` when it documents neither.
    pub fn documented_signature(&self) -> Option<Signature> {
        if self.keys.is_empty() && self.args.is_empty() {
            return None;
        }
        let (keys, variadic_keys) = documented_count(&self.keys);
        let (args, variadic_args) = documented_count(&self.args);
        Some(Signature {
            keys,
            args,
            variadic_keys,
            variadic_args,
            key_prefix_args: self.key_prefix_args(),
            declared_by: DeclaredBy::Header,
            ..Signature::default()
        })
    }
}

/// Notes for header entries that document more keys or arguments than the
/// Rust function (or the command line) declares.
pub(crate) fn contradictions(header: &Header, signature: &Signature) -> Vec<Diagnostic> {
    if signature.declared_by == DeclaredBy::Header {
        return Vec::new();
    }
    let keys = header
        .keys
        .iter()
        .filter(|entry| !signature.variadic_keys && entry.index > signature.keys)
        .map(|entry| contradiction(entry, "KEYS", signature, "key"));
    let args = header
        .args
        .iter()
        .filter(|entry| !signature.variadic_args && entry.index > signature.args)
        .map(|entry| contradiction(entry, "ARGV", signature, "argument"));
    keys.chain(args).collect()
}

fn contradiction(entry: &ParamDoc, table: &str, signature: &Signature, noun: &str) -> Diagnostic {
    let declared = if table == "KEYS" {
        signature.keys
    } else {
        signature.args
    };
    let count = plural_or_no(declared, noun);
    let written = if entry.variadic {
        format!("{table}[{}..]", entry.index)
    } else {
        format!("{table}[{}]", entry.index)
    };
    let hint = match signature.declared_by {
        DeclaredBy::CommandLine => {
            let option = if table == "KEYS" { "--keys" } else { "--args" };
            let wanted = if entry.variadic {
                format!("{}+", entry.index.saturating_sub(1))
            } else {
                entry.index.to_string()
            };
            format!("pass `{option} {wanted}`, or fix the comment")
        }
        DeclaredBy::HostCall | DeclaredBy::ScriptReads => {
            "pass it in the call, or fix the comment".to_owned()
        }
        DeclaredBy::Configuration => {
            let setting = if table == "KEYS" { "keys" } else { "args" };
            format!(
                "set `{setting}` in the section of `redis-script.toml` for this file, or fix the comment"
            )
        }
        _ => format!(
            "declare {} in the Rust function (or a variadic {noun} parameter), or fix the comment",
            plural_or_no(entry.index, noun)
        ),
    };
    Diagnostic::warning(
        Code::HeaderContradiction,
        entry.line,
        entry.column,
        written.len(),
        format!(
            "the header documents `{written}`, but {} declares {count}",
            signature.declared_by.subject()
        ),
    )
    .with_help(hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::header::parse;
    use crate::source::header::tests::SCRIPT;

    #[test]
    fn documents_a_signature() {
        let documented = |source: &str| {
            parse(source).documented_signature().map(|signature| {
                (
                    signature.keys,
                    signature.variadic_keys,
                    signature.args,
                    signature.variadic_args,
                )
            })
        };
        assert_eq!(documented(SCRIPT), Some((1, false, 2, false)));
        assert_eq!(
            documented("-- KEYS[1] = lock\n-- KEYS[2..] = more locks\nreturn 1"),
            Some((1, true, 0, false))
        );
        assert_eq!(
            documented("-- ARGV[1...] = members\n-- ARGV[1..n] = same\nreturn 1"),
            Some((0, false, 0, true))
        );
        assert_eq!(
            documented("-- ARGV[3] = ttl, KEYS[2] = b\nreturn 1"),
            Some((2, false, 3, false))
        );
        assert_eq!(documented("-- Just a description.\nreturn 1"), None);
        assert_eq!(documented("return 1 -- KEYS[1] = too late"), None);
        let signature = parse(SCRIPT).documented_signature();
        assert_eq!(
            signature.map(|signature| signature.declared_by),
            Some(DeclaredBy::Header)
        );
    }

    #[test]
    fn notes_documented_parameters_beyond_the_signature() {
        let header = parse(SCRIPT);
        let signature = Signature {
            keys: 1,
            args: 1,
            ..Signature::default()
        };
        let notes = contradictions(&header, &signature);
        let [note] = notes.as_slice() else {
            panic!("{notes:?}")
        };
        assert_eq!(
            note.message,
            "the header documents `ARGV[2]`, but the Rust function declares 1 argument"
        );
        assert_eq!(note.line, 6);
    }

    #[test]
    fn command_line_contradictions_name_the_option() {
        let header = parse("-- KEYS[1] = a\n-- KEYS[2..] = more\n-- ARGV[2] = ttl\nreturn 1");
        let signature = Signature {
            keys: 1,
            args: 1,
            declared_by: DeclaredBy::CommandLine,
            ..Signature::default()
        };
        let found: Vec<_> = contradictions(&header, &signature)
            .into_iter()
            .map(|note| (note.text(), note.help.unwrap_or_default()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "the header documents `KEYS[2..]`, but the command line declares 1 key"
                        .to_string(),
                    "pass `--keys 1+`, or fix the comment".to_string()
                ),
                (
                    "the header documents `ARGV[2]`, but the command line declares 1 argument"
                        .to_string(),
                    "pass `--args 2`, or fix the comment".to_string()
                ),
            ]
        );
    }
}
