//! KEYS and ARGV: literal indices against the declared counts, variadic
//! parameters that need dynamic access, and parameters never read.

use std::collections::BTreeSet;

use crate::domain::signature::DeclaredBy;
use crate::domain::types::{DataRead, Kinds, Type};
use crate::domain::value::{Param, Value};
use crate::interp::Analyzer;
use crate::model::sandbox::Environment;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::diagnostic::Parameter;
use crate::source::span::Span;
use crate::source::text::{plural, plural_or_no};

/// How the script reads one of KEYS/ARGV.
#[derive(Debug, Default)]
pub(crate) struct TableUsage {
    /// Literal indices read.
    literal: BTreeSet<i64>,
    /// The first dynamic access.
    dynamic: Option<Span>,
    /// Literal indices read past the declared ones, and where: reported
    /// when the walk is done, which knows every read.
    beyond: Vec<(i64, Span)>,
}

#[derive(Debug, Default)]
pub(crate) struct ParamUsage {
    keys: TableUsage,
    argv: TableUsage,
}

impl ParamUsage {
    fn of(&mut self, param: Param) -> &mut TableUsage {
        match param {
            Param::Keys => &mut self.keys,
            Param::Argv => &mut self.argv,
        }
    }

    fn of_ref(&self, param: Param) -> &TableUsage {
        match param {
            Param::Keys => &self.keys,
            Param::Argv => &self.argv,
        }
    }
}

/// What the signature declares for one table.
#[derive(Debug, Clone, Copy)]
struct Declared<'a> {
    param: Param,
    fixed: usize,
    variadic: bool,
    /// What the code calls the table: `KEYS`, or a function's `keys`.
    table: &'a str,
}

impl<'a> Declared<'a> {
    fn noun(self) -> &'static str {
        match self.param {
            Param::Keys => "key",
            Param::Argv => "argument",
        }
    }

    fn table(self) -> &'a str {
        self.table
    }

    /// The command-line checker's option for this count.
    fn option(self) -> &'static str {
        match self.param {
            Param::Keys => "--keys",
            Param::Argv => "--args",
        }
    }

    /// The configuration file's setting for this count.
    fn setting(self) -> &'static str {
        match self.param {
            Param::Keys => "keys",
            Param::Argv => "args",
        }
    }
}

impl<'a> Analyzer<'a> {
    fn declared(&self, param: Param) -> Declared<'a> {
        let signature = self.context.signature;
        let [keys, argv] = self.context.tables;
        match param {
            Param::Keys => Declared {
                param,
                fixed: signature.keys,
                variadic: signature.variadic_keys,
                table: keys,
            },
            Param::Argv => Declared {
                param,
                fixed: signature.args,
                variadic: signature.variadic_args,
                table: argv,
            },
        }
    }

    /// `KEYS[index]` / `ARGV[index]`.
    pub fn param_index(&mut self, param: Param, index: &Value, span: Span) -> Value {
        let declared = self.declared(param);
        let element = match (param, index.as_integer()) {
            // Past the fixed arguments of a variadic signature the
            // element may be absent: nil, for a test to find. Nothing
            // says when, so no finding warns about the nil.
            (Param::Argv, Some(literal))
                if declared.variadic
                    && usize::try_from(literal).is_ok_and(|index| index > declared.fixed) =>
            {
                Value::Typed(Type::of(Kinds::STRING | Kinds::NIL).read_from(DataRead {
                    what: format!("{}[{literal}], an argument", self.context.tables[1]),
                    line: span.line,
                    in_request: true,
                }))
            }
            (Param::Argv, Some(literal)) => Value::Arg(usize::try_from(literal).ok()),
            // A computed index (`ARGV[i + 1]`) may be past the end.
            (Param::Argv, None) => {
                Value::Typed(Type::of(Kinds::STRING | Kinds::NIL).read_from(DataRead {
                    what: format!("an element of {}", self.context.tables[1]),
                    line: span.line,
                    in_request: true,
                }))
            }
            (Param::Keys, literal) => {
                Value::Key(literal.and_then(|index| usize::try_from(index).ok()))
            }
        };
        match index.as_integer() {
            Some(literal) if literal < 1 => self.push_never_set(declared, span, literal),
            Some(literal) => self.read_literal(declared, literal, span),
            None if matches!(index, Value::Str(_) | Value::Number(_)) => {
                let shown = self.quote(span, declared.table());
                let table = declared.table();
                self.facts.diagnostics.push(span.error(
                    Code::InvalidIndex,
                    format!("`{shown}` is always nil: {table} holds its elements at integer indices 1, 2, …"),
                    format!("index {table} with an integer, e.g. {table}[1]"),
                ));
            }
            None => self.param_dynamic(param, span),
        }
        element
    }

    fn push_never_set(&mut self, declared: Declared<'_>, span: Span, literal: i64) {
        let table = declared.table();
        self.facts.diagnostics.push(span.error(
            Code::InvalidIndex,
            format!("`{table}[{literal}]` is always nil: Lua arrays start at 1"),
            format!("the first {} is {table}[1]", declared.noun()),
        ));
    }

    fn read_literal(&mut self, declared: Declared<'_>, literal: i64, span: Span) {
        let within = usize::try_from(literal).is_ok_and(|index| index <= declared.fixed);
        let usage = self.facts.unit.params.of(declared.param);
        usage.literal.insert(literal);
        if within {
            return;
        }
        if declared.variadic {
            // Part of the slice; the slice as a whole still needs a loop.
            return;
        }
        if !usage.beyond.iter().any(|(_, at)| *at == span) {
            usage.beyond.push((literal, span));
        }
    }

    /// `table[literal]`, read at `span`, past what is declared.
    fn out_of_range(&self, declared: Declared<'_>, literal: i64, span: Span) -> Diagnostic {
        let table = declared.table();
        let noun = declared.noun();
        let declared_by = self.context.signature.declared_by;
        let remedy = match (declared_by, declared.param) {
            (DeclaredBy::RustFunction, Param::Keys) => {
                format!("the Rust function needs a key parameter for it (keys = {literal})")
            }
            (DeclaredBy::RustFunction, Param::Argv) => {
                format!("the Rust function needs {literal} non-key parameters")
            }
            (DeclaredBy::Header, _) => {
                format!("document it in the header (`-- {table}[{literal}] = …`)")
            }
            (DeclaredBy::CommandLine, _) => format!("pass `{} {literal}`", declared.option()),
            (DeclaredBy::Configuration, _) => format!(
                "set `{} = {literal}` in `redis-script.toml`",
                declared.setting()
            ),
            (DeclaredBy::HostCall, _) => format!("pass {literal} {noun}s in the call"),
            (DeclaredBy::ScriptReads, _) => format!(
                "state the count the call passes (`{} = {literal}` for this file in `redis-script.toml`)",
                declared.setting()
            ),
        };
        span.error(
            Code::IndexOutOfRange,
            format!(
                "`{table}[{literal}]` is out of range: {} declares {}",
                declared_by.subject(),
                plural_or_no(declared.fixed, noun)
            ),
            format!("{remedy}, or the script must read one of the declared {noun}s"),
        )
    }

    /// Where the Rust function splits its parameters into keys and
    /// arguments (`keys = N`) at another place than the script reads them:
    /// the script reads past one side and not all of the other, and its
    /// reads fit the parameters split where it reads them. That split is
    /// the one mistake, reported at `keys =` rather than as an index out
    /// of range and a parameter never read.
    fn misplaced_split(&self) -> Option<Diagnostic> {
        let signature = self.context.signature;
        if signature.declared_by == DeclaredBy::Header
            || signature.variadic_keys
            || signature.variadic_args
        {
            return None;
        }
        let usage = &self.facts.unit.params;
        let highest = |usage: &TableUsage| {
            usage
                .literal
                .iter()
                .filter_map(|&index| usize::try_from(index).ok())
                .max()
                .unwrap_or(0)
        };
        let (keys_read, args_read) = (highest(&usage.keys), highest(&usage.argv));
        let (keys, args) = (signature.keys, signature.args);
        let crosses =
            (keys_read > keys && args_read < args) || (args_read > args && keys_read < keys);
        if !crosses || keys_read + args_read > keys + args || usage.keys.dynamic.is_some() {
            return None;
        }
        let [key_table, arg_table] = self.context.tables;
        let moved: Vec<String> = if keys_read > keys {
            signature
                .arg_names
                .iter()
                .take(keys_read - keys)
                .cloned()
                .collect()
        } else {
            signature
                .key_names
                .iter()
                .skip(keys_read)
                .cloned()
                .collect()
        };
        let moved = match moved.as_slice() {
            [] => String::new(),
            names => format!(
                " (`{}` {} {})",
                names.join("`, `"),
                if names.len() == 1 { "is" } else { "are" },
                match (keys_read > keys, names.len()) {
                    (true, 1) => "a key",
                    (true, _) => "keys",
                    (false, 1) => "an argument",
                    (false, _) => "arguments",
                }
            ),
        };
        let total = keys + args;
        let (split, fix) = match signature.declared_by {
            DeclaredBy::CommandLine => (
                format!("`--keys {keys} --args {args}` split"),
                format!("pass `--keys {keys_read} --args {}`", total - keys_read),
            ),
            DeclaredBy::Configuration => (
                format!("`keys = {keys}` and `args = {args}` in `redis-script.toml` split"),
                format!(
                    "set `keys = {keys_read}` and `args = {}`",
                    total - keys_read
                ),
            ),
            DeclaredBy::HostCall => (
                format!(
                    "the call's {} and {} split",
                    plural(keys, "key"),
                    plural(args, "argument")
                ),
                format!("pass {} first", plural(keys_read, "key")),
            ),
            _ => (
                format!("`keys = {keys}` splits"),
                format!("declare `keys = {keys_read}`"),
            ),
        };
        Some(
            Span::TOP
                .error(
                    Code::IndexOutOfRange,
                    format!(
                        "{split} the parameters where the script does not: it reads keys {} and arguments {}{moved}",
                        reads_up_to(key_table, keys_read),
                        reads_up_to(arg_table, args_read),
                    ),
                    fix,
                )
                .about(Parameter::KeyCount),
        )
    }

    /// KEYS/ARGV read in a way whose index is not a constant. With fixed
    /// parameters only, this is fine (`for i = 1, #KEYS` over two declared
    /// keys): it may read any of them, so none is reported unread.
    pub fn param_dynamic(&mut self, param: Param, span: Span) {
        self.param_counted(param, span);
        if param == Param::Keys {
            // Any element may go anywhere.
            self.facts.unit.key_elements.opaque = true;
        }
    }

    /// `#KEYS`/`#ARGV` at `span`: a read of the count, which may stand
    /// for any element as [`Self::param_dynamic`] says, but passes none.
    pub fn param_counted(&mut self, param: Param, span: Span) {
        self.facts.unit.params.of(param).dynamic.get_or_insert(span);
        if param == Param::Keys {
            self.facts.unit.key_elements.counted = true;
        }
    }

    /// Declared parameters never read, and variadic ones never iterated.
    pub fn param_findings(&self) -> Vec<Diagnostic> {
        let mut findings = Vec::new();
        let misplaced_split = self.misplaced_split();
        let resplit = misplaced_split.is_some();
        match misplaced_split {
            Some(split) => findings.push(split),
            None => {
                for param in [Param::Keys, Param::Argv] {
                    let declared = self.declared(param);
                    for &(literal, span) in &self.facts.unit.params.of_ref(param).beyond {
                        findings.push(self.out_of_range(declared, literal, span));
                    }
                }
            }
        }
        // The Rust function splits one parameter list into keys and
        // arguments (`keys = N`): a key read past the split leaves an
        // argument unread, and the reverse. The out-of-range error is the
        // root cause; the unread parameter on the other side is not
        // reported as well.
        let past_the_split = |param: Param| {
            let declared = self.declared(param);
            !declared.variadic
                && self
                    .facts
                    .unit
                    .params
                    .of_ref(param)
                    .literal
                    .iter()
                    .any(|&index| usize::try_from(index).is_ok_and(|index| index > declared.fixed))
        };
        let split = self.context.signature.declared_by == DeclaredBy::RustFunction || resplit;
        for (param, usage, other) in [
            (Param::Keys, &self.facts.unit.params.keys, Param::Argv),
            (Param::Argv, &self.facts.unit.params.argv, Param::Keys),
        ] {
            let declared = self.declared(param);
            let knock_on = split && past_the_split(other);
            if usage.dynamic.is_none() && !self.context.signature.allow_unused && !knock_on {
                findings.extend(self.unused(declared, usage));
            }
            if declared.variadic && usage.dynamic.is_none() {
                findings.push(unread_slice(declared, self.context.signature.declared_by));
            }
        }
        findings
    }

    fn unused(&self, declared: Declared<'_>, usage: &TableUsage) -> Vec<Diagnostic> {
        let table = declared.table();
        let noun = declared.noun();
        let signature = self.context.signature;
        let is_keys = declared.param == Param::Keys;
        let code = if self.context.environment == Environment::FunctionCall {
            "the function"
        } else {
            "the script"
        };
        let names = if is_keys {
            &signature.key_names
        } else {
            &signature.arg_names
        };
        (1..=declared.fixed)
            .filter(|index| !i64::try_from(*index).is_ok_and(|i| usage.literal.contains(&i)))
            .filter_map(|index| {
                let name = names.get(index - 1);
                if name.is_some_and(|name| name.starts_with('_')) {
                    return None;
                }
                let line = self.context.header.line_of(is_keys, index).unwrap_or(1);
                let span = Span { line, ..Span::TOP };
                // Removing a parameter renumbers the ones after it.
                let is_last = index == declared.fixed && !declared.variadic;
                let subject = match name {
                    Some(name) => format!("`{name}` (`{table}[{index}]`)"),
                    None => format!("{noun} parameter {index} (`{table}[{index}]`)"),
                };
                let remedy = match (signature.declared_by, name) {
                    (DeclaredBy::RustFunction, Some(name)) if is_last => format!(
                        "read {table}[{index}] in {code}, remove `{name}`, or name it `_{name}` if {code} ignores it on purpose"
                    ),
                    (DeclaredBy::RustFunction, Some(name)) => format!(
                        "read {table}[{index}] in {code}, or name it `_{name}` if {code} ignores it on purpose (removing it would shift the {noun}s after it to other {table} positions)"
                    ),
                    (DeclaredBy::RustFunction, None) => format!(
                        "use {table}[{index}] in {code}, remove that parameter from the Rust function, or opt out with `allow_unused`"
                    ),
                    (DeclaredBy::Header, _) => format!(
                        "use {table}[{index}] in the script, remove it from the header, or opt out with `--allow-unused`"
                    ),
                    (DeclaredBy::CommandLine, _) => format!(
                        "use {table}[{index}] in the script, pass a smaller `{}`, or opt out with `--allow-unused`",
                        declared.option()
                    ),
                    (DeclaredBy::HostCall, _) => format!(
                        "use {table}[{index}] in the script, or stop passing it in the call"
                    ),
                    // The script reads a later index, so the call passes
                    // this one too; the count itself is a guess.
                    (DeclaredBy::ScriptReads, _) => format!(
                        "use {table}[{index}] in the script, or stop passing it in the call; no call states how many {noun}s it passes, so the checker takes the highest index the script reads (state the count with `{} = N` for this file in `redis-script.toml`)",
                        declared.setting()
                    ),
                    (DeclaredBy::Configuration, _) => format!(
                        "use {table}[{index}] in the script, set a smaller `{}` in `redis-script.toml`, or opt out with `allow_unused = true` there",
                        declared.setting()
                    ),
                };
                let parameter = if is_keys {
                    Parameter::Key(index)
                } else {
                    Parameter::Arg(index)
                };
                Some(
                    span.error(Code::UnusedParameter, format!("{subject} is never read by the script"), remedy)
                        .about(parameter),
                )
            })
            .collect()
    }
}

/// "up to `KEYS[2]`", or "at no index", for the reads of `table` up to
/// `highest`.
fn reads_up_to(table: &str, highest: usize) -> String {
    match highest {
        0 => "at no index".to_owned(),
        _ => format!("up to `{table}[{highest}]`"),
    }
}

fn unread_slice(declared: Declared<'_>, declared_by: DeclaredBy) -> Diagnostic {
    let table = declared.table();
    let noun = declared.noun();
    let next = declared.fixed + 1;
    let (passes, written, single) = match declared_by {
        DeclaredBy::RustFunction => (
            "the Rust function passes".to_string(),
            String::new(),
            format!("make the last {noun} parameter a single value"),
        ),
        DeclaredBy::Header => (
            "the script's header declares".to_string(),
            format!(" (`{table}[{next}..]`)"),
            format!("document `{table}[{next}]` instead of `{table}[{next}..]`"),
        ),
        DeclaredBy::CommandLine => (
            format!("`{} {}+` declares", declared.option(), declared.fixed),
            String::new(),
            format!(
                "pass `{} {}` without `+`",
                declared.option(),
                declared.fixed
            ),
        ),
        DeclaredBy::HostCall => (
            "the call passes".to_string(),
            String::new(),
            format!("pass only the {noun}s it reads"),
        ),
        DeclaredBy::ScriptReads => (
            "the indices the script reads give".to_string(),
            String::new(),
            format!("pass only the {noun}s it reads"),
        ),
        DeclaredBy::Configuration => (
            format!(
                "`{} = \"{}+\"` in `redis-script.toml` declares",
                declared.setting(),
                declared.fixed
            ),
            String::new(),
            format!("set `{} = {}` there", declared.setting(), declared.fixed),
        ),
    };
    Span::TOP.error(
        Code::FixedReadsOfVariadic,
        format!(
            "{passes} a variadic list of {noun}s{written}, but the script reads {table} only at fixed indices: extra {noun}s would be ignored"
        ),
        format!("iterate the extra {noun}s (`for i = {next}, #{table} do … {table}[i] … end`), or {single}"),
    )
}
