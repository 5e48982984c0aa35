//! Calls: `redis.call`/`redis.pcall` against the command table (name,
//! subcommand, arity, `noscript`, writes, key positions) and the library
//! functions whose results the other checks rely on.

use full_moon::ast::FunctionArgs;

use super::commands::{self, Command, Resolved};
use super::span::Span;
use super::value::{Reply, Value};
use super::walker::{Analyzer, Operand, error_code};
use super::{ReturnShape, ReturnSite};

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
    ("math", Some("modf")),
    ("math", Some("frexp")),
    ("coroutine", Some("resume")),
    ("coroutine", Some("yield")),
];

impl Analyzer<'_> {
    /// Evaluates a call of `callee` and returns what it yields.
    pub fn call(&mut self, callee: Value, arguments: &FunctionArgs, span: Span) -> Value {
        let operands = self.eval_arguments(arguments, span);
        let result = match &callee {
            Value::Builtin { global, member } => {
                self.builtin_call(global, member.as_deref(), &operands, span)
            }
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

    fn builtin_call(
        &mut self,
        global: &str,
        member: Option<&str>,
        operands: &[Operand],
        span: Span,
    ) -> Value {
        let first = operands.first().map(|operand| &operand.value);
        match (global, member) {
            ("redis", Some(member @ ("call" | "pcall"))) => {
                if member == "pcall" {
                    self.error_codes.forwards_command_errors();
                }
                self.check_redis_call(operands, span);
                Value::Unknown
            }
            ("redis", Some("error_reply")) => {
                let message_span = operands.first().map_or(span, |operand| operand.span);
                self.error_codes.record(
                    first.unwrap_or(&Value::Unknown),
                    message_span,
                    &mut self.diagnostics,
                );
                Value::Reply(Reply::Error(first.and_then(error_code)))
            }
            // The error of a protected `redis.call` is a command's reply.
            ("pcall" | "xpcall", None) => {
                self.error_codes.forwards_command_errors();
                Value::Unknown
            }
            // Their results may carry an `err` field from run-time data.
            ("rawset", None) | ("cjson", Some("decode")) | ("cmsgpack", Some("unpack")) => {
                self.error_codes.forwards_unknown();
                Value::Unknown
            }
            ("redis", Some("status_reply")) => Value::Reply(Reply::Status(
                first.and_then(Value::as_str).map(str::to_string),
            )),
            ("redis", Some("sha1hex")) => Value::ComputedString(None),
            ("error", None) => {
                self.raise(first, span);
                Value::Unknown
            }
            ("type", None) => {
                if let Some(value) = first {
                    self.tested(value);
                }
                Value::ComputedString(None)
            }
            ("ipairs" | "pairs", None) => match first {
                Some(Value::Params(param)) => Value::ParamIterator(*param),
                _ => Value::Unknown,
            },
            // A key or a literal converted to a string is still that value.
            ("tostring", None) if matches!(first, Some(Value::Key | Value::Str(_))) => {
                first.cloned().unwrap_or(Value::Unknown)
            }
            ("tostring", None)
            | ("string", Some(_))
            | ("table", Some("concat"))
            | ("cjson", Some("encode"))
            | ("cmsgpack", Some("pack"))
            | ("struct", Some("pack"))
            | ("bit", Some("tohex")) => Value::ComputedString(None),
            ("tonumber", None) | ("math", Some(_)) | ("bit", Some(_)) => Value::ComputedNumber,
            ("select", None) if first.and_then(Value::as_str) == Some("#") => Value::ComputedNumber,
            _ => Value::Unknown,
        }
    }

    /// `error(value)`: the script ends with an error reply.
    fn raise(&mut self, message: Option<&Value>, span: Span) {
        self.raised = true;
        let code = match message {
            Some(Value::Reply(Reply::Error(code))) => code.clone(),
            _ => None,
        };
        self.returns.push(ReturnSite {
            line: span.line,
            column: span.column,
            width: span.width,
            shape: ReturnShape::Error(code),
        });
    }

    fn check_redis_call(&mut self, operands: &[Operand], span: Span) {
        if operands.is_empty() {
            self.diagnostics.push(span.error(
                "`redis.call` without a command name fails at run time",
                "pass the command name first: redis.call('GET', KEYS[1])",
            ));
            return;
        }
        let texts: Vec<Option<String>> = operands.iter().map(literal_text).collect();
        let arguments: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
        let name_span = operands.first().map_or(span, |operand| operand.span);
        let command = match commands::resolve(&arguments) {
            Resolved::Command(command) => command,
            Resolved::NonLiteralName | Resolved::NonLiteralSubcommand { .. } => {
                // The command is chosen at run time: it may write.
                self.may_write = true;
                return;
            }
            Resolved::UnknownCommand => {
                self.unknown_command(arguments.first().copied().flatten(), name_span);
                return;
            }
            Resolved::UnknownSubcommand { parent } => {
                let sub = arguments.get(1).copied().flatten().unwrap_or_default();
                let sub_span = operands.get(1).map_or(span, |operand| operand.span);
                self.unknown_subcommand(parent, sub, sub_span);
                return;
            }
        };
        if command.is_noscript() {
            self.refuse_noscript(command, name_span);
            return;
        }
        if commands::is_write_for_no_writes(command) {
            self.may_write = true;
            if self.context.flags.no_writes {
                self.diagnostics.push(name_span.error(
                    format!(
                        "`{}` is a write command, but the script declares `#!lua flags=no-writes`: Redis refuses it (Write commands are not allowed from read-only scripts)",
                        display_name(command)
                    ),
                    "remove `no-writes` from the shebang, or move the write to another script",
                ));
            }
        }
        // A trailing call or `...` passes an unknown number of arguments.
        if operands.last().is_some_and(|operand| operand.many) {
            return;
        }
        self.check_arity(command, operands.len(), span);
        let opted_out =
            self.context.flags.allow_cross_slot_keys || self.context.signature.dynamic_keys;
        if !opted_out {
            self.check_keys(command, operands, &arguments);
        }
    }

    fn unknown_command(&mut self, name: Option<&str>, span: Span) {
        let name = name.unwrap_or_default();
        let hint = match commands::suggest(name) {
            Some(near) => format!("did you mean `{}`?", near.to_ascii_uppercase()),
            None => "see `COMMAND LIST` for the commands Redis knows".to_string(),
        };
        self.diagnostics.push(span.error(
            format!("unknown Redis command `{name}`: the call fails at run time"),
            hint,
        ));
    }

    fn unknown_subcommand(&mut self, parent: &Command, subcommand: &str, span: Span) {
        let parent_name = display_name(parent);
        let hint = match commands::suggest_subcommand(parent, subcommand) {
            Some(near) => format!("did you mean `{}`?", display(near)),
            None => format!("see `COMMAND DOCS {parent_name}` for its subcommands"),
        };
        self.diagnostics.push(span.error(
            format!("unknown subcommand `{parent_name} {subcommand}`: the call fails at run time"),
            hint,
        ));
    }

    fn refuse_noscript(&mut self, command: &Command, span: Span) {
        let name = display_name(command);
        let base = command.parent_name().unwrap_or(command.name);
        let hint = match base {
            "multi" | "exec" | "discard" | "watch" | "unwatch" => {
                "a script already runs atomically: drop the transaction commands"
            }
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "script"
            | "function" => "scripts cannot run scripts: inline the other script's logic",
            "subscribe" | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe"
            | "sunsubscribe" => "subscribe from the client; a script can still PUBLISH",
            _ => "run this command from the client instead of the script",
        };
        self.diagnostics.push(span.error(
            format!("`{name}` cannot be called from a script: Redis marks it `noscript`"),
            hint,
        ));
    }

    fn check_arity(&mut self, command: &Command, passed: usize, span: Span) {
        if command.arity_accepts(passed) {
            return;
        }
        let name = display_name(command);
        let words_in_name = 1 + usize::from(command.parent_name().is_some());
        let expected = command.min_args().saturating_sub(words_in_name);
        let passed_after = passed.saturating_sub(words_in_name);
        let bound = if command.max_args().is_some() {
            "exactly"
        } else {
            "at least"
        };
        self.diagnostics.push(span.error(
            format!(
                "`{name}` takes {bound} {} after its name, but this call passes {passed_after}: Redis fails with \"Wrong number of args calling Redis command from script\"",
                count(expected, "argument")
            ),
            format!("fix the arguments; `COMMAND DOCS {name}` shows its syntax"),
        ));
    }

    fn check_keys(&mut self, command: &Command, operands: &[Operand], arguments: &[Option<&str>]) {
        let positions = command.key_positions(arguments);
        for position in positions
            .known()
            .iter()
            .filter(|position| position.is_key())
        {
            let Some(operand) = operands.get(position.index) else {
                continue;
            };
            let Some(what) = operand.value.not_a_key() else {
                continue;
            };
            let shown = self.quote(operand.span, "this argument");
            let name = display_name(command);
            self.diagnostics.push(operand.span.error(
                format!(
                    "key argument `{shown}` of `{name}` does not come from KEYS ({what}): Redis Cluster routes the script by KEYS only, so this key may live on another node"
                ),
                "pass the key in KEYS (declare it as a key parameter), or opt out with `#!lua flags=allow-cross-slot-keys` or the attribute's `dynamic_keys`",
            ));
        }
    }
}

/// The text Redis receives for an argument, when it is a literal: strings
/// as written, numbers as Lua 5.1 converts them (`%.14g`).
fn literal_text(operand: &Operand) -> Option<String> {
    if operand.many {
        return None;
    }
    match &operand.value {
        Value::Str(text) => Some(text.clone()),
        Value::Number(_) => operand
            .value
            .as_integer()
            .map(|integer| integer.to_string()),
        _ => None,
    }
}

/// `GET`, `CONFIG GET`.
fn display_name(command: &Command) -> String {
    display(command.name)
}

fn display(name: &str) -> String {
    name.replace('|', " ").to_ascii_uppercase()
}

fn count(number: usize, noun: &str) -> String {
    if number == 1 {
        format!("1 {noun}")
    } else {
        format!("{number} {noun}s")
    }
}
