//! Function libraries: `#!lua name=…` files that `FUNCTION LOAD` runs once
//! to register functions with `redis.register_function`, which `FCALL`
//! then calls by name.
//!
//! The analysis finds every registration at the top level of the file
//! (both forms: `redis.register_function('name', callback)` and
//! `redis.register_function{function_name = …, callback = …, flags = {…},
//! description = …}`), then walks the file once: the top level in the
//! load-time environment, each callback in the call-time one, with the
//! callback's first parameter standing for KEYS and its second for ARGV,
//! checked against the declaration of that function.

use std::collections::{HashMap, HashSet};

use full_moon::ast::{
    Ast, Expression, Field, FunctionArgs, FunctionBody, Parameter, Prefix, Stmt, Suffix, Var,
};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};

use crate::domain::library::LibrarySignature;
use crate::domain::signature::Signature;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::shebang::{self, ScriptFlags};
use crate::source::span::{SourceMap, Span};
use crate::source::suggest;
use crate::source::text::quoted_list;
use crate::source::tokens::{identifier, string_literal};

/// What the walk needs to know about the library before it starts.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub registrations: Vec<Registration>,
    /// Callback bodies (by the byte offset of their `(`) and the
    /// registrations that use them.
    pub callbacks: HashMap<usize, Vec<usize>>,
    /// The byte offsets of the `redis.register_function` calls understood
    /// here; any other call of it is reported by the walk.
    pub register_calls: HashSet<usize>,
}

/// One registration found at the top level.
#[derive(Debug)]
pub(crate) struct Registration {
    pub name: String,
    pub span: Span,
    pub flags: ScriptFlags,
    pub description: Option<String>,
    /// How the callback names its keys and arguments (`keys`, `args`).
    pub tables: [String; 2],
    /// The declaration's signature, or one that accepts any use.
    pub signature: Signature,
    pub declaration: Option<usize>,
    /// The callback expression, in bytes of the source.
    pub callback: std::ops::Range<usize>,
}

/// The named arguments of the table form.
const TABLE_ARGUMENTS: [&str; 4] = ["function_name", "callback", "flags", "description"];

/// How a function name must look (FUNCTION LOAD's rule).
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || character == '_')
}

/// Reads the registrations at the top level of `ast`.
pub(crate) fn plan(
    ast: &Ast,
    map: &SourceMap<'_>,
    declaration: &LibrarySignature,
) -> (Plan, Vec<Diagnostic>) {
    let mut reader = Reader {
        map,
        functions: HashMap::new(),
        api_aliases: HashSet::new(),
        plan: Plan::default(),
        diagnostics: Vec::new(),
        declaration,
    };
    reader.statements(ast.nodes().stmts());
    (reader.plan, reader.diagnostics)
}

struct Reader<'a, 'm> {
    map: &'a SourceMap<'m>,
    /// Functions defined so far at the top level, by name: the callback a
    /// registration may name.
    functions: HashMap<String, &'a FunctionBody>,
    /// Top-level locals holding the `redis` (or `server`) table itself:
    /// `local lib = redis; lib.register_function(…)` registers too.
    api_aliases: HashSet<String>,
    plan: Plan,
    diagnostics: Vec<Diagnostic>,
    declaration: &'a LibrarySignature,
}

/// A callback as written in a registration.
struct Callback<'a> {
    body: &'a FunctionBody,
    /// The expression naming or defining it, in bytes of the source.
    written: std::ops::Range<usize>,
}

impl<'a> Reader<'a, '_> {
    fn statements(&mut self, statements: impl Iterator<Item = &'a Stmt>) {
        for statement in statements {
            match statement {
                Stmt::LocalFunction(function) => {
                    self.functions
                        .insert(identifier(function.name()).to_string(), function.body());
                }
                Stmt::LocalAssignment(local) => {
                    let values: Vec<&Expression> = local.expressions().iter().collect();
                    for (position, name) in local.names().iter().enumerate() {
                        let is_api = matches!(values.get(position), Some(Expression::Var(Var::Name(table))) if self.is_api(identifier(table)));
                        if is_api {
                            self.api_aliases.insert(identifier(name).to_string());
                        } else {
                            self.api_aliases.remove(identifier(name));
                        }
                        match values.get(position) {
                            Some(Expression::Function(function)) => {
                                self.functions
                                    .insert(identifier(name).to_string(), function.body());
                            }
                            _ => {
                                self.functions.remove(identifier(name));
                            }
                        }
                    }
                }
                Stmt::FunctionDeclaration(declaration) => {
                    let names: Vec<&TokenReference> = declaration.name().names().iter().collect();
                    if let ([only], None) = (names.as_slice(), declaration.name().method_name()) {
                        self.functions
                            .insert(identifier(only).to_string(), declaration.body());
                    }
                }
                Stmt::Do(block) => self.statements(block.block().stmts()),
                Stmt::FunctionCall(call) => self.registration(call),
                _ => {}
            }
        }
    }

    /// `redis.register_function(…)` (or `server.…`) as a statement.
    fn registration(&mut self, call: &'a full_moon::ast::FunctionCall) {
        let Prefix::Name(table) = call.prefix() else {
            return;
        };
        if !self.is_api(identifier(table)) {
            return;
        }
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let [
            Suffix::Index(full_moon::ast::Index::Dot { name: member, .. }),
            Suffix::Call(full_moon::ast::Call::AnonymousCall(arguments)),
        ] = suffixes.as_slice()
        else {
            return;
        };
        if identifier(member) != "register_function" {
            return;
        }
        let call_span = self.map.chain(call.prefix(), suffixes[1]);
        self.plan.register_calls.insert(call_span.offset);
        match &**arguments {
            FunctionArgs::Parentheses { arguments, .. } => {
                let arguments: Vec<&Expression> = arguments.iter().collect();
                match arguments.as_slice() {
                    [name, callback] => self.positional(name, callback),
                    [Expression::TableConstructor(table)] => self.named(table, call_span),
                    [other] => self.diagnostics.push(self.map.expression(other).error(
                        Code::RegisterFunction,
                        "`redis.register_function` with one argument takes a table of named arguments: FUNCTION LOAD fails with \"calling redis.register_function with a single argument is only applicable to Lua table\"",
                        "write `redis.register_function{function_name = 'name', callback = function(keys, args) … end}`",
                    )),
                    _ => self.diagnostics.push(wrong_count(call_span)),
                }
            }
            FunctionArgs::TableConstructor(table) => self.named(table, call_span),
            _ => self.diagnostics.push(wrong_count(call_span)),
        }
    }

    fn is_api(&self, name: &str) -> bool {
        matches!(name, "redis" | "server") || self.api_aliases.contains(name)
    }

    fn positional(&mut self, name: &'a Expression, callback: &'a Expression) {
        let name = self.function_name(
            name,
            "first argument to redis.register_function must be a string",
        );
        let callback = self.callback(
            callback,
            "second argument to redis.register_function must be a function",
        );
        if let (Some((name, span)), Some(callback)) = (name, callback) {
            self.add(name, span, callback, ScriptFlags::default(), None);
        }
    }

    fn named(&mut self, table: &'a full_moon::ast::TableConstructor, call_span: Span) {
        let mut name = None;
        let mut callback = None;
        let mut flags = ScriptFlags::default();
        let mut description = None;
        let mut seen = (false, false);
        for field in table.fields() {
            let Field::NameKey { key, value, .. } = field else {
                let span = match field {
                    Field::NoKey(expression) => self.map.expression(expression),
                    _ => call_span,
                };
                self.diagnostics.push(span.error(
                    Code::RegisterFunction,
                    "the table given to `redis.register_function` takes named arguments only: FUNCTION LOAD fails with \"named argument key given to redis.register_function is not a string\"",
                    "name each argument: `function_name = …`, `callback = …`, `flags = {…}`, `description = …`",
                ));
                continue;
            };
            // FUNCTION LOAD reads the argument names in any case.
            match identifier(key).to_ascii_lowercase().as_str() {
                "function_name" => {
                    seen.0 = true;
                    name = self.function_name(
                        value,
                        "function_name argument given to redis.register_function must be a string",
                    );
                }
                "callback" => {
                    seen.1 = true;
                    callback = self.callback(
                        value,
                        "callback argument given to redis.register_function must be a function",
                    );
                }
                "flags" => flags = self.flags(value),
                "description" => {
                    description = match &**value {
                        Expression::String(token) => Some(string_literal(self.map, token)),
                        other => {
                            if let Some(kind) =
                                literal_kind(other).filter(|kind| *kind != "a number")
                            {
                                self.diagnostics.push(self.map.expression(other).error(
                                    Code::RegisterFunction,
                                    format!("the description is {kind}: FUNCTION LOAD fails with \"description argument given to redis.register_function must be a string\""),
                                    "describe the function in a string: `description = 'reads the counter'`",
                                ));
                            }
                            None
                        }
                    }
                }
                other => {
                    let hint = match suggest::closest(other, TABLE_ARGUMENTS) {
                        Some(near) => format!("did you mean `{near}`?"),
                        None => format!("the arguments are {}", quoted_list(&TABLE_ARGUMENTS)),
                    };
                    self.diagnostics.push(self.map.token(key).error(
                        Code::RegisterFunction,
                        format!(
                            "unknown argument `{other}` given to `redis.register_function`: FUNCTION LOAD fails with \"unknown argument given to redis.register_function\""
                        ),
                        hint,
                    ));
                }
            }
        }
        for (present, argument, example) in [
            (seen.0, "function_name", "function_name = 'name'"),
            (seen.1, "callback", "callback = function(keys, args) … end"),
        ] {
            if !present {
                self.diagnostics.push(call_span.error(
                    Code::RegisterFunction,
                    format!(
                        "`redis.register_function` is missing `{argument}`: FUNCTION LOAD fails with \"redis.register_function must get a {} argument\"",
                        if argument == "callback" { "callback" } else { "function name" }
                    ),
                    format!("add `{example}` to the table"),
                ));
            }
        }
        if let (Some((name, span)), Some(callback)) = (name, callback) {
            self.add(name, span, callback, flags, description);
        }
    }

    /// `refusal`: what FUNCTION LOAD answers a name that is no string.
    fn function_name(&mut self, expression: &Expression, refusal: &str) -> Option<(String, Span)> {
        let span = self.map.expression(expression);
        if let Some(kind) =
            literal_kind(expression).filter(|kind| !matches!(*kind, "a string" | "a number"))
        {
            self.diagnostics.push(span.error(
                Code::RegisterFunction,
                format!("the function name is {kind}: FUNCTION LOAD fails with \"{refusal}\""),
                "write the name literally: `redis.register_function('name', …)`",
            ));
            return None;
        }
        let Expression::String(token) = expression else {
            self.diagnostics.push(span.error(
                Code::UncheckedRegistration,
                "the function name is not a string literal, so it cannot be checked against the declarations",
                "write the name literally: `redis.register_function('name', …)`",
            ));
            return None;
        };
        let name = string_literal(self.map, token);
        if !is_valid_name(&name) {
            self.diagnostics.push(span.error(
                Code::RegisterFunction,
                format!(
                    "`{name}` is not a valid function name: FUNCTION LOAD fails with \"Function names can only contain letters, numbers, or underscores(_) and must be at least one character long\""
                ),
                "use letters, digits and `_` only, e.g. `fixed_window_allow`",
            ));
            return None;
        }
        Some((name, span))
    }

    /// `refusal`: what FUNCTION LOAD answers a callback that is no function.
    fn callback(&mut self, expression: &'a Expression, refusal: &str) -> Option<Callback<'a>> {
        let start = crate::source::span::expression_start(expression).map_or(0, |at| at.bytes());
        let end = crate::source::span::expression_end(expression).map_or(0, |at| at.bytes());
        let written = start..end;
        match expression {
            Expression::Function(function) => Some(Callback {
                body: function.body(),
                written,
            }),
            Expression::Var(Var::Name(token)) => match self.functions.get(identifier(token)) {
                Some(body) => Some(Callback { body, written }),
                None => {
                    let name = identifier(token);
                    self.diagnostics.push(self.map.token(token).error(
                        Code::UncheckedRegistration,
                        format!(
                            "`{name}` is not a function defined above in this file, so the callback cannot be checked"
                        ),
                        format!(
                            "define it before the registration (`local function {name}(keys, args) … end`), or write the callback inline"
                        ),
                    ));
                    None
                }
            },
            other => {
                let diagnostic = match literal_kind(other) {
                    Some(kind) => self.map.expression(other).error(
                        Code::RegisterFunction,
                        format!("the callback is {kind}: FUNCTION LOAD fails with \"{refusal}\""),
                        "write `function(keys, args) … end`, or the name of a `local function` defined above",
                    ),
                    None => self.map.expression(other).error(
                        Code::UncheckedRegistration,
                        "the callback is not a function written in this file, so it cannot be checked",
                        "write `function(keys, args) … end`, or the name of a `local function` defined above",
                    ),
                };
                self.diagnostics.push(diagnostic);
                None
            }
        }
    }

    fn flags(&mut self, expression: &Expression) -> ScriptFlags {
        let mut flags = ScriptFlags::default();
        let Expression::TableConstructor(table) = expression else {
            if let Some(kind) = literal_kind(expression) {
                self.diagnostics.push(self.map.expression(expression).error(
                    Code::RegisterFunction,
                    format!("`flags` is {kind}: FUNCTION LOAD fails with \"flags argument to redis.register_function must be a table representing function flags\""),
                    "list the flags in a table: `flags = {'no-writes'}`",
                ));
                return flags;
            }
            self.diagnostics.push(self.map.expression(expression).error(
                Code::UncheckedRegistration,
                "`flags` is not a table of literal flags, so the flags cannot be checked (FUNCTION LOAD needs a table)",
                "write the flags literally: `flags = {'no-writes'}`",
            ));
            return flags;
        };
        for field in table.fields() {
            let Field::NoKey(Expression::String(token)) = field else {
                let span = match field {
                    Field::NoKey(expression) => self.map.expression(expression),
                    _ => self
                        .map
                        .tokens(table.braces().tokens().0, table.braces().tokens().1),
                };
                let literal = match field {
                    Field::NoKey(expression) => literal_kind(expression),
                    _ => None,
                };
                if let Some(kind) = literal {
                    self.diagnostics.push(span.error(
                        Code::RegisterFunction,
                        format!(
                            "this flag is {kind}: FUNCTION LOAD fails with \"unknown flag given\""
                        ),
                        format!("the flags are {}", quoted_list(shebang::FLAGS)),
                    ));
                    continue;
                }
                self.diagnostics.push(span.error(
                    Code::UncheckedRegistration,
                    "each flag must be a string literal, so that it can be checked",
                    format!("the flags are {}", quoted_list(shebang::FLAGS)),
                ));
                continue;
            };
            let flag = string_literal(self.map, token);
            if !flags.set(&flag) {
                let span = self.map.token(token);
                let hint = match suggest::closest(&flag, shebang::FLAGS.iter().copied()) {
                    Some(near) => format!(
                        "did you mean `{near}`? the flags are {}",
                        quoted_list(shebang::FLAGS)
                    ),
                    None => format!("the flags are {}", quoted_list(shebang::FLAGS)),
                };
                self.diagnostics.push(span.error(
                    Code::RegisterFunction,
                    format!("unknown function flag `{flag}`: FUNCTION LOAD fails with \"unknown flag given\""),
                    hint,
                ));
            }
        }
        flags
    }

    fn add(
        &mut self,
        name: String,
        span: Span,
        callback: Callback<'a>,
        flags: ScriptFlags,
        description: Option<String>,
    ) {
        if let Some(first) = self.plan.registrations.iter().find(|r| r.name == name) {
            self.diagnostics.push(span.error(
                Code::RegisterFunction,
                format!(
                    "`{name}` is registered twice (first on line {}): FUNCTION LOAD fails with \"Function already exists in the library\"",
                    first.span.line
                ),
                "give each function its own name",
            ));
            return;
        }
        let declaration = self
            .declaration
            .functions
            .iter()
            .position(|declared| declared.name == name);
        let signature = match declaration.and_then(|index| self.declaration.functions.get(index)) {
            Some(declared) => Signature {
                target: self.declaration.library.target.clone(),
                declared_commands: self.declaration.library.declared_commands.clone(),
                ..declared.signature.clone()
            },
            // Not declared: its body is checked, its keys and arguments
            // are whatever it reads.
            None => Signature {
                variadic_keys: true,
                variadic_args: true,
                allow_unused: true,
                ..self.declaration.library.clone()
            },
        };
        let tables = parameter_names(callback.body);
        let offset = callback_offset(callback.body);
        let index = self.plan.registrations.len();
        self.plan.callbacks.entry(offset).or_default().push(index);
        self.plan.registrations.push(Registration {
            name,
            span,
            flags,
            description,
            tables,
            signature,
            declaration,
            callback: callback.written,
        });
    }
}

/// The identity of a callback body: the byte offset of its `(`.
/// What a literal is (`a table`, `nil`, …); `None` for any other
/// expression, whose value is known only at run time.
fn literal_kind(expression: &Expression) -> Option<&'static str> {
    match expression {
        Expression::String(_) => Some("a string"),
        Expression::Number(_) => Some("a number"),
        Expression::TableConstructor(_) => Some("a table"),
        Expression::Function(_) => Some("a function"),
        Expression::Symbol(symbol) => match symbol.token_type() {
            TokenType::Symbol {
                symbol: Symbol::True | Symbol::False,
            } => Some("a boolean"),
            TokenType::Symbol {
                symbol: Symbol::Nil,
            } => Some("nil"),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn callback_offset(body: &FunctionBody) -> usize {
    body.parameters_parentheses()
        .tokens()
        .0
        .token()
        .start_position()
        .bytes()
}

/// How a callback names its two parameters.
fn parameter_names(body: &FunctionBody) -> [String; 2] {
    let mut names = body.parameters().iter().map(|parameter| match parameter {
        Parameter::Name(name) => identifier(name).to_string(),
        _ => String::new(),
    });
    let keys = names.next().filter(|name| !name.is_empty());
    let args = names.next().filter(|name| !name.is_empty());
    [
        keys.unwrap_or_else(|| "keys".to_string()),
        args.unwrap_or_else(|| "args".to_string()),
    ]
}

fn wrong_count(span: Span) -> Diagnostic {
    span.error(
        Code::RegisterFunction,
        "wrong number of arguments to `redis.register_function`: FUNCTION LOAD fails with \"wrong number of arguments to redis.register_function\"",
        "give a name and a callback, `redis.register_function('name', function(keys, args) … end)`, or one table of named arguments",
    )
}
