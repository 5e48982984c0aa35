//! Globals and library members: what the Redis sandbox defines, refuses to
//! change, or does not have at all.

use full_moon::ast::{BinOp, Call, Expression, FunctionArgs, Index, Prefix, Suffix, Var};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};

use crate::domain::scope::Binding;
use crate::domain::types::Kinds;
use crate::domain::value::{MissingMember, Param, Value};
use crate::interp::Analyzer;
use crate::interp::observe::GuardedGlobalRead;
use crate::model::sandbox::{self, GlobalKind, Presence};
use crate::model::target::ReleaseSet;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::span::Span;
use crate::source::suggest;
use crate::source::tokens::identifier;

/// What the script does with a library member that does not exist.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MissingUse {
    Call,
    Index,
    /// Passed to `pcall` (or `xpcall`), which calls it: the call always
    /// fails, and the protected call hides why.
    ProtectedCall(&'static str),
}

/// Reads of library members that do not exist. Each read is worth a note
/// (a misspelled `redis.LOG_WARNING` passes nil along) unless the script
/// tests it, calls it (an error instead) or indexes it (an error too).
#[derive(Debug, Default)]
pub(crate) struct MissingMembers {
    /// Notes for reads not yet tested or used, by the read's byte offset.
    untested: Vec<(usize, Diagnostic)>,
    /// Members proven present by the conditions of the enclosing `if`s,
    /// `while`s and `and`s: code there never runs on this Lua.
    guards: Vec<(String, String)>,
}

impl MissingMembers {
    fn read(&mut self, missing: &MissingMember) {
        let MissingMember {
            library,
            member,
            span,
            environment,
        } = missing;
        if self
            .untested
            .iter()
            .any(|(offset, _)| *offset == span.offset)
        {
            return;
        }
        let note = span.warning(
            Code::MissingMember,
            format!(
                "`{library}.{member}` does not exist: the `{library}` library has no member `{member}`, so this reads nil"
            ),
            replacement_hint(*environment, library, member).unwrap_or_else(|| {
                format!(
                    "to test whether it exists, write `if {library}.{member} then … end` or `{library}.{member} or fallback`"
                )
            }),
        );
        self.untested.push((span.offset, note));
    }

    fn forget(&mut self, missing: &MissingMember) {
        self.untested
            .retain(|(offset, _)| *offset != missing.span.offset);
    }

    fn is_guarded(&self, missing: &MissingMember) -> bool {
        self.guards
            .iter()
            .any(|(library, member)| *library == missing.library && *member == missing.member)
    }

    /// Adds the guards of a condition; returns how many to remove later.
    pub fn push_guards(&mut self, guards: Vec<(String, String)>) -> usize {
        let count = guards.len();
        self.guards.extend(guards);
        count
    }

    pub fn pop_guards(&mut self, count: usize) {
        self.guards
            .truncate(self.guards.len().saturating_sub(count));
    }

    /// The notes for reads the script neither tested nor used.
    pub fn into_notes(self) -> impl Iterator<Item = Diagnostic> {
        self.untested.into_iter().map(|(_, note)| note)
    }
}

/// What to write instead of a library member that does not exist: the
/// Lua 5.1 spelling of a newer Lua's member, or a near miss.
fn replacement_hint(
    environment: sandbox::Environment,
    library: &str,
    member: &str,
) -> Option<String> {
    if matches!(library, "redis" | "server") && member == "register_function" {
        return Some(match environment {
            sandbox::Environment::FunctionCall => format!(
                "register functions at the top level of the library file: `{library}.register_function` exists only while FUNCTION LOAD runs it"
            ),
            _ => "`register_function` exists only in function libraries (files starting with `#!lua name=…`, loaded with FUNCTION LOAD): declare such a file with `#[redis_library]`".to_string(),
        });
    }
    if let Some(hint) = absent_hint(library, Some(member)) {
        return Some(hint.to_string());
    }
    let newer_lua = match (library, member) {
        ("table", "unpack") => {
            "Lua 5.1 has `unpack` as a global: write `unpack(t)`, or `(table.unpack or unpack)(t)` in code shared with newer Lua"
        }
        ("table", "pack") => "write `{...}`, and `select('#', ...)` for the count",
        ("table", "move") => "copy the elements in a loop",
        ("string", "pack" | "unpack") => "use the `struct` library: `struct.pack`, `struct.unpack`",
        _ => {
            return environment
                .suggest_member(library, member)
                .map(|near| format!("did you mean `{library}.{near}`?"));
        }
    };
    Some(newer_lua.to_string())
}

/// What to write instead of a name the sandbox does not have, when a
/// better hint than the sandbox's own reason exists.
fn absent_hint(name: &str, member: Option<&str>) -> Option<&'static str> {
    let hint = match (name, member) {
        ("print", _) => "log with `redis.log(redis.LOG_NOTICE, message)`",
        ("os", Some("time" | "clock" | "date")) => {
            "read the server clock with `redis.call('TIME')`, or pass the time in through ARGV"
        }
        ("io", _) => {
            "scripts cannot do file or console I/O; pass data in through ARGV and return results"
        }
        ("require" | "dofile" | "loadfile" | "module" | "package", _) => {
            "scripts cannot load code; cjson, cmsgpack, bit and struct are preloaded globals, and other code must be inlined"
        }
        ("getfenv" | "setfenv", _) => {
            "pass values explicitly instead of using function environments"
        }
        ("newproxy", _) => "use a table with `setmetatable` instead",
        _ => return None,
    };
    Some(hint)
}

/// What to do about a hazardous global the sandbox does define.
fn hazard_hint(name: &str) -> &'static str {
    match name {
        "load" | "loadstring" => "write the code directly in the script",
        "collectgarbage" | "gcinfo" => {
            "remove it: a script's reply must not depend on the interpreter's memory"
        }
        _ => "do not rely on it in scripts",
    }
}

/// The global's names and the visible locals, for suggestions.
fn known_names(environment: sandbox::Environment, locals: Vec<&str>) -> Vec<&str> {
    let mut names = locals;
    for global in environment.globals() {
        if !global.name.starts_with("__") {
            names.push(global.name);
        }
    }
    names
}

impl Analyzer<'_> {
    /// Reads a name: a local, or a global the sandbox must define.
    /// `next_member` is the `.member` that follows, for better suggestions.
    pub fn read_name(&mut self, token: &TokenReference, next_member: Option<&str>) -> Value {
        let name = identifier(token);
        match self.scopes.resolve(name, self.functions_depth()) {
            Binding::Local {
                value, declared_at, ..
            } => self.compared_elsewhere(name, declared_at, value),
            Binding::Global => {
                let span = self.span(token);
                self.global_read(name, span, next_member)
            }
        }
    }

    /// The value of the local `name`, read where the script's comparison
    /// of it with `false` (an earlier line) does not guard it: that
    /// comparison is the reason it may be false, when nothing else says.
    fn compared_elsewhere(&self, name: &str, declared_at: usize, value: Value) -> Value {
        let Some(line) = self.compared_with_false.get(&declared_at) else {
            return value;
        };
        let ty = value.ty();
        if ty.is_unknown() || ty.absence.is_some() || !ty.kinds.intersects(Kinds::FALSE) {
            return value;
        }
        Value::Typed(ty.absent(
            format!("`{name}`"),
            format!(
                "is compared with false at line {line}, and that test does not guard this line"
            ),
        ))
    }

    fn global_read(&mut self, name: &str, span: Span, next_member: Option<&str>) -> Value {
        let environment = self.context.environment;
        let presence = environment
            .global(name)
            .map(|global| sandbox::presence(global.releases, &self.context.signature.target));
        if let Some(Presence::Missing { elsewhere }) = presence {
            // A name only the releases before Redis 7.0 define (`print`,
            // `setfenv`), which 7.0 removed: on a target without them, the
            // same note as for a name no server defines.
            let removed = elsewhere
                .releases()
                .all(|(_, release)| release.predates_script_flags())
                && sandbox::absent(name).is_some();
            let diagnostic = if removed {
                self.missing_global(name, span, next_member)
            } else {
                self.not_on_target(name, elsewhere, span)
            };
            self.facts.diagnostics.push(diagnostic);
            return Value::Unknown;
        }
        match environment.global(name).map(|global| global.kind) {
            Some(GlobalKind::ScriptArguments) if name == "KEYS" => Value::Params(Param::Keys),
            Some(GlobalKind::ScriptArguments) => Value::Params(Param::Argv),
            Some(_) => {
                self.reaches_open_doors(name);
                if let Some(hazard) = sandbox::hazard(name) {
                    self.facts.diagnostics.push(span.warning(
                        Code::RiskyGlobal,
                        format!("`{name}` {}", hazard.note),
                        hazard_hint(name),
                    ));
                }
                Value::builtin(name, None)
            }
            None if self.facts.refused_globals.contains(name) => Value::Unknown,
            None => {
                // Read inside a function called under a guard (`pcall`):
                // the guard's finding, not a missing global.
                let guarded = self
                    .protected_from
                    .filter(|&(depth, _)| self.functions_depth() > depth);
                if let Some((_, guard)) = guarded {
                    let read = GuardedGlobalRead { name, span, guard };
                    self.observe(|finding, site| finding.guarded_global_read(site, &read));
                    return Value::Unknown;
                }
                let mut diagnostic = self.missing_global(name, span, next_member);
                if self.functions.iter().any(|function| function.never_called) {
                    diagnostic = diagnostic.never_run(
                        "the function holding it is never called, so this line never runs",
                    );
                }
                self.facts.diagnostics.push(diagnostic);
                // A function reading `KEYS` meant its keys: reported once,
                // not again as keys it never reads.
                if environment == sandbox::Environment::FunctionCall {
                    match name {
                        "KEYS" => self.param_dynamic(Param::Keys, span),
                        "ARGV" => self.param_dynamic(Param::Argv, span),
                        _ => {}
                    }
                }
                Value::Unknown
            }
        }
    }

    /// A global or member some release defines, but not every server of a
    /// strict target.
    fn not_on_target(
        &self,
        name: &str,
        elsewhere: ReleaseSet,
        span: Span,
    ) -> crate::source::diagnostic::Diagnostic {
        let target = &self.context.signature.target;
        let lacking: Vec<&str> = target
            .platforms()
            .iter()
            .filter(|platform| !elsewhere.contains(platform.release))
            .map(|platform| platform.release().name)
            .collect();
        span.error(
            Code::UnavailableGlobal,
            format!(
                "`{name}` is not defined on {}: reading it fails there with \"Script attempted to access nonexistent global variable\" (it exists {}; {})",
                lacking.join(", "),
                elsewhere.describe(),
                target.phrase()
            ),
            if name == "server" {
                "use `redis`, which every server defines (Valkey's `server` is the same table)"
            } else {
                "use it only where the server has it, or change the target"
            },
        )
    }

    fn missing_global(
        &self,
        name: &str,
        span: Span,
        next_member: Option<&str>,
    ) -> crate::source::diagnostic::Diagnostic {
        match self.context.environment {
            sandbox::Environment::LibraryLoad if sandbox::global(name).is_some() => {
                return not_while_loading(name, name, span);
            }
            sandbox::Environment::FunctionCall if matches!(name, "KEYS" | "ARGV") => {
                let (parameter, example) = if name == "KEYS" {
                    ("first", "keys[1]")
                } else {
                    ("second", "args[1]")
                };
                return span.error(
                    Code::UnavailableGlobal,
                    format!(
                        "`{name}` is not defined in a function: Redis fails with \"Script attempted to access nonexistent global variable '{name}'\""
                    ),
                    format!(
                        "a function receives its {} as its callback's {parameter} parameter: `function(keys, args) … {example} … end`",
                        if name == "KEYS" { "keys" } else { "arguments" }
                    ),
                );
            }
            _ => {}
        }
        if let Some(absent) = sandbox::absent(name) {
            let hint = absent_hint(name, next_member).unwrap_or(absent.reason);
            return span.error(
                Code::UnavailableGlobal,
                format!("`{name}` is not available in Redis scripts: reading it fails at run time"),
                hint,
            );
        }
        span.error(
            Code::UndefinedGlobal,
            format!(
                "`{name}` is not defined: Redis fails with \"Script attempted to access nonexistent global variable '{name}'\""
            ),
            self.undefined_hint(name, next_member),
        )
    }

    fn undefined_hint(&self, name: &str, next_member: Option<&str>) -> String {
        let environment = self.context.environment;
        let candidates = known_names(environment, self.scopes.visible_names());
        match suggest::closest(name, candidates) {
            Some(near) => {
                let with_member = next_member
                    .filter(|member| environment.member(near, member).is_some())
                    .map(|member| format!("{near}.{member}"));
                format!("did you mean `{}`?", with_member.as_deref().unwrap_or(near))
            }
            None => format!("declare it first: `local {name} = …`"),
        }
    }

    /// `name = ...` (or `function name()`) where `name` is not a local.
    pub fn global_write(&mut self, name: &str, span: Span, is_function: bool) {
        let locals = self.scopes.visible_names();
        let near_local = suggest::closest(name, locals.iter().copied());
        let (message, declare) = if is_function {
            (
                format!(
                    "function `{name}` is declared as a global: Redis scripts cannot create globals (Attempt to modify a readonly table)"
                ),
                format!("write `local function {name}(…)`"),
            )
        } else {
            (
                format!(
                    "assignment to global variable `{name}`: Redis scripts cannot create or change globals (Attempt to modify a readonly table)"
                ),
                format!("declare it with `local {name} = …`"),
            )
        };
        let hint = match near_local {
            Some(local) => format!("did you mean the local `{local}`? otherwise {declare}"),
            None => declare,
        };
        self.facts
            .diagnostics
            .push(span.error(Code::ReadonlyGlobal, message, hint));
        self.facts.refused_globals.insert(name.to_string());
    }

    /// `base.member` on a value; library members are checked.
    pub fn index_member(&mut self, base: Value, member: &str, span: Span) -> Value {
        let Value::Builtin {
            global,
            member: None,
        } = base
        else {
            return Value::Unknown;
        };
        let environment = self.context.environment;
        let Some(library) = environment.global(&global) else {
            return Value::Unknown;
        };
        match library.kind {
            GlobalKind::GlobalTable => return self.global_read(member, span, None),
            GlobalKind::Library(_) => {}
            _ => return Value::Unknown,
        }
        if let Some(found) = environment.member(&global, member) {
            if let Presence::Missing { elsewhere } =
                sandbox::presence(found.releases, &self.context.signature.target)
            {
                let name = format!("{global}.{member}");
                let diagnostic = self.not_on_target(&name, elsewhere, span);
                self.facts.diagnostics.push(diagnostic);
                return Value::Unknown;
            }
            if let Some(note) = sandbox::member_note(&global, member) {
                self.facts.diagnostics.push(span.warning(
                    Code::RiskyGlobal,
                    format!("`{global}.{member}`: {note}"),
                    "make sure the script does not rely on it",
                ));
            }
            return Value::builtin(&global, Some(member));
        }
        if environment == sandbox::Environment::LibraryLoad {
            self.facts.diagnostics.push(not_while_loading(
                &format!("{global}.{member}"),
                member,
                span,
            ));
            return Value::Unknown;
        }
        let missing = MissingMember {
            library: global,
            member: member.to_string(),
            span,
            environment,
        };
        self.facts.missing.read(&missing);
        Value::Missing(missing)
    }

    /// A missing member used as a condition (`if table.unpack then`,
    /// `table.unpack or unpack`, `type(table.unpack)`): the script tests
    /// for it, which is what it should do.
    pub fn tested(&mut self, value: &Value) {
        if let Value::Missing(missing) = value {
            self.facts.missing.forget(missing);
        }
    }

    /// A missing member called or indexed: Lua raises, unless the code
    /// runs only when the member exists (`if t.m then t.m(x) end`).
    pub fn use_missing(&mut self, missing: &MissingMember, usage: MissingUse) {
        self.facts.missing.forget(missing);
        if self.facts.missing.is_guarded(missing) {
            return;
        }
        let MissingMember {
            library,
            member,
            environment,
            ..
        } = missing;
        let message = match usage {
            MissingUse::Call | MissingUse::Index => {
                let (verb, lua_error) = match usage {
                    MissingUse::Call => ("calling", "call"),
                    _ => ("indexing", "index"),
                };
                format!(
                    "`{library}.{member}` does not exist: the `{library}` library has no member `{member}`, so {verb} it fails with \"attempt to {lua_error} field '{member}' (a nil value)\""
                )
            }
            MissingUse::ProtectedCall(caller) => format!(
                "`{library}.{member}` does not exist: the `{library}` library has no member `{member}`, so `{caller}` calls nil and always fails (\"attempt to call a nil value\"), and hides why"
            ),
        };
        self.facts.diagnostics.push(missing.span.error(
            Code::MissingMember,
            message,
            replacement_hint(*environment, library, member).unwrap_or_else(|| {
                format!("see the Redis Lua API reference for what `{library}` offers")
            }),
        ));
    }

    /// The members a condition proves present when it holds: in
    /// `if a.b and c.d ~= nil then`, both `a.b` and `c.d`.
    pub fn guards_of(&self, condition: &Expression) -> Vec<(String, String)> {
        let mut guards = Vec::new();
        self.collect_guards(condition, &mut guards);
        guards
    }

    fn collect_guards(&self, condition: &Expression, guards: &mut Vec<(String, String)>) {
        match condition {
            Expression::BinaryOperator {
                lhs,
                binop: BinOp::And(_),
                rhs,
            } => {
                self.collect_guards(lhs, guards);
                self.collect_guards(rhs, guards);
            }
            Expression::BinaryOperator { lhs, binop, rhs } => {
                let equal = match binop {
                    BinOp::TwoEqual(_) => true,
                    BinOp::TildeEqual(_) => false,
                    _ => return,
                };
                for (tested, other) in [(lhs, rhs), (rhs, lhs)] {
                    // `x ~= nil`
                    let is_nil = matches!(&**other, Expression::Symbol(token) if token.is_symbol(Symbol::Nil));
                    if is_nil && !equal {
                        self.collect_guards(tested, guards);
                    }
                    // `type(x) == 'function'`, `type(x) ~= 'nil'`
                    let type_name = match &**other {
                        Expression::String(token) => string_text(token),
                        _ => None,
                    };
                    if let (Some(argument), Some(type_name)) =
                        (self.type_argument(tested), type_name)
                        && (type_name == "nil") != equal
                    {
                        self.collect_guards(argument, guards);
                    }
                }
            }
            Expression::Parentheses { expression, .. } => self.collect_guards(expression, guards),
            other => guards.extend(self.member_named(other)),
        }
    }

    /// `x` in `type(x)`, when `type` is the global function.
    fn type_argument<'e>(&self, expression: &'e Expression) -> Option<&'e Expression> {
        let Expression::FunctionCall(call) = expression else {
            return None;
        };
        let Prefix::Name(function) = call.prefix() else {
            return None;
        };
        let mut suffixes = call.suffixes();
        let (Some(Suffix::Call(Call::AnonymousCall(arguments))), None) =
            (suffixes.next(), suffixes.next())
        else {
            return None;
        };
        let is_type = identifier(function) == "type"
            && self.scopes.resolve("type", self.functions_depth()) == Binding::Global;
        match &**arguments {
            FunctionArgs::Parentheses { arguments, .. } if is_type && arguments.len() == 1 => {
                arguments.iter().next()
            }
            _ => None,
        }
    }

    /// The `library.member` an expression names: `table.unpack` itself, or
    /// a local that holds it.
    fn member_named(&self, expression: &Expression) -> Option<(String, String)> {
        match expression {
            Expression::Var(Var::Name(token)) => match self
                .scopes
                .resolve(identifier(token), self.functions_depth())
            {
                Binding::Local {
                    value: Value::Missing(missing),
                    ..
                } => Some((missing.library, missing.member)),
                _ => None,
            },
            Expression::Var(Var::Expression(variable)) => {
                let Prefix::Name(library) = variable.prefix() else {
                    return None;
                };
                let mut suffixes = variable.suffixes();
                let (Some(Suffix::Index(Index::Dot { name, .. })), None) =
                    (suffixes.next(), suffixes.next())
                else {
                    return None;
                };
                let library = identifier(library);
                let is_global =
                    self.scopes.resolve(library, self.functions_depth()) == Binding::Global;
                is_global.then(|| (library.to_string(), identifier(name).to_string()))
            }
            _ => None,
        }
    }

    /// `base.member = ...` or `function base.member()`.
    pub fn member_write(&mut self, base: &Value, member: &str, span: Span) {
        if let Some(global) = self.sandbox_table(base) {
            self.facts.diagnostics.push(span.error(
                Code::ReadonlyGlobal,
                format!(
                    "assignment to `{global}.{member}` changes the read-only `{global}` table: Redis fails with \"Attempt to modify a readonly table\""
                ),
                "keep your own values in a local table: `local M = {}`",
            ));
        }
    }

    /// `setmetatable(base, …)` or `rawset(base, …)`, by `function`.
    pub fn table_write(&mut self, function: &str, base: &Value, span: Span) {
        if let Some(global) = self.sandbox_table(base) {
            self.facts.diagnostics.push(span.error(
                Code::ReadonlyGlobal,
                format!(
                    "`{function}({global}, …)` changes the read-only `{global}` table: Redis fails with \"Attempt to modify a readonly table\""
                ),
                "keep your own values in a local table: `local M = {}`",
            ));
        }
    }

    /// `getmetatable(base)`: of the protected tables only `_G` has a
    /// metatable (the one refusing undefined globals), read-only too.
    pub fn metatable_of(&self, base: &Value) -> Value {
        match self.sandbox_table(base) {
            Some(global) if global == "_G" => Value::ProtectedMetatable(global),
            _ => Value::Unknown,
        }
    }

    /// How to name a table the sandbox protects (`_G`, `redis`, a library
    /// table, `getmetatable(_G)`), when `value` is one.
    fn sandbox_table(&self, value: &Value) -> Option<String> {
        if let Value::ProtectedMetatable(global) = value {
            return Some(format!("getmetatable({global})"));
        }
        let Value::Builtin {
            global,
            member: None,
        } = value
        else {
            return None;
        };
        self.context
            .environment
            .global(global)
            .is_some_and(|global| {
                matches!(
                    global.kind,
                    GlobalKind::GlobalTable | GlobalKind::Library(_)
                )
            })
            .then(|| global.clone())
    }
}

/// The text of a simple string literal (`'function'`), without escapes.
fn string_text(token: &TokenReference) -> Option<&str> {
    match token.token_type() {
        TokenType::StringLiteral { literal, .. } => Some(literal.as_str()),
        _ => None,
    }
}

/// A name the top level of a library reads that exists only when its
/// functions run.
fn not_while_loading(shown: &str, name: &str, span: Span) -> Diagnostic {
    span.error(
        Code::UnavailableGlobal,
        format!(
            "`{shown}` is not available while the library loads: FUNCTION LOAD fails with \"Script attempted to access nonexistent global variable '{name}'\""
        ),
        "the top level of a library only registers functions: it sees `redis.register_function`, `redis.log`, the `redis.LOG_*` levels and the server version; move this code into a function's callback",
    )
}
