//! Calls: `redis.call`/`redis.pcall` against the command table (name,
//! subcommand, arity, `noscript`, writes, key positions) and the library
//! functions whose results the other checks rely on.

use full_moon::ast::FunctionArgs;

use crate::domain::analysis::{ReturnShape, ReturnSite};
use crate::domain::keys::KeySite;
use crate::domain::operand::{Operand, after_name, literal_text};
use crate::domain::replies::{Caller, reply_form, reply_type};
use crate::domain::review::ReadSite;
use crate::domain::scope::{Binding, FIELD_OF};
use crate::domain::types::{DataRead, Kinds, TableType, Type};
use crate::domain::value::{Param, Reply, Value};
use crate::interp::error_codes::error_code;
use crate::interp::globals::MissingUse;
use crate::interp::observe::{CommandCall, Guard, KnownCommand, Runnable, SandboxCall, Whole};
use crate::interp::{Analyzer, reads};
use crate::model::argument_grammar;
use crate::model::commands::shapes::{self, ShapeForm};
use crate::model::commands::{self, Command, CommandEntry, KeySpecFlags, Resolved};
use crate::model::sandbox::Environment;
use crate::model::target::{Platform, ReleaseSet};
use crate::source::code::Code;
use crate::source::span::Span;
use crate::source::text::plural;

/// Library functions that may return other than exactly one value.
const MULTI_VALUED: &[(&str, Option<&str>)] = &[
    ("unpack", None),
    ("select", None),
    ("pcall", None),
    ("xpcall", None),
    ("next", None),
    ("ipairs", None),
    ("pairs", None),
    ("load", None),
    ("loadstring", None),
    ("string", Some("find")),
    ("string", Some("match")),
    ("string", Some("gsub")),
    ("string", Some("byte")),
    ("struct", Some("unpack")),
    ("cmsgpack", Some("unpack")),
    ("cmsgpack", Some("unpack_limit")),
    ("cmsgpack", Some("unpack_one")),
    ("math", Some("modf")),
    ("math", Some("frexp")),
    ("coroutine", Some("resume")),
    ("coroutine", Some("yield")),
];

/// How compiled Lua (`string.dump`'s result) starts.
const BYTECODE_SIGNATURE: &str = "\u{1b}Lua";

fn is_bytecode(value: &Value) -> bool {
    match value {
        Value::Str(text) | Value::ComputedString(Some(text)) => text.starts_with('\u{1b}'),
        _ => false,
    }
}

/// The word of a literal one-word `redis.error_reply` message (`'GONE'`,
/// `'-GONE'`), which Redis sends as `ERR GONE`.
fn lone_error_word(message: &Value) -> Option<&str> {
    let Value::Str(text) = message else {
        return None;
    };
    let word = text.strip_prefix('-').unwrap_or(text);
    (!word.contains(' ')).then_some(word)
}

impl Analyzer<'_> {
    /// The message `redis.error_reply(message)` sends. Redis takes the
    /// first word as the error code only when a message follows it; a
    /// single word gets the generic code: `redis.error_reply('GONE')`
    /// reaches the client as `ERR GONE`.
    fn error_reply_as_sent(&mut self, message: &Value, span: Span) -> Value {
        let (Value::Str(text), Some(word)) = (message, lone_error_word(message)) else {
            return message.clone();
        };
        self.facts.diagnostics.push(span.warning(
            Code::BareErrorCode,
            format!(
                "`redis.error_reply('{text}')` reaches the client as `ERR {word}`: Redis reads the first word as the error code only when a message follows it"
            ),
            format!(
                "to reply with the code {word}, add a message (`redis.error_reply('{word} <message>')`) or return `{{err = '{word}'}}`"
            ),
        ));
        Value::Str(format!("ERR {word}"))
    }

    /// Evaluates a call of `callee` and returns what it yields.
    pub fn call(&mut self, callee: Value, arguments: &FunctionArgs, span: Span) -> Value {
        let guard = match &callee {
            Value::Builtin {
                global,
                member: None,
            } => match global.as_str() {
                "pcall" | "xpcall" => Some(Guard::Pcall),
                "setmetatable" => Some(Guard::Metamethod),
                _ => None,
            },
            _ => None,
        };
        let outer = self.protected_from;
        if let Some(guard) = guard {
            self.protected_from = Some((self.functions_depth(), guard));
        }
        let operands = self.eval_arguments(arguments, span);
        self.protected_from = outer;
        if let Value::Builtin { global, member } = &callee {
            self.track_table_writes(global, member.as_deref(), arguments, &operands);
        }
        // A function of the script, or one a protected call runs, may
        // delete keys.
        let runs_script_code = match &callee {
            Value::Builtin { global, member } => matches!(
                (global.as_str(), member.as_deref()),
                ("pcall" | "xpcall", None) | ("coroutine", Some("resume"))
            ),
            _ => true,
        };
        if runs_script_code {
            self.scopes.forget_existing();
        }
        let result = match &callee {
            Value::Builtin { global, member } => {
                self.builtin_call(global, member.as_deref(), &operands, span)
            }
            Value::Function(Some(summary)) => self.call_summary(summary, &operands, span),
            _ => Value::Unknown,
        };
        self.last_call_many = match &callee {
            Value::Builtin { global, member } => MULTI_VALUED
                .iter()
                .any(|(g, m)| g == global && m.as_deref() == member.as_deref()),
            _ => true,
        };
        result
    }

    /// A call of a sandbox function (`global.member(…)`, or `global(…)`):
    /// its checks and effects on what the walk records, and its value.
    fn builtin_call(
        &mut self,
        global: &str,
        member: Option<&str>,
        operands: &[Operand],
        span: Span,
    ) -> Value {
        let first = operands.first().map(|operand| &operand.value);
        match (global, member, first) {
            ("redis" | "server", Some(member), _) => {
                self.check_redis_api(global, member, operands, span);
            }
            ("setmetatable" | "rawset", None, Some(table)) => self.table_write(global, table, span),
            _ => {}
        }
        // Valkey's `server` table is the `redis` table under another name.
        let global = if global == "server" { "redis" } else { global };
        if !matches!((global, member), ("redis", Some("call" | "pcall"))) {
            let call = SandboxCall {
                global,
                member,
                operands,
                span,
            };
            self.observe(|finding, site| finding.sandbox_call(site, &call));
        }
        match (global, member) {
            ("redis", Some(member @ ("call" | "pcall"))) => {
                self.command_reply(member == "pcall", operands, span)
            }
            ("redis", Some("error_reply")) => self.error_reply(operands, span),
            ("redis", Some("register_function")) => {
                self.register_function(span);
                Value::Unknown
            }
            ("unpack", None) | ("table", Some("unpack")) => self.unpack(operands, span),
            ("rawset", None) => self.rawset(operands, span),
            ("tonumber", None) => {
                if let Some(operand) = operands.first() {
                    self.json_text_as_number(&operand.value, operand.span);
                }
                tonumber(self, operands)
            }
            ("getmetatable", None) => first.map_or(Value::Unknown, |base| self.metatable_of(base)),
            ("error", None) => {
                self.raise(first, span);
                Value::Unknown
            }
            // The error a protected call catches may be a command's error
            // reply, handed back as a table.
            ("pcall" | "xpcall", None) | ("coroutine", Some("resume")) => {
                self.facts.unit.error_codes.forwards_command_errors();
                if let Some(Value::Missing(missing)) = first {
                    let caller = match (global, member) {
                        ("xpcall", _) => "xpcall",
                        ("coroutine", _) => "coroutine.resume",
                        _ => "pcall",
                    };
                    self.use_missing(missing, MissingUse::ProtectedCall(caller));
                }
                Value::Unknown
            }
            // Their results may carry an `err` field from run-time data.
            ("cjson", Some("decode"))
            | ("cmsgpack", Some("unpack" | "unpack_limit" | "unpack_one")) => {
                self.facts.unit.error_codes.forwards_unknown();
                let mut decoded = Type::unknown().read_from(DataRead {
                    what: format!(
                        "a value decoded by `{global}.{}`",
                        member.unwrap_or_default()
                    ),
                    line: span.line,
                    in_request: false,
                });
                if global == "cjson" {
                    decoded.json = self.json_argument_decoded(operands);
                }
                Value::Typed(decoded)
            }
            // After `redis.setresp(3)`, a map reply is `{map = {…}}`: its
            // inner table may hold an `err` field read from the data.
            ("redis", Some("setresp")) => {
                if first.and_then(Value::as_number) != Some(2.0) {
                    self.facts.unit.error_codes.forwards_unknown();
                }
                Value::Nil
            }
            ("loadstring", None) if first.is_some_and(is_bytecode) => {
                self.facts.diagnostics.push(span.error(
                    Code::CompiledChunk,
                    "`loadstring` of compiled Lua (`string.dump`): Redis compiles only source text, so `loadstring` returns nil and calling its result fails with \"attempt to call a nil value\"",
                    "write the function in the script itself",
                ));
                Value::Unknown
            }
            // JSON text: the fields of the table, where the walk knows them.
            ("cjson", Some("encode")) => Value::Typed(Type {
                encoded: Some(self.encoded_table(operands).unwrap_or_default()),
                ..Type::of(Kinds::STRING)
            }),
            ("type", None) => {
                if let Some(value) = first {
                    self.tested(value);
                }
                Value::ComputedString(None)
            }
            _ => library_value(global, member, operands),
        }
    }

    /// `redis.call(…)` (or `redis.pcall`, `protected`): checked against
    /// the command table, and the type of its reply.
    fn command_reply(&mut self, protected: bool, operands: &[Operand], span: Span) -> Value {
        if protected {
            self.facts.unit.error_codes.forwards_command_errors();
        }
        let Some((name, releases)) = self.check_redis_call(operands, span, protected) else {
            // A command the model does not know, or one named at run time,
            // may delete keys.
            self.scopes.forget_existing();
            return Value::Unknown;
        };
        let existing = self.existing_read(name, operands);
        let name_span = operands.first().map_or(span, |operand| operand.span);
        let command = operands
            .first()
            .and_then(|operand| operand.value.as_str())
            .map_or_else(|| name.to_ascii_uppercase(), str::to_ascii_uppercase);
        let key = operands
            .get(1)
            .filter(|operand| matches!(operand.value, Value::Key(_) | Value::DerivedKey(_)))
            .map(|operand| self.quote(operand.span, "the key"));
        let caller = Caller {
            command: &command,
            key: key.as_deref(),
        };
        let mut reply = reply_type(name, releases, self.context.resp, caller).read_from(DataRead {
            what: format!("a value read from the reply of `{command}`"),
            line: name_span.line,
            in_request: false,
        });
        let texts: Vec<Option<String>> = operands.iter().map(literal_text).collect();
        let texts: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
        let (_, words, spread_from) = after_name(name, operands, &texts);
        reply.reply_form = reply_form(
            name,
            releases,
            self.context.resp,
            caller,
            words,
            spread_from,
        )
        .map(std::rc::Rc::new);
        if existing {
            // The script wrote it earlier on this path: it is there. A
            // test for its absence is redundant, not wrong.
            reply = reply.without(Kinds::FALSY);
            reply.unguarded = reply.unguarded | Kinds::FALSE;
        }
        self.record_creations(name, releases, operands);
        reply.unbounded = reads::unbounded_read(name, releases, operands, span);
        if reply.unbounded.is_none() {
            reply.grows = reads::computed_size(name, releases, operands, name_span);
        }
        if let Some(count) = reads::one_per_argument(name, releases, operands) {
            reply = reply.with_length(count);
        }
        if let Some(read) = &reply.unbounded {
            self.facts.unit.review.read(ReadSite {
                line: read.span.line,
                column: read.span.column,
                command: read.command.clone(),
                reads: read.reads,
            });
        }
        if protected {
            // A refused command comes back as `{err = …}`.
            return Value::Typed(reply.join(&Type::of(Kinds::TABLE)));
        }
        Value::Typed(reply)
    }

    /// Whether `name` reads, at `operands`, what the script wrote earlier
    /// on this path: `GET` of a key it set, `HGET` of a field it set.
    fn existing_read(&self, name: &str, operands: &[Operand]) -> bool {
        let written = |at: usize| {
            operands
                .get(at)
                .and_then(|operand| self.stable_text(operand))
        };
        match name {
            "get" => written(1).is_some_and(|key| self.scopes.exists(&key)),
            "hget" => written(1)
                .zip(written(2))
                .is_some_and(|(key, field)| self.scopes.exists(&format!("{key}{FIELD_OF}{field}"))),
            _ => false,
        }
    }

    /// What a call of `name` with `operands` (on `releases`) creates for
    /// what comes after it on this path: a string key, hash fields; any
    /// other write may delete, and `SELECT` names another database's keys.
    fn record_creations(&mut self, name: &str, releases: ReleaseSet, operands: &[Operand]) {
        let written = |at: usize| {
            operands
                .get(at)
                .and_then(|operand| self.stable_text(operand))
        };
        if creates_string(name, operands) {
            if let Some(key) = written(1) {
                self.scopes.created(key);
            }
            return;
        }
        if let Some(fields) = created_fields(name, operands.len()) {
            let Some(key) = written(1) else {
                return;
            };
            let fields: Vec<String> = fields.filter_map(written).collect();
            for field in fields {
                self.scopes.created(format!("{key}{FIELD_OF}{field}"));
            }
            return;
        }
        if may_write(name, releases) || name == "select" {
            self.scopes.forget_existing();
        }
    }

    /// The text of `operand` when it names the same value wherever it is
    /// written on a path where none of its locals is assigned: literals,
    /// `KEYS` and `ARGV` elements and locals joined by operators, with no
    /// call and no global. What a path knows to exist is keyed by it.
    fn stable_text(&self, operand: &Operand) -> Option<String> {
        if operand.many {
            return None;
        }
        let text = self.context.map.snippet(operand.span)?;
        let mut in_string: Option<char> = None;
        let mut word = String::new();
        let mut names = Vec::new();
        for c in text.chars().chain([' ']) {
            match in_string {
                Some(quote) if c == quote => in_string = None,
                Some(_) => {}
                None if c == '\'' || c == '"' => in_string = Some(c),
                None if c == '(' || c == '{' || c == '[' && text.contains("[[") => return None,
                None if c.is_ascii_alphanumeric() || c == '_' => word.push(c),
                None => {
                    if word
                        .chars()
                        .next()
                        .is_some_and(|first| !first.is_ascii_digit())
                    {
                        names.push(std::mem::take(&mut word));
                    }
                    word.clear();
                }
            }
        }
        let stable = names.iter().all(|name| {
            matches!(name.as_str(), "KEYS" | "ARGV")
                || matches!(
                    self.scopes.resolve(name, self.functions_depth()),
                    Binding::Local { .. }
                )
        });
        stable.then_some(text)
    }

    /// `redis.error_reply(message)`: an error reply, whose code the
    /// contract checks compare with the declared error type.
    fn error_reply(&mut self, operands: &[Operand], span: Span) -> Value {
        let first = operands.first().map(|operand| &operand.value);
        let message_span = operands.first().map_or(span, |operand| operand.span);
        let sent = first.map(|message| self.error_reply_as_sent(message, message_span));
        let sent = sent.as_ref().unwrap_or(&Value::Unknown);
        self.facts
            .unit
            .error_codes
            .record(sent, message_span, &mut self.facts.diagnostics);
        let lone_word = first.and_then(lone_error_word).map(str::to_string);
        Value::Reply(Reply::Error(error_code(sent), lone_word))
    }

    /// `unpack(t)` or `unpack(t, from, to)`: the elements of `t`, spread.
    fn unpack(&mut self, operands: &[Operand], span: Span) -> Value {
        let first = operands.first().map(|operand| &operand.value);
        if let Some(table) = first {
            // `unpack(t, from, to)` in a loop over ranges still passes
            // every element, a range per call.
            let how = match operands.len() {
                0..=2 => Whole::Unpacked,
                _ => Whole::UnpackedInRanges,
            };
            self.observe_whole_use(table, how, span);
        }
        let mut spread = self.spread_table(first);
        if operands.len() > 2 {
            // `unpack(t, from, to)`: the range the script computes, not the
            // table, decides whether anything is passed, and a range is
            // almost always computed to be non-empty (`while done < n do …
            // unpack(t, done + 1, …)`).
            spread = spread.non_empty_spread();
        }
        Value::Spread(Box::new(spread))
    }

    /// `rawset(t, key, value)`: an `err` field written makes `t` an error
    /// reply; its value is `t`.
    fn rawset(&mut self, operands: &[Operand], span: Span) -> Value {
        let argument = |at: usize| {
            operands
                .get(at)
                .map_or(Value::Nil, |operand| operand.value.clone())
        };
        let (key, value) = (argument(1), argument(2));
        match key {
            Value::Str(name) if name == "err" => {
                let value_span = operands.get(2).map_or(span, |operand| operand.span);
                self.facts.unit.error_codes.err_field(
                    &value,
                    value_span,
                    &mut self.facts.diagnostics,
                );
            }
            key => self.facts.unit.error_codes.computed_field(&key, &value),
        }
        argument(0).stored()
    }

    /// `redis.register_function` where the plan did not read it: a call the
    /// declarations cannot be checked against.
    fn register_function(&mut self, span: Span) {
        let understood = self
            .context
            .plan
            .is_some_and(|plan| plan.register_calls.contains(&span.offset));
        if !understood {
            self.facts.diagnostics.push(span.error(
                Code::UncheckedRegistration,
                "`redis.register_function` must be called as a statement at the top level of the library, so that the registered functions can be checked",
                "write one `redis.register_function('name', function(keys, args) … end)` line per function, outside any function, loop or condition",
            ));
        }
    }

    /// `error(value)`: the script ends with an error reply.
    fn raise(&mut self, message: Option<&Value>, span: Span) {
        self.raised = true;
        let (code, lone_error_word) = match message {
            Some(Value::Reply(Reply::Error(code, lone_word))) => (code.clone(), lone_word.clone()),
            _ => (None, None),
        };
        self.facts.unit.returns.push(ReturnSite {
            line: span.line,
            column: span.column,
            width: span.width,
            shape: ReturnShape::Error(code),
            lone_error_word,
            encoded: None,
            form: None,
        });
    }

    /// Checks a `redis.call` and returns the command it calls (`get`,
    /// `config|get`) with the releases it may run on, when the model
    /// knows it. `protected`: the call is a `redis.pcall`, which returns a
    /// refusal as an error reply rather than raising it.
    fn check_redis_call(
        &mut self,
        operands: &[Operand],
        span: Span,
        protected: bool,
    ) -> Option<KnownCommand> {
        if operands.is_empty() {
            self.facts.diagnostics.push(span.error(
                Code::HelperArgument,
                "`redis.call` without a command name fails at run time",
                "pass the command name first: redis.call('GET', KEYS[1])",
            ));
            return None;
        }
        let texts: Vec<Option<String>> = operands.iter().map(literal_text).collect();
        let arguments: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
        let (known, runnable) = self.check_command(operands, &arguments, span, protected);
        let shown = arguments
            .first()
            .copied()
            .flatten()
            .map_or_else(|| "the command".to_owned(), str::to_ascii_uppercase);
        self.command_elements(known, &shown, operands, &arguments);
        let call = CommandCall {
            shown: &shown,
            operands,
            words: &arguments,
            known,
            runnable: runnable.as_ref(),
        };
        self.observe(|finding, site| finding.command(site, &call));
        known
    }

    /// Checks the command of a `redis.call` against the model (or the
    /// project's declarations): returns the command with the releases it
    /// may run on, as [`Self::check_redis_call`] does, and the forms it may
    /// run as (its name, and the fewest arguments they take) where scripts
    /// may call it.
    fn check_command(
        &mut self,
        operands: &[Operand],
        arguments: &[Option<&str>],
        span: Span,
        protected: bool,
    ) -> (Option<KnownCommand>, Option<Runnable>) {
        let name_span = operands.first().map_or(span, |operand| operand.span);
        let declared = arguments
            .first()
            .copied()
            .flatten()
            .and_then(|name| self.context.signature.declared_commands.get(name));
        if let Some(command) = declared {
            let candidates = vec![Candidate {
                platform: None,
                command,
            }];
            let runnable =
                self.check_candidates(candidates, operands, arguments, span, name_span, protected);
            return (None, runnable);
        }
        let entry = match commands::resolve(arguments) {
            Resolved::Command(entry) => entry,
            Resolved::NonLiteralName | Resolved::NonLiteralSubcommand { .. } => {
                // The command is chosen at run time: it may write.
                self.facts.unit.may_write = true;
                return (None, None);
            }
            Resolved::UnknownCommand => {
                self.unknown_command(arguments.first().copied().flatten(), name_span);
                return (None, None);
            }
            Resolved::UnknownSubcommand { parent } => {
                let sub = arguments.get(1).copied().flatten().unwrap_or_default();
                let sub_span = operands.get(1).map_or(span, |operand| operand.span);
                self.unknown_subcommand(parent, sub, sub_span);
                return (None, None);
            }
        };
        let target = &self.context.signature.target;
        let mut candidates = Vec::new();
        let mut missing = Vec::new();
        for platform in target.platforms() {
            let loaded = entry
                .module
                .is_none_or(|module| platform.has_module(module));
            match entry.on(platform.release) {
                Some(command) if loaded => candidates.push(Candidate {
                    platform: Some(*platform),
                    command,
                }),
                _ => missing.push(*platform),
            }
        }
        if candidates.is_empty() || target.is_strict() && !missing.is_empty() {
            // Whatever it does on other servers, it may write.
            self.facts.unit.may_write = true;
            self.not_available(entry, &missing, name_span);
            return (None, None);
        }
        if !missing.is_empty() {
            // The lenient default target: say where the call fails, and
            // how to make that an error.
            self.missing_on_some_servers(entry, &missing, name_span);
        }
        if let Some(deprecation) = entry.deprecation {
            let name = display(entry.name);
            let replacement = deprecation.replaced_by.replace("`!", "`");
            self.facts.diagnostics.push(name_span.warning(
                Code::DeprecatedCommand,
                format!(
                    "`{name}` is deprecated since Redis {}: use {replacement} instead",
                    deprecation.since
                ),
                "deprecated commands still run, but may be removed from future servers",
            ));
        }
        let releases = releases_of(&candidates);
        let runnable =
            self.check_candidates(candidates, operands, arguments, span, name_span, protected);
        self.check_script_options(entry.name, releases, operands);
        (Some((entry.name, releases)), runnable)
    }

    /// Checks a call against the forms the target's servers know it by:
    /// under a strict target a check fails when it fails on any of them,
    /// under `any` when it fails on all of them. In order: whether scripts
    /// may call it at all (nothing else is checked when they may not),
    /// whether it writes, then its arguments against the forms left.
    /// Returns the forms it may run as.
    fn check_candidates(
        &mut self,
        candidates: Vec<Candidate<'_>>,
        operands: &[Operand],
        arguments: &[Option<&str>],
        span: Span,
        name_span: Span,
        protected: bool,
    ) -> Option<Runnable> {
        let strictness = Strictness::of(self.context.signature.target.is_strict());
        let candidates = self.scriptable(candidates, strictness, name_span)?;
        let first = candidates.first()?;
        let runnable = Runnable {
            name: display(first.command.name),
            min_args: candidates
                .iter()
                .map(|candidate| candidate.command.min_args())
                .min()
                .unwrap_or(0),
        };
        self.check_writes(&candidates, strictness, name_span, protected);
        match operands.last().filter(|operand| operand.many) {
            Some(last) => self.check_spread_call(candidates, operands, arguments, last, strictness),
            None => self.check_arguments(candidates, operands, arguments, strictness, span),
        }
        Some(runnable)
    }

    /// The forms scripts may call, or `None` after reporting that the
    /// servers refuse the command in scripts.
    fn scriptable<'c>(
        &mut self,
        mut candidates: Vec<Candidate<'c>>,
        strictness: Strictness,
        name_span: Span,
    ) -> Option<Vec<Candidate<'c>>> {
        let refused: Vec<&Candidate<'_>> = candidates
            .iter()
            .filter(|candidate| candidate.command.is_noscript())
            .collect();
        if strictness.fails(refused.len(), candidates.len()) {
            let refused_on: Vec<Platform> = refused
                .iter()
                .filter_map(|candidate| candidate.platform)
                .collect();
            if let Some(first) = refused.first() {
                let command = first.command;
                self.refuse_noscript(&command, &refused_on, name_span);
            }
            return None;
        }
        candidates.retain(|candidate| !candidate.command.is_noscript());
        Some(candidates)
    }

    /// Records whether the call may write (for the review, and for
    /// `EVAL_RO`), and reports a write where only reads may run.
    fn check_writes(
        &mut self,
        candidates: &[Candidate<'_>],
        strictness: Strictness,
        name_span: Span,
        protected: bool,
    ) {
        let writers = candidates
            .iter()
            .filter(|candidate| commands::is_write_for_no_writes(&candidate.command))
            .count();
        let writes = writers > 0 || candidates.iter().any(|c| c.command.flags_unknown());
        if writes {
            self.facts.unit.may_write = true;
        }
        let name = candidates
            .first()
            .map(|candidate| display(candidate.command.name))
            .unwrap_or_default();
        self.facts
            .unit
            .review
            .command(&name, name_span.line, writes);
        let read_only = self.context.flags.no_writes || self.context.signature.read_only;
        if !read_only || writers == 0 || !strictness.fails(writers, candidates.len()) {
            return;
        }
        let in_function = self.context.environment == Environment::FunctionCall;
        let (declares, remedy) = if in_function {
            (
                "the function is registered with `flags = {'no-writes'}`",
                "remove `no-writes` from the function's flags, or move the write to another function",
            )
        } else if self.context.flags.no_writes {
            (
                "the script declares `#!lua flags=no-writes`",
                "remove `no-writes` from the shebang, or move the write to another script",
            )
        } else {
            (
                "the script runs with EVAL_RO (`--read-only`)",
                "send the script with EVAL, or move the write to another script",
            )
        };
        let refused = format!(
            "`{name}` is a write command, but {declares}: Redis refuses it (Write commands are not allowed from read-only scripts)"
        );
        self.facts.diagnostics.push(if protected {
            name_span.warning(
                Code::WriteInReadOnly,
                format!("{refused}, and this `redis.pcall` always returns that error reply"),
                remedy,
            )
        } else {
            name_span.error(Code::WriteInReadOnly, refused, remedy)
        });
    }

    /// A call whose last argument (`last`, a trailing call or `...`)
    /// passes an unknown number of values: its arity is unknown, and so is
    /// where its keys are, but for `unpack(t)` of a constructor of keys
    /// nothing has changed since, whose keys are the call's next arguments
    /// one by one. Where the keys are only roughly known, no error, but
    /// the prefixes of the keys built are still the call's to check.
    fn check_spread_call(
        &mut self,
        mut candidates: Vec<Candidate<'_>>,
        operands: &[Operand],
        arguments: &[Option<&str>],
        last: &Operand,
        strictness: Strictness,
    ) {
        let strict = strictness == Strictness::Strict;
        let table = match &last.value {
            Value::Spread(table) => table.table_type(),
            _ => None,
        };
        // A table of keys and values in turn stands for two of its pairs.
        let pairs = table
            .and_then(|table| table.pairs.as_deref())
            .filter(|pairs| pairs.complete)
            .and_then(|pairs| Some([pairs.key.clone()?, pairs.value.clone()?]))
            .map(|[key, value]| vec![key.clone(), value.clone(), key, value]);
        let elements = match table.and_then(|table| table.keys.as_deref()) {
            Some(keys) => keys.to_vec(),
            None => match pairs {
                Some(pairs) => pairs,
                None => {
                    self.check_keys(&candidates, operands, arguments, strict, false);
                    return;
                }
            },
        };
        let before = operands.len() - 1;
        let mut spread = operands[..before].to_vec();
        let mut words = arguments[..before.min(arguments.len())].to_vec();
        for key in elements {
            spread.push(Operand {
                value: key,
                span: last.span,
                many: false,
            });
            words.push(None);
        }
        candidates.retain(|candidate| candidate.command.arity_accepts(spread.len()));
        self.check_keys(&candidates, &spread, &words, strict, true);
    }

    /// A call with a known number of arguments: its arity, then, against
    /// the forms that accept it, its keys and its groups of values.
    fn check_arguments(
        &mut self,
        mut candidates: Vec<Candidate<'_>>,
        operands: &[Operand],
        arguments: &[Option<&str>],
        strictness: Strictness,
        span: Span,
    ) {
        let strict = strictness == Strictness::Strict;
        let passed = operands.len();
        let rejecting: Vec<&Candidate<'_>> = candidates
            .iter()
            .filter(|candidate| !candidate.command.arity_accepts(passed))
            .collect();
        if strictness.fails(rejecting.len(), candidates.len()) {
            // Under `any`, the most permissive form explains the failure.
            let shown = rejecting
                .iter()
                .max_by_key(|candidate| {
                    let command = candidate.command;
                    (command.max_args().is_none(), command.min_args())
                })
                .filter(|_| !strict)
                .or(rejecting.first());
            if let Some(candidate) = shown {
                let command = candidate.command;
                let platform = candidate.platform;
                self.wrong_arity(&command, platform, passed, span);
            }
            return;
        }
        candidates.retain(|candidate| candidate.command.arity_accepts(passed));
        self.check_keys(&candidates, operands, arguments, strict, true);
        if let Some(candidate) = candidates.first() {
            let releases = releases_of(&candidates);
            let name = candidate.command.name;
            // An option word a release does not know, read there as a
            // value, breaks the count of values too: the option says why.
            if !self.check_unknown_options(name, releases, operands, arguments) {
                self.check_groups(name, releases, operands, arguments, span);
            }
        }
    }

    /// A call whose trailing groups of values (`field value` of `HSET`)
    /// get a count of operands that is no whole number of groups, by the
    /// grammar of every form the call may meet: the server refuses it.
    fn check_groups(
        &mut self,
        name: &str,
        releases: ReleaseSet,
        operands: &[Operand],
        arguments: &[Option<&str>],
        span: Span,
    ) {
        let Some(forms) = shapes::shape(name).and_then(|shape| shape.forms_covering(releases))
        else {
            return;
        };
        let (operands, words, spread_from) = after_name(name, operands, arguments);
        let mut broken = None;
        for form in forms {
            match argument_grammar::broken_groups(form.arguments, words, spread_from) {
                Some(found) => broken = Some(found),
                // A form the call fits: no error.
                None => return,
            }
        }
        let Some(broken) = broken else {
            return;
        };
        let group: Vec<&str> = broken.group.iter().map(|member| member.name).collect();
        let size = group.len();
        let after = match broken
            .from
            .checked_sub(1)
            .and_then(|index| operands.get(index))
        {
            Some(before) => format!(
                "after `{}`",
                self.quote(before.span, "the arguments before")
            ),
            None => "after its name".to_owned(),
        };
        let command = display(name);
        self.facts.diagnostics.push(span.error(
            Code::WrongArity,
            format!(
                "`{command}` takes `{}` in groups of {size} {after}, but this call passes {}: the server refuses the call",
                group.join(" "),
                plural(broken.passed, "value")
            ),
            format!(
                "pass a whole number of `{}` groups",
                group.join(" ")
            ),
        ));
    }

    fn unknown_command(&mut self, name: Option<&str>, span: Span) {
        let name = name.unwrap_or_default();
        let escape = "declare it in the file named by REDIS_SCRIPT_COMMANDS (see the redis-script docs) to have its calls checked";
        let hint = match commands::suggest(name) {
            Some(near) => format!(
                "did you mean `{}`? if `{name}` comes from a module or a newer server, {escape}",
                near.to_ascii_uppercase()
            ),
            None => format!("no supported server or module knows it; if yours does, {escape}"),
        };
        self.facts.diagnostics.push(span.error(
            Code::UnknownCommand,
            format!("unknown Redis command `{name}`: the call fails at run time"),
            hint,
        ));
    }

    /// The command exists, but not on (every server of) the target.
    fn not_available(&mut self, entry: &'static CommandEntry, missing: &[Platform], span: Span) {
        let name = display(entry.name);
        let target = &self.context.signature.target;
        let lacking: Vec<&str> = missing
            .iter()
            .map(|platform| platform.release().name)
            .collect();
        // Name the servers lacking it when the target lists several.
        let lacking = if target.platforms().len() > 1 {
            format!(" (not on {})", lacking.join(", "))
        } else {
            String::new()
        };
        if let Some(module) = entry.module {
            let on_release = missing
                .iter()
                .any(|platform| entry.on(platform.release).is_none());
            if !on_release {
                let with = missing
                    .first()
                    .map(|platform| format!("{}+{}", platform.release().name, module.name()))
                    .unwrap_or_default();
                self.facts.diagnostics.push(span.error(
                    Code::UnavailableCommand,
                    format!(
                        "`{name}` is a command of the {} module, which Redis bundles since 8.0; {} without it{lacking}",
                        module.title(),
                        target.phrase()
                    ),
                    format!(
                        "if the server loads the module, name it in the target (`{with}`); otherwise target redis-8.0 or later"
                    ),
                ));
                return;
            }
        }
        let releases = entry.releases();
        let mut available = releases.describe();
        let absent = releases.missing_servers();
        if !absent.is_empty() {
            available = format!("{available}, not on {}", absent.join(" or "));
        }
        self.facts.diagnostics.push(span.error(
            Code::UnavailableCommand,
            format!(
                "`{name}` exists {available}; {}{lacking}",
                target.phrase()
            ),
            "call it only where the server has it, or change the target (REDIS_SCRIPT_TARGET, or the attribute's `target`)",
        ));
    }

    /// A command that some server of a lenient target (the default, every
    /// supported server) lacks: a warning that names where it exists.
    fn missing_on_some_servers(
        &mut self,
        entry: &'static CommandEntry,
        missing: &[Platform],
        span: Span,
    ) {
        let name = display(entry.name);
        let lacking: Vec<String> = missing
            .iter()
            .map(|platform| {
                match entry
                    .module
                    .filter(|_| entry.on(platform.release).is_some())
                {
                    Some(module) => format!(
                        "{} without the {} module",
                        platform.release().name,
                        module.title()
                    ),
                    None => platform.release().name.to_owned(),
                }
            })
            .collect();
        let mut available = entry.releases().describe();
        if let Some(module) = entry.module {
            available = format!("{available} with the {} module", module.title());
        }
        self.facts.diagnostics.push(span.warning(
            Code::UnavailableCommand,
            format!(
                "`{name}` exists {available}, and not on {}: the default target (any supported server) lets this build, and the call fails there with \"Unknown Redis command\"",
                lacking.join(", ")
            ),
            "set the servers you run, e.g. `REDIS_SCRIPT_TARGET = \"redis-7.2\"` in `.cargo/config.toml`'s `[env]` (or the attribute's `target`): a call they lack is then an error, and this warning goes",
        ));
    }

    fn unknown_subcommand(&mut self, parent: &CommandEntry, subcommand: &str, span: Span) {
        let parent_name = display(parent.name);
        let hint = match commands::suggest_subcommand(parent, subcommand) {
            Some(near) => format!("did you mean `{}`?", display(near)),
            None => format!("see `COMMAND DOCS {parent_name}` for its subcommands"),
        };
        self.facts.diagnostics.push(span.error(
            Code::UnknownCommand,
            format!("unknown subcommand `{parent_name} {subcommand}`: the call fails at run time"),
            hint,
        ));
    }

    fn refuse_noscript(&mut self, command: &Command<'_>, refused_on: &[Platform], span: Span) {
        let name = display(command.name);
        let base = command.parent_name().unwrap_or(command.name).to_string();
        let hint = match base.as_str() {
            "multi" | "exec" | "discard" | "watch" | "unwatch" => {
                "a script already runs atomically: drop the transaction commands"
            }
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "script"
            | "function" => "scripts cannot run scripts: inline the other script's logic",
            "subscribe" | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe"
            | "sunsubscribe" => "subscribe from the client; a script can still PUBLISH",
            _ => "run this command from the client instead of the script",
        };
        // Where scripts may call it, if anywhere in the model.
        let allowed = commands::lookup(command.name).map_or(ReleaseSet::NONE, |entry| {
            entry
                .forms
                .iter()
                .filter(|form| !form.flags.contains(commands::CommandFlags::NOSCRIPT))
                .fold(ReleaseSet::NONE, |set, form| set.union(form.releases))
        });
        let elsewhere = !allowed.is_empty() && !refused_on.is_empty();
        let hint = if elsewhere {
            "run it from the client, or target a release that allows it in scripts"
        } else {
            hint
        };
        let message = if !elsewhere {
            format!("`{name}` cannot be called from a script: Redis marks it `noscript`")
        } else {
            let on: Vec<&str> = refused_on
                .iter()
                .map(|platform| platform.release().name)
                .collect();
            format!(
                "`{name}` cannot be called from a script on {} (allowed {})",
                on.join(", "),
                allowed.describe()
            )
        };
        self.facts
            .diagnostics
            .push(span.error(Code::NoscriptCommand, message, hint));
    }

    fn wrong_arity(
        &mut self,
        command: &Command<'_>,
        platform: Option<Platform>,
        passed: usize,
        span: Span,
    ) {
        let name = display(command.name);
        let words_in_name = 1 + usize::from(command.parent_name().is_some());
        let expected = command.min_args().saturating_sub(words_in_name);
        let passed_after = passed.saturating_sub(words_in_name);
        let bound = if command.max_args().is_some() {
            "exactly"
        } else {
            "at least"
        };
        // Name the release when the command's arity differs between releases.
        let accepting = commands::lookup(command.name).map_or(ReleaseSet::NONE, |entry| {
            entry
                .forms
                .iter()
                .filter(|form| {
                    let arity = form.arity;
                    let min = arity.unsigned_abs() as usize;
                    if arity >= 0 {
                        passed == min
                    } else {
                        passed >= min
                    }
                })
                .fold(ReleaseSet::NONE, |set, form| set.union(form.releases))
        });
        let on = match platform {
            Some(platform) if !accepting.is_empty() => {
                format!(" on {}", platform.release().name)
            }
            _ => String::new(),
        };
        let hint = if accepting.is_empty() || on.is_empty() {
            // The syntax of the server the call was checked for.
            let releases = platform.map_or(ReleaseSet::ALL, |platform| {
                ReleaseSet::only(platform.release)
            });
            let syntax = shapes::shape(command.name)
                .and_then(|shape| shape.forms_for(releases).next())
                .map(ShapeForm::syntax);
            match syntax {
                Some(syntax) => format!("fix the arguments: `{name} {syntax}`"),
                None => format!("fix the arguments; `COMMAND DOCS {name}` shows its syntax"),
            }
        } else {
            format!(
                "this call is valid {}; fix the arguments or the target",
                accepting.describe()
            )
        };
        self.facts.diagnostics.push(span.error(
            Code::WrongArity,
            format!(
                "`{name}` takes {bound} {} after its name{on}, but this call passes {passed_after}: Redis fails with \"Wrong number of args calling Redis command from script\"",
                plural(expected, "argument")
            ),
            hint,
        ));
    }

    /// The arguments every form of the command (or, strict, any form)
    /// takes as keys: each must come from KEYS (see [`Analyzer::check_key`]).
    fn check_keys(
        &mut self,
        candidates: &[Candidate<'_>],
        operands: &[Operand],
        arguments: &[Option<&str>],
        strict: bool,
        report: bool,
    ) {
        let mut flagged: Vec<usize> = Vec::new();
        // How any form uses the key at each position, for ACL rules.
        let mut uses: Vec<(usize, KeySpecFlags)> = Vec::new();
        for (index, candidate) in candidates.iter().enumerate() {
            let positions = candidate.command.key_positions(arguments);
            let keys: Vec<usize> = positions
                .known()
                .iter()
                .filter(|position| position.is_key())
                .map(|position| position.index)
                .collect();
            for position in positions
                .known()
                .iter()
                .filter(|position| position.is_key())
            {
                // A key in any form the call may meet.
                if let Some(operand) = operands.get(position.index) {
                    self.element_taken(&operand.value);
                }
                match uses.iter_mut().find(|(at, _)| *at == position.index) {
                    Some((_, flags)) => *flags = flags.union(position.flags),
                    None => uses.push((position.index, position.flags)),
                }
            }
            if index == 0 || strict {
                for key in keys {
                    if !flagged.contains(&key) {
                        flagged.push(key);
                    }
                }
            } else {
                flagged.retain(|key| keys.contains(key));
            }
        }
        flagged.sort_unstable();
        let Some(name) = candidates.first().map(|c| display(c.command.name)) else {
            return;
        };
        for index in flagged {
            if let Some(operand) = operands.get(index) {
                let flags = uses
                    .iter()
                    .find(|(at, _)| *at == index)
                    .map_or(KeySpecFlags::NONE, |(_, flags)| *flags);
                let site = KeySite {
                    command: name.clone(),
                    line: operand.span.line,
                    reads: flags.contains(KeySpecFlags::ACCESS),
                    writes: flags.intersects(
                        KeySpecFlags::INSERT
                            .union(KeySpecFlags::UPDATE)
                            .union(KeySpecFlags::DELETE),
                    ),
                    in_function: None,
                };
                // Where a trailing `unpack` lands is known only roughly,
                // but a table read from data spread where keys go holds
                // key names read from data either way, and a key spec
                // that begins at a fixed index before the `unpack` has its
                // first key there.
                let spread_data =
                    matches!(&operand.value, Value::Spread(table) if table.read_from.is_some());
                // A trailing call's first value lands at its own index.
                let fixed = !matches!(operand.value, Value::Spread(_))
                    && candidates.iter().all(|candidate| {
                        candidate.command.fixed_key_indices().any(|at| at == index)
                    });
                self.check_key(
                    &operand.value,
                    operand.span,
                    &site,
                    report || spread_data || fixed,
                );
            }
        }
    }
}

/// One server's view of the called command (`platform` is `None` for a
/// command the project declares).
#[derive(Debug, Clone, Copy)]
struct Candidate<'a> {
    platform: Option<Platform>,
    command: Command<'a>,
}

/// How many of the target's servers a check must fail on to be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// A strict target: any of them.
    Strict,
    /// The lenient default (`any` supported server): all of them.
    Lenient,
}

impl Strictness {
    fn of(strict: bool) -> Self {
        if strict {
            Strictness::Strict
        } else {
            Strictness::Lenient
        }
    }

    /// Whether a check that fails on `failing` of `total` forms fails.
    fn fails(self, failing: usize, total: usize) -> bool {
        match self {
            Strictness::Strict => failing > 0,
            Strictness::Lenient => failing == total,
        }
    }
}

/// The releases the candidates are forms on.
fn releases_of(candidates: &[Candidate<'_>]) -> ReleaseSet {
    candidates
        .iter()
        .filter_map(|candidate| candidate.platform)
        .fold(ReleaseSet::NONE, |releases, platform| {
            releases.union(ReleaseSet::only(platform.release))
        })
}

/// `string.format('%s…', prefix, …)`: a key built from `prefix` when the
/// format starts with its text.
fn formats_a_key(operands: &[Operand]) -> Option<crate::domain::keys::Derivation> {
    let format = operands.first()?.value.as_str()?;
    if !format.starts_with("%s") {
        return None;
    }
    operands.get(1)?.value.derivation()
}

/// Whether a call of `name` with `operands` leaves its first key holding
/// a string whatever it answers: a `SET` with no condition but `NX` (with
/// `NX` it fails only because the key is there; `XX` and the `IF…`
/// conditions may set nothing on an absent key), or a command that
/// creates the string it updates.
fn creates_string(name: &str, operands: &[Operand]) -> bool {
    match name {
        "set" => {
            // After the key and the value: option words, each of `EX`,
            // `PX`, `EXAT` and `PXAT` followed by its number.
            let mut options = operands.iter().skip(3);
            while let Some(option) = options.next() {
                let word = match (&option.value, option.many) {
                    (Value::Str(word), false) => word.to_ascii_uppercase(),
                    _ => return false,
                };
                match word.as_str() {
                    "EX" | "PX" | "EXAT" | "PXAT" => {
                        if options.next().is_none_or(|argument| argument.many) {
                            return false;
                        }
                    }
                    "NX" | "GET" | "KEEPTTL" => {}
                    _ => return false,
                }
            }
            true
        }
        "setnx" | "setex" | "psetex" | "getset" | "incr" | "incrby" | "decr" | "decrby"
        | "incrbyfloat" | "append" => true,
        _ => false,
    }
}

/// The operand indices of the hash fields a call of `name` with `count`
/// operands creates (or updates, leaving them there): `HSET key f v f v`.
fn created_fields(name: &str, count: usize) -> Option<impl Iterator<Item = usize>> {
    match name {
        "hset" | "hmset" => Some((2..count).step_by(2)),
        "hsetnx" | "hincrby" | "hincrbyfloat" => Some((2..3).step_by(1)),
        _ => None,
    }
}

/// Whether some form of `name` on `releases` writes.
fn may_write(name: &str, releases: ReleaseSet) -> bool {
    commands::lookup(name).is_none_or(|entry| {
        entry
            .forms
            .iter()
            .filter(|form| !form.releases.intersection(releases).is_empty())
            .any(|form| {
                form.flags.intersects(
                    commands::CommandFlags::WRITE.union(commands::CommandFlags::MAY_REPLICATE),
                )
            })
    })
}

/// The value of a call of a sandbox function that has no effect on what
/// the walk records: what its type is, where that is known.
fn library_value(global: &str, member: Option<&str>, operands: &[Operand]) -> Value {
    let first = operands.first().map(|operand| &operand.value);
    match (global, member) {
        // `string.format('%s…', prefix, …)` builds a key from `prefix`.
        ("string", Some("format")) if formats_a_key(operands).is_some() => {
            formats_a_key(operands).map_or(Value::Unknown, Value::DerivedKey)
        }
        ("math", Some("floor" | "ceil")) => Value::Typed(Type::of(Kinds::INTEGER)),
        // `math.min(n, limit)`: the script caps a count.
        ("math", Some("min")) => Value::Typed(Type {
            capped: true,
            ..Type::of(Kinds::NUMBER)
        }),
        ("string", Some("len" | "byte")) | ("table", Some("getn" | "maxn")) => {
            Value::Typed(Type::of(Kinds::INTEGER))
        }
        ("bit", Some(member)) if member != "tohex" => Value::Typed(Type::of(Kinds::INTEGER)),
        ("redis", Some("status_reply")) => Value::Reply(Reply::Status(
            first.and_then(Value::as_str).map(str::to_string),
        )),
        ("redis", Some("sha1hex")) => Value::ComputedString(None),
        ("string", Some("dump")) => Value::ComputedString(Some(BYTECODE_SIGNATURE.to_string())),
        ("ipairs" | "pairs", None) => match first {
            Some(Value::Params(param)) => Value::ParamIterator(*param),
            // The iteration of a read that grows with the data, or of
            // data whose elements are data too.
            Some(value) => {
                let ty = value.ty();
                if ty.unbounded.is_none() && ty.grows.is_none() && ty.read_from.is_none() {
                    return Value::Unknown;
                }
                Value::Typed(Type {
                    unbounded: ty.unbounded,
                    grows: ty.grows,
                    read_from: ty.read_from,
                    ..Type::unknown()
                })
            }
            None => Value::Unknown,
        },
        // A key or a literal converted to a string is still that value.
        ("tostring", None)
            if matches!(
                first,
                Some(Value::Key(_) | Value::DerivedKey(_) | Value::Str(_))
            ) =>
        {
            first.cloned().unwrap_or(Value::Unknown)
        }
        ("tostring", None)
        | ("string", Some("format" | "rep" | "lower" | "upper" | "sub" | "reverse" | "char"))
        | ("table", Some("concat"))
        | ("cjson", Some("encode"))
        | ("cmsgpack", Some("pack"))
        | ("struct", Some("pack"))
        | ("bit", Some("tohex")) => Value::ComputedString(None),
        ("math", Some(_)) => Value::ComputedNumber,
        ("select", None) if first.and_then(Value::as_str) == Some("#") => Value::ComputedNumber,
        _ => Value::Unknown,
    }
}

fn display(name: &str) -> String {
    name.replace('|', " ").to_ascii_uppercase()
}

/// `tonumber(x)`: a number, or nil when `x` is not one. Only a missing
/// argument is evidence for a finding: what text the caller sends or the
/// data holds is the script author's to know.
fn tonumber(analyzer: &Analyzer<'_>, operands: &[Operand]) -> Value {
    let Some(operand) = operands.first() else {
        return Value::Typed(Type::of(Kinds::NIL));
    };
    let ty = operand.value.ty();
    if ty.kinds.within(Kinds::NUMBER | Kinds::NUMERIC_STRING) {
        return Value::Typed(Type::of(Kinds::NUMBER));
    }
    let number = Type::of(Kinds::NUMBER | Kinds::NIL);
    match &ty.absence {
        Some(absence) if ty.kinds.intersects(Kinds::FALSY) => {
            let shown = analyzer.quote(operand.span, "its argument");
            Value::Typed(number.absent(
                format!("`tonumber({shown})`"),
                format!(
                    "is nil when its argument is missing ({} {})",
                    absence.source, absence.when
                ),
            ))
        }
        _ => Value::Typed(number),
    }
}

impl Analyzer<'_> {
    /// The table `unpack(table)` spreads: its type, with what the
    /// declaration says of KEYS and ARGV (a variadic list with no fixed
    /// element may be empty).
    fn spread_table(&self, table: Option<&Value>) -> Type {
        match table {
            Some(Value::Params(param)) => {
                let signature = self.context.signature;
                let (fixed, variadic) = match param {
                    Param::Keys => (signature.keys, signature.variadic_keys),
                    Param::Argv => (signature.args, signature.variadic_args),
                };
                Type::table(TableType {
                    may_be_empty: fixed == 0 && variadic,
                    even_length: false,
                    ..TableType::default()
                })
            }
            Some(value) => value.ty(),
            None => Type::unknown(),
        }
    }

    /// `table.insert(t, v)` and `rawset(t, k, v)` of a local table: from
    /// here on it is not known to be empty.
    fn track_table_writes(
        &mut self,
        global: &str,
        member: Option<&str>,
        arguments: &FunctionArgs,
        operands: &[Operand],
    ) {
        if let (("setmetatable", None), FunctionArgs::Parentheses { arguments, .. }) =
            ((global, member), arguments)
            && let Some(full_moon::ast::Expression::Var(full_moon::ast::Var::Name(token))) =
                arguments.iter().next()
        {
            self.narrow_local(token, |ty| Type {
                metatable: true,
                ..ty.clone()
            });
            return;
        }
        let writes = matches!(
            (global, member),
            ("table", Some("insert")) | ("rawset", None)
        );
        let reorders = matches!((global, member), ("table", Some("remove" | "sort")));
        if !writes && !reorders {
            return;
        }
        if let Some(table) = operands.first() {
            self.json_part_written(&table.value, None);
        }
        let FunctionArgs::Parentheses { arguments, .. } = arguments else {
            return;
        };
        if let Some(full_moon::ast::Expression::Var(full_moon::ast::Var::Name(token))) =
            arguments.iter().next()
        {
            if reorders {
                self.table_changed(token);
                return;
            }
            // The element written comes last (`table.insert(t, [pos,] v)`,
            // `rawset(t, k, v)`); `table.insert(t, v)` appends it.
            let written = operands.get(1..).and_then(<[Operand]>::last);
            let appended = match (global, operands) {
                ("table", [_, element]) if !element.many => Some(&element.value),
                _ => None,
            };
            if let (Some(written), "table") = (written, global) {
                self.grows_in_loop(token, &written.value);
            }
            self.table_written(token, appended);
            if let Some(written) = written {
                self.table_holds(token, &written.value);
            }
        }
    }
}
