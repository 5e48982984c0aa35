//! The walk over the syntax tree: scopes, statements and expressions. The
//! checks themselves live in `globals`, `params`, `calls` and `returns`.

use std::collections::HashSet;

use full_moon::ast::{
    Assignment, Ast, BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody,
    FunctionCall, FunctionDeclaration, GenericFor, If, Index, LastStmt, LocalAssignment,
    NumericFor, Parameter, Prefix, Repeat, Stmt, Suffix, TableConstructor, UnOp, Var, While,
};
use full_moon::tokenizer::{StringLiteralQuoteType, Symbol, TokenReference, TokenType};

use super::command_replies::Resp;
use super::derived_keys::{KeyPrefixes, KeyUse, ParameterId};
use super::diagnostic::Diagnostic;
use super::error_codes::error_code;
use super::findings::comparisons::Side;
use super::findings::loops::Forever;
use super::globals::{MissingMembers, MissingUse};
use super::header::Header;
use super::library::{self, Plan};
use super::params::ParamUsage;
use super::review::{LoopBound, LoopSite, Review};
use super::sandbox::Environment;
use super::scope::{Assignments, Binding, Scopes, Snapshot};
use super::shebang::ScriptFlags;
use super::span::{self, SourceMap, Span};
use super::syntax::MAX_NESTING;
use super::types::{Kinds, Type};
use super::value::{self, FunctionSummary, Reply, TableShape, Value};
use super::{ErrorCodes, ReturnShape, ReturnSite, Signature};

/// What the walk found.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub returns: Vec<ReturnSite>,
    /// A write command is reachable, or a command name is not a literal.
    pub may_write: bool,
    pub error_codes: ErrorCodes,
    /// The main chunk itself (outside any function) uses `...`.
    pub chunk_varargs: bool,
    pub review: Review,
    pub key_prefixes: KeyPrefixes,
}

/// Runs the analysis: a first walk finds locals that are assigned again
/// (their value is unknown everywhere), the second walk does the checks.
pub(crate) fn run(
    source: &str,
    ast: &Ast,
    signature: &Signature,
    flags: &ScriptFlags,
    header: &Header,
) -> Outcome {
    let map = SourceMap::new(source);
    let context = Context {
        map: &map,
        signature,
        flags,
        header,
        environment: Environment::Eval,
        tables: ["KEYS", "ARGV"],
        plan: None,
        resp: Resp::of_source(source),
    };
    walk_twice(context, ast).finish()
}

/// The first walk finds the locals assigned again, the second checks;
/// unless no answer of the first depended on what it did not know yet.
fn walk_twice<'a>(context: Context<'a>, ast: &Ast) -> Analyzer<'a> {
    let (survey, assignments) = survey(context, ast);
    if survey.scopes.agrees_with(&assignments) {
        return survey;
    }
    walk_knowing(context, ast, assignments)
}

/// A walk that knows no assignment yet, and the assignments it found.
fn survey<'a>(context: Context<'a>, ast: &Ast) -> (Analyzer<'a>, Assignments) {
    let mut survey = Analyzer::new(context, Assignments::default());
    survey.walk_chunk(ast);
    let assignments = std::mem::take(&mut survey.assignments_found);
    (survey, assignments)
}

fn walk_knowing<'a>(context: Context<'a>, ast: &Ast, assignments: Assignments) -> Analyzer<'a> {
    let mut analyzer = Analyzer::new(context, assignments);
    analyzer.walk_chunk(ast);
    analyzer
}

/// What the walk of a library found: the diagnostics of the whole file and
/// what each registered function's callback does.
#[derive(Debug, Default)]
pub(crate) struct LibraryOutcome {
    pub diagnostics: Vec<Diagnostic>,
    /// By registration, in the order of the plan.
    pub functions: Vec<FunctionOutcome>,
}

/// What one callback does.
#[derive(Debug, Default, Clone)]
pub(crate) struct FunctionOutcome {
    pub returns: Vec<ReturnSite>,
    pub may_write: bool,
    pub error_codes: ErrorCodes,
    pub key_prefixes: KeyPrefixes,
}

/// Walks a library: its top level as `FUNCTION LOAD` runs it, each
/// registered callback as `FCALL` runs it.
pub(crate) fn run_library(
    source: &str,
    ast: &Ast,
    plan: &Plan,
    library: &Signature,
    header: &Header,
) -> LibraryOutcome {
    let map = SourceMap::new(source);
    let flags = ScriptFlags::default();
    let context = Context {
        map: &map,
        signature: library,
        flags: &flags,
        header,
        environment: Environment::LibraryLoad,
        tables: ["KEYS", "ARGV"],
        plan: Some(plan),
        resp: Resp::of_source(source),
    };
    let mut analyzer = walk_twice(context, ast);
    let missing = std::mem::take(&mut analyzer.missing);
    analyzer.diagnostics.extend(missing.into_notes());
    let mut functions = analyzer.function_outcomes;
    functions.resize_with(plan.registrations.len(), FunctionOutcome::default);
    // Code outside the callbacks (their helpers) runs when any of them
    // calls it: each callback can end with the replies it builds.
    for function in &mut functions {
        function.error_codes.merge(&analyzer.error_codes);
    }
    LibraryOutcome {
        diagnostics: analyzer.diagnostics,
        functions,
    }
}

/// Read-only inputs of one analysis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub map: &'a SourceMap<'a>,
    pub signature: &'a Signature,
    pub flags: &'a ScriptFlags,
    pub header: &'a Header,
    /// Which globals the code sees.
    pub environment: Environment,
    /// What the code calls its keys and arguments: `KEYS` and `ARGV`, or a
    /// function's parameters (`keys`, `args`).
    pub tables: [&'a str; 2],
    /// The registrations of a library; `None` for a script.
    pub plan: Option<&'a Plan>,
    /// The protocol its `redis.call` replies arrive in.
    pub resp: Resp,
}

/// The call whose arguments may hold a function that is not simply run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Guard {
    /// `pcall`/`xpcall`: the function runs protected.
    Pcall,
    /// `setmetatable`: the function is a metamethod.
    Metamethod,
}

/// Per-function state: whether `...` is allowed, and the types its
/// `return`s give (its calls' summary).
#[derive(Debug)]
struct Function {
    /// The number of this walk of its body, which names its parameters.
    id: u32,
    vararg: bool,
    returns: Option<Type>,
    /// What its `return`s give first, as far as key provenance goes:
    /// `None` before the first `return`, `Some(None)` once one gives
    /// something other than a key.
    returned_key: Option<Option<Value>>,
    /// Keys built from its parameters, checked at its calls.
    key_uses: Vec<KeyUse>,
}

impl Function {
    fn new(id: u32) -> Self {
        Self {
            id,
            vararg: false,
            returns: None,
            returned_key: None,
            key_uses: Vec::new(),
        }
    }
}

/// A loop being walked: the values at each way out of it found in the
/// current pass (a `break`, a `repeat`'s condition holding).
#[derive(Debug, Default)]
struct Loop {
    exits: Vec<Snapshot>,
}

/// Where a loop ends, besides its `break`s.
#[derive(Clone, Copy)]
enum Exit<'e> {
    /// At its head: a `for` when its range is done, a `while` where its
    /// condition (given) is false.
    AtHead(Option<&'e Expression>),
    /// Inside a pass, which records it: a `repeat` where its condition
    /// holds.
    InPass,
}

/// Loops nested deeper than this settle after one pass: every value their
/// body changes becomes unknown, so that nested loops cost a bounded number
/// of passes.
const PRECISE_LOOP_DEPTH: usize = 3;

/// Passes over a loop's body before the values it changes are made
/// unknown.
const LOOP_PASSES: usize = 3;

/// One evaluated call argument or table element.
#[derive(Debug)]
pub(crate) struct Operand {
    pub value: Value,
    pub span: Span,
    /// A trailing call or `...` whose number of values is unknown.
    pub many: bool,
}

#[derive(Debug)]
pub(crate) struct Analyzer<'a> {
    pub context: Context<'a>,
    pub scopes: Scopes,
    pub diagnostics: Vec<Diagnostic>,
    pub returns: Vec<ReturnSite>,
    pub may_write: bool,
    pub error_codes: ErrorCodes,
    pub chunk_varargs: bool,
    /// The facts of the script for its review (`--report`).
    pub review: Review,
    /// The prefixes keys are built from, which each call checks.
    pub key_prefixes: KeyPrefixes,
    pub params: ParamUsage,
    pub missing: MissingMembers,
    /// Locals assigned after their declaration, and which of them from a
    /// closure (collected by the survey).
    pub assignments_found: Assignments,
    /// Set by a call to `error`: the statement never completes.
    pub raised: bool,
    /// Set by each call: it may return any number of values.
    pub last_call_many: bool,
    /// Globals the script tried to create: already reported, so reading
    /// them later is not reported again.
    pub refused_globals: HashSet<String>,
    /// Inside the arguments of a `pcall`/`xpcall` or `setmetatable`: the
    /// number of functions around that call, and which call. A function
    /// written among a `pcall`'s arguments runs protected (what it raises,
    /// the call catches); one among `setmetatable`'s is a metamethod, which
    /// runs only when the table is used that way.
    pub protected_from: Option<(usize, Guard)>,
    /// In a library: what each registered callback does, by registration.
    function_outcomes: Vec<FunctionOutcome>,
    /// How many functions enclose the code whose `return` is the reply:
    /// none for a script, the callback for a library function.
    reply_depth: usize,
    functions: Vec<Function>,
    /// The number the next walk of a function body gets.
    next_function_id: u32,
    /// The loops around the code being walked, innermost last.
    loops: Vec<Loop>,
    depth: usize,
    too_deep: bool,
}

impl<'a> Analyzer<'a> {
    fn new(context: Context<'a>, assignments: Assignments) -> Self {
        Self {
            context,
            scopes: Scopes::new(assignments),
            diagnostics: Vec::new(),
            returns: Vec::new(),
            may_write: false,
            error_codes: ErrorCodes::default(),
            chunk_varargs: false,
            review: Review::default(),
            params: ParamUsage::default(),
            missing: MissingMembers::default(),
            refused_globals: HashSet::new(),
            protected_from: None,
            key_prefixes: KeyPrefixes::default(),
            function_outcomes: Vec::new(),
            reply_depth: 0,
            assignments_found: Assignments::default(),
            raised: false,
            last_call_many: false,
            functions: Vec::new(),
            next_function_id: 0,
            loops: Vec::new(),
            depth: 0,
            too_deep: false,
        }
    }

    /// The innermost function returns `returned` first.
    pub fn function_returned(&mut self, returned: &Value) {
        if let Some(function) = self.functions.last_mut() {
            let ty = returned.ty();
            function.returns = Some(match function.returns.take() {
                Some(returns) => returns.join(&ty),
                None => ty,
            });
            let key = returned.derivation().map(|_| returned.clone());
            function.returned_key = Some(match function.returned_key.take() {
                None => key,
                Some(earlier) => earlier.zip(key).map(|(earlier, key)| earlier.join(&key)),
            });
        }
    }

    /// Records that a parameter's value (or a key built from it) is a key
    /// argument: its function's calls check what they pass. Nothing is
    /// recorded when that function is not being walked.
    pub fn defer_key_use(&mut self, key_use: KeyUse) {
        let function = self
            .functions
            .iter_mut()
            .rev()
            .find(|function| function.id == key_use.parameter.function);
        if let Some(function) = function
            && !function.key_uses.contains(&key_use)
        {
            function.key_uses.push(key_use);
        }
    }

    /// How many functions enclose the code being walked (0 in the main
    /// chunk).
    pub fn functions_depth(&self) -> usize {
        self.functions.len()
    }

    /// Declares a local of the function being walked.
    /// Records the loop opened by `keyword` for the review: endless, one
    /// pass per element of a read that grows with the data (`driven`, its
    /// range or iterated value), or bounded as written at `written`.
    fn record_loop(
        &mut self,
        keyword: &TokenReference,
        kind: &'static str,
        endless: bool,
        driven: Option<&Value>,
        written: Span,
    ) {
        let at = self.span(keyword);
        let growing = driven.and_then(|value| value.ty().unbounded);
        let bound = match (endless, growing) {
            (true, _) => LoopBound::Never,
            (false, Some(read)) => LoopBound::GrowingRead {
                command: read.command.clone(),
                line: read.span.line,
            },
            (false, None) => LoopBound::Written(self.quote(written, "its condition")),
        };
        self.review.loop_site(LoopSite {
            line: at.line,
            column: at.column,
            kind,
            bound,
        });
    }

    /// The code being walked runs in a loop of its function.
    pub(crate) fn in_loop(&self) -> bool {
        !self.loops.is_empty()
    }

    fn declare(&mut self, name: &str, declared_at: usize, value: Value) {
        let depth = self.functions_depth();
        self.scopes.declare(name, declared_at, depth, value);
    }

    fn finish(mut self) -> Outcome {
        let findings = self.param_findings();
        self.diagnostics.extend(findings);
        let missing = std::mem::take(&mut self.missing);
        self.diagnostics.extend(missing.into_notes());
        sort_returns(&mut self.returns);
        self.review.finish();
        Outcome {
            diagnostics: self.diagnostics,
            returns: self.returns,
            may_write: self.may_write,
            error_codes: self.error_codes,
            chunk_varargs: self.chunk_varargs,
            review: self.review,
            key_prefixes: self.key_prefixes,
        }
    }

    pub fn span(&self, token: &TokenReference) -> Span {
        self.context.map.token(token)
    }

    /// The quoted source under `span`, or `fallback` when it is too long.
    pub fn quote(&self, span: Span, fallback: &str) -> String {
        self.context
            .map
            .snippet(span)
            .unwrap_or_else(|| fallback.to_string())
    }

    /// True where a `return` is the reply: the script's main chunk, or
    /// the body of a library function's callback.
    pub fn in_main_chunk(&self) -> bool {
        self.functions.len() == self.reply_depth
    }

    /// Guards the recursion: past the limit the subtree is skipped. The
    /// syntax pre-scan keeps real input far below it.
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth <= MAX_NESTING * 2 {
            return true;
        }
        if !self.too_deep {
            self.too_deep = true;
            self.diagnostics.push(Span::TOP.error(
                "the script nests blocks, brackets and operators more than 200 levels deep",
                "Lua 5.1 refuses chunks with more than 200 syntax levels; split the expression into locals",
            ));
        }
        false
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ----- statements -------------------------------------------------

    fn walk_chunk(&mut self, ast: &Ast) {
        let terminates = self.walk_block(ast.nodes());
        // A library's top level registers functions: it is no reply.
        if !terminates && self.context.plan.is_none() {
            let span = self.end_of_chunk(ast);
            self.returns.push(ReturnSite {
                line: span.line,
                column: span.column,
                width: span.width,
                shape: ReturnShape::FallsOffEnd,
            });
        }
    }

    /// The last line with code on it, for "falls off the end".
    fn end_of_chunk(&self, ast: &Ast) -> Span {
        let map = self.context.map;
        let eof_line = ast.eof().token().start_position().line();
        let line = (1..=eof_line)
            .rev()
            .find(|line| !map.line_text(*line).trim().is_empty())
            .unwrap_or(1);
        let text = map.line_text(line);
        let indent = text.chars().take_while(|c| c.is_whitespace()).count();
        Span {
            line,
            column: indent + 1,
            width: text.trim().chars().count().max(1),
            offset: 0,
        }
    }

    /// Walks the statements of a block (the caller opens its scope).
    /// Returns true when the block never completes normally.
    fn walk_block(&mut self, block: &Block) -> bool {
        let mut terminates = false;
        for stmt in block.stmts() {
            terminates |= self.walk_stmt(stmt);
        }
        match block.last_stmt() {
            Some(LastStmt::Return(statement)) => {
                self.walk_return(statement);
                terminates = true;
            }
            Some(LastStmt::Break(_)) => {
                let here = self.scopes.snapshot();
                if let Some(innermost) = self.loops.last_mut() {
                    innermost.exits.push(here);
                }
                terminates = true;
            }
            _ => {}
        }
        terminates
    }

    fn scoped_block(&mut self, block: &Block) -> bool {
        self.scopes.push();
        let terminates = self.walk_block(block);
        self.scopes.pop();
        terminates
    }

    fn walk_stmt(&mut self, stmt: &Stmt) -> bool {
        if !self.enter() {
            self.leave();
            return false;
        }
        let terminates = match stmt {
            Stmt::Assignment(assignment) => {
                self.walk_assignment(assignment);
                false
            }
            Stmt::Do(block) => self.scoped_block(block.block()),
            Stmt::FunctionCall(call) => {
                self.raised = false;
                self.eval_function_call(call);
                std::mem::take(&mut self.raised)
            }
            Stmt::FunctionDeclaration(declaration) => {
                self.walk_function_declaration(declaration);
                false
            }
            Stmt::GenericFor(generic_for) => {
                self.walk_generic_for(generic_for);
                false
            }
            Stmt::If(if_statement) => self.walk_if(if_statement),
            Stmt::LocalAssignment(local) => {
                self.walk_local_assignment(local);
                false
            }
            Stmt::LocalFunction(function) => {
                let name = function.name();
                self.declare(identifier(name), offset(name), Value::Function(None));
                let summary = self.walk_function_body(function.body(), None);
                self.scopes
                    .assign(offset(name), Value::Function(summary.map(std::rc::Rc::new)));
                false
            }
            Stmt::NumericFor(numeric_for) => {
                self.walk_numeric_for(numeric_for);
                false
            }
            Stmt::Repeat(repeat) => self.walk_repeat(repeat),
            Stmt::While(while_loop) => self.walk_while(while_loop),
            _ => false,
        };
        self.leave();
        terminates
    }

    fn walk_assignment(&mut self, assignment: &Assignment) {
        let operands = self.eval_list(assignment.expressions().iter(), true);
        let trailing_many = operands.last().is_some_and(|operand| operand.many);
        for (position, variable) in assignment.variables().iter().enumerate() {
            let value = match operands.get(position) {
                Some(operand) => operand.value.clone(),
                None if trailing_many => Value::Unknown,
                None => Value::Nil,
            };
            let value = match assignment.expressions().iter().nth(position) {
                Some(expression) => self.with_length_link(expression, value),
                None => value,
            };
            self.assign_to(variable, &value);
        }
    }

    fn assign_to(&mut self, variable: &Var, value: &Value) {
        match variable {
            Var::Name(token) => self.assign_name(token, false, value.clone()),
            Var::Expression(target) => {
                let suffixes: Vec<&Suffix> = target.suffixes().collect();
                let Some((last, path)) = suffixes.split_last() else {
                    return;
                };
                let base = self.eval_chain(target.prefix(), path);
                let span = self.context.map.chain(target.prefix(), last);
                match last {
                    Suffix::Index(Index::Dot { name, .. }) => {
                        self.field_write(&base, identifier(name), span, value);
                    }
                    Suffix::Index(Index::Brackets { expression, .. }) => {
                        match self.value_of(expression) {
                            Value::Str(member) => self.field_write(&base, &member, span, value),
                            key => {
                                self.error_codes.computed_field(&key, value);
                                // `t[#t + 1] = v`: an element of a local table.
                                if let (Prefix::Name(table), []) = (target.prefix(), path) {
                                    self.table_written(table);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// `base.member = value`: an `err` string turns a table into an error
    /// reply.
    fn field_write(&mut self, base: &Value, member: &str, span: Span, value: &Value) {
        if member == "err" {
            self.error_codes
                .err_field(value, span, &mut self.diagnostics);
        }
        self.member_write(base, member, span);
    }

    /// `name = value` or `function name() end`.
    fn assign_name(&mut self, token: &TokenReference, is_function: bool, value: Value) {
        let name = identifier(token);
        match self.scopes.resolve(name, self.functions_depth()) {
            Binding::Local {
                declared_at, depth, ..
            } => {
                self.assignments_found.reassigned.insert(declared_at);
                if depth != self.functions_depth() {
                    self.assignments_found.from_closures.insert(declared_at);
                }
                self.scopes.assign(declared_at, value);
            }
            Binding::Global => {
                let span = self.span(token);
                self.global_write(name, span, is_function);
            }
        }
    }

    fn walk_local_assignment(&mut self, local: &LocalAssignment) {
        let operands = self.eval_list(local.expressions().iter(), true);
        let names: Vec<&TokenReference> = local.names().iter().collect();
        let trailing_many = operands.last().is_some_and(|operand| operand.many);
        for (position, name) in names.into_iter().enumerate() {
            let value = match operands.get(position) {
                Some(operand) => operand.value.clone(),
                None if trailing_many => Value::Unknown,
                None => Value::Nil,
            };
            let value = match local.expressions().iter().nth(position) {
                Some(expression) => self.with_length_link(expression, value),
                None => value,
            };
            self.declare(identifier(name), offset(name), value);
        }
    }

    fn walk_function_declaration(&mut self, declaration: &FunctionDeclaration) {
        let function_name = declaration.name();
        let names: Vec<&TokenReference> = function_name.names().iter().collect();
        let method = function_name.method_name();
        match (names.split_first(), method) {
            (Some((only, [])), None) => {
                let summary = self.walk_function_body(declaration.body(), None);
                self.assign_name(only, true, Value::Function(summary.map(std::rc::Rc::new)));
                return;
            }
            (Some((first, rest)), _) => {
                let next = rest.first().map(|name| identifier(name));
                let mut base = self.read_name(first, next);
                let members: Vec<&TokenReference> = rest.iter().copied().chain(method).collect();
                if let Some((target, path)) = members.split_last() {
                    for member in path {
                        let span = self.span(member);
                        base = self.index_member(base, identifier(member), span);
                    }
                    let span = self.context.map.tokens(first, target);
                    self.member_write(&base, identifier(target), span);
                }
            }
            (None, _) => {}
        }
        self.walk_function_body(declaration.body(), method);
    }

    /// Walks a function's body where it is defined (its parameters
    /// unknown), and returns the type of the first value its calls return
    /// (`None` for a library's registered callback, which has no caller in
    /// the file). The values of the enclosing function's locals are left
    /// as they were: the body runs later.
    fn walk_function_body(
        &mut self,
        body: &FunctionBody,
        method: Option<&TokenReference>,
    ) -> Option<FunctionSummary> {
        let plan = self.context.plan;
        if let Some(registrations) =
            plan.and_then(|plan| plan.callbacks.get(&library::callback_offset(body)))
        {
            for &registration in registrations {
                self.walk_callback(body, registration);
            }
            return None;
        }
        // Code in a library's own functions runs when its callbacks call it.
        let environment = self.context.environment;
        if plan.is_some() {
            self.context.environment = Environment::FunctionCall;
        }
        let outer = self.scopes.snapshot();
        let id = self.next_function_id;
        self.next_function_id = self.next_function_id.wrapping_add(1);
        self.functions.push(Function::new(id));
        self.scopes.push();
        if let Some(method) = method {
            self.declare("self", offset(method), Value::Unknown);
        }
        for (index, parameter) in body.parameters().iter().enumerate() {
            match parameter {
                Parameter::Name(name) => {
                    let parameter = Value::Parameter(ParameterId {
                        function: id,
                        index,
                    });
                    self.declare(identifier(name), offset(name), parameter);
                }
                Parameter::Ellipsis(_) => {
                    if let Some(function) = self.functions.last_mut() {
                        function.vararg = true;
                    }
                }
                _ => {}
            }
        }
        let terminates = self.walk_block(body.block());
        self.scopes.pop();
        let function = self.functions.pop();
        self.scopes.restore(&outer);
        self.context.environment = environment;
        let function = function?;
        let mut returns = function.returns;
        let mut returned_key = function.returned_key.flatten();
        if !terminates {
            let falls_off = Type::of(Kinds::NIL);
            returns = Some(returns.map_or(falls_off.clone(), |returns| returns.join(&falls_off)));
            returned_key = None;
        }
        Some(FunctionSummary {
            id,
            returns: returns?,
            returned_key,
            key_uses: function.key_uses,
        })
    }

    /// A registered function's callback: checked as `FCALL` runs it, its
    /// first parameter standing for KEYS and its second for ARGV, against
    /// the declaration of that function.
    fn walk_callback(&mut self, body: &FunctionBody, index: usize) {
        let Some(registration) = self
            .context
            .plan
            .and_then(|plan| plan.registrations.get(index))
        else {
            return;
        };
        let outer = self.context;
        self.context.signature = &registration.signature;
        self.context.flags = &registration.flags;
        self.context.environment = Environment::FunctionCall;
        self.context.tables = [&registration.tables[0], &registration.tables[1]];
        let outer_state = FunctionOutcome {
            returns: std::mem::take(&mut self.returns),
            may_write: std::mem::take(&mut self.may_write),
            error_codes: std::mem::take(&mut self.error_codes),
            key_prefixes: std::mem::take(&mut self.key_prefixes),
        };
        let outer_params = std::mem::take(&mut self.params);
        let outer_reply_depth = self.reply_depth;

        let outer_values = self.scopes.snapshot();
        let id = self.next_function_id;
        self.next_function_id = self.next_function_id.wrapping_add(1);
        self.functions.push(Function::new(id));
        self.reply_depth = self.functions.len();
        self.scopes.push();
        for (position, parameter) in body.parameters().iter().enumerate() {
            match parameter {
                Parameter::Name(name) => {
                    let value = match position {
                        0 => Value::Params(super::value::Param::Keys),
                        1 => Value::Params(super::value::Param::Argv),
                        _ => Value::Unknown,
                    };
                    self.declare(identifier(name), offset(name), value);
                }
                Parameter::Ellipsis(_) => {
                    if let Some(function) = self.functions.last_mut() {
                        function.vararg = true;
                    }
                }
                _ => {}
            }
        }
        if !self.walk_block(body.block()) {
            let end = self.span(body.end_token());
            self.returns.push(ReturnSite {
                line: end.line,
                column: end.column,
                width: end.width,
                shape: ReturnShape::FallsOffEnd,
            });
        }
        self.scopes.pop();
        self.functions.pop();
        self.scopes.restore(&outer_values);

        if registration.declaration.is_some() {
            for mut finding in self.param_findings() {
                // About the declaration: placed at the registration.
                finding.function = registration.declaration;
                finding.line = registration.span.line;
                finding.column = registration.span.column;
                finding.width = registration.span.width;
                self.diagnostics.push(finding);
            }
        }
        let mut returns = std::mem::replace(&mut self.returns, outer_state.returns);
        sort_returns(&mut returns);
        let outcome = FunctionOutcome {
            returns,
            may_write: std::mem::replace(&mut self.may_write, outer_state.may_write),
            error_codes: std::mem::replace(&mut self.error_codes, outer_state.error_codes),
            key_prefixes: std::mem::replace(&mut self.key_prefixes, outer_state.key_prefixes),
        };
        if self.function_outcomes.len() <= index {
            self.function_outcomes
                .resize_with(index + 1, FunctionOutcome::default);
        }
        if let Some(slot) = self.function_outcomes.get_mut(index) {
            *slot = outcome;
        }
        self.params = outer_params;
        self.reply_depth = outer_reply_depth;
        self.context = outer;
    }

    fn walk_if(&mut self, statement: &If) -> bool {
        let branches = std::iter::once((statement.condition(), statement.block())).chain(
            statement
                .else_if()
                .into_iter()
                .flatten()
                .map(|branch| (branch.condition(), branch.block())),
        );
        // Where each branch that completes ends; where the conditions
        // tested so far were all false.
        let mut ends = Vec::new();
        let mut all_terminate = true;
        for (condition, block) in branches {
            let (_, terminates, otherwise) = self.guarded_block(condition, block);
            if !terminates {
                ends.push(self.scopes.snapshot());
            }
            all_terminate &= terminates;
            self.scopes.restore(&otherwise);
        }
        let terminates = match statement.else_block() {
            Some(block) => {
                let terminates = self.scoped_block(block);
                if !terminates {
                    ends.push(self.scopes.snapshot());
                }
                terminates && all_terminate
            }
            None => {
                ends.push(self.scopes.snapshot());
                false
            }
        };
        if let Some(joined) = Snapshot::join_all(&ends) {
            self.scopes.restore(&joined);
        }
        terminates
    }

    fn walk_numeric_for(&mut self, numeric_for: &NumericFor) {
        let start = self.value_of(numeric_for.start());
        let end = self.value_of(numeric_for.end());
        let step = numeric_for.step().map(|step| self.value_of(step));
        let end_span = self.context.map.expression(numeric_for.end());
        // `math.huge` is a number the analysis does not fold.
        let end = match self
            .context
            .map
            .snippet(end_span)
            .map(|text| text.split_whitespace().collect::<String>())
            .as_deref()
        {
            Some("math.huge") => Value::Number(f64::INFINITY),
            Some("-math.huge") => Value::Number(f64::NEG_INFINITY),
            _ => end,
        };
        let forever = Forever::numeric_range(&start, &end, step.as_ref());
        self.check_unbounded_use(&end, "a loop runs once per element");
        // Integer bounds and step give integer indices.
        let integral = |value: &Value| value.ty().kinds.within(Kinds::INTEGER);
        let index = if integral(&start) && step.as_ref().is_none_or(integral) {
            // `for i = 1, #pairs, 2`: every index has the start's parity.
            let steps_even = step.as_ref().and_then(parity) == Some(true);
            let even = parity(&start).filter(|_| steps_even);
            Value::Typed(Type::integer_with_parity(even))
        } else {
            Value::ComputedNumber
        };
        let variable = numeric_for.index_variable();
        self.walk_loop(Exit::AtHead(None), |analyzer| {
            analyzer.scopes.push();
            analyzer.declare(identifier(variable), offset(variable), index.clone());
            let terminates = analyzer.walk_block(numeric_for.block());
            analyzer.scopes.pop();
            terminates
        });
        let endless = forever.is_some_and(|forever| {
            self.check_endless_loop(forever, numeric_for.for_token(), numeric_for.block())
        });
        let last = numeric_for.step().unwrap_or_else(|| numeric_for.end());
        let range = self.context.map.span_between(
            Some(numeric_for.index_variable().token().start_position()),
            span::expression_end(last),
        );
        self.record_loop(numeric_for.for_token(), "for", endless, Some(&end), range);
    }

    fn walk_generic_for(&mut self, generic_for: &GenericFor) {
        let operands = self.eval_list(generic_for.expressions().iter(), false);
        if let Some(iterated) = operands.first() {
            self.check_unbounded_use(&iterated.value, "a loop iterates it");
        }
        let iterated = match operands.first().map(|operand| &operand.value) {
            Some(Value::ParamIterator(param)) => Some(*param),
            _ => None,
        };
        self.walk_loop(Exit::AtHead(None), |analyzer| {
            analyzer.scopes.push();
            for (position, name) in generic_for.names().iter().enumerate() {
                let value = match (position, iterated) {
                    (0, Some(_)) => Value::Typed(Type::of(Kinds::INTEGER)),
                    (1, Some(param)) => param.element(),
                    _ => Value::Unknown,
                };
                analyzer.declare(identifier(name), offset(name), value);
            }
            let terminates = analyzer.walk_block(generic_for.block());
            analyzer.scopes.pop();
            terminates
        });
        let expressions = generic_for.expressions();
        let range = self.context.map.span_between(
            expressions.iter().next().and_then(span::expression_start),
            expressions.iter().last().and_then(span::expression_end),
        );
        let driven = operands.first().map(|operand| &operand.value);
        self.record_loop(generic_for.for_token(), "for … in", false, driven, range);
    }

    fn walk_repeat(&mut self, repeat: &Repeat) -> bool {
        let mut until = None;
        let terminates = self.walk_loop(Exit::InPass, |analyzer| {
            // The until-condition sees the body's locals: the loop ends
            // where it holds, and goes on where it does not.
            analyzer.scopes.push();
            let terminates = analyzer.walk_block(repeat.block());
            if !terminates {
                let value = analyzer.value_of(repeat.until());
                analyzer.tested(&value);
                let span = analyzer.context.map.expression(repeat.until());
                analyzer.check_truth(&value, repeat.until(), span);
                until = Some(value);
                let end = analyzer.scopes.snapshot();
                analyzer.narrow(repeat.until(), true);
                let exit = analyzer.scopes.snapshot();
                if let Some(innermost) = analyzer.loops.last_mut() {
                    innermost.exits.push(exit);
                }
                analyzer.scopes.restore(&end);
                analyzer.narrow(repeat.until(), false);
            }
            analyzer.scopes.pop();
            terminates
        });
        let endless = until
            .as_ref()
            .and_then(Forever::until_condition)
            .is_some_and(|forever| {
                self.check_endless_loop(forever, repeat.repeat_token(), repeat.block())
            });
        let condition = self.context.map.expression(repeat.until());
        self.record_loop(repeat.repeat_token(), "repeat", endless, None, condition);
        terminates && !breaks_out(repeat.block())
    }

    fn walk_while(&mut self, while_loop: &While) -> bool {
        let mut condition = Value::Unknown;
        self.walk_loop(Exit::AtHead(Some(while_loop.condition())), |analyzer| {
            let (value, terminates, _) =
                analyzer.guarded_block(while_loop.condition(), while_loop.block());
            condition = value;
            terminates
        });
        let endless = Forever::while_condition(&condition).is_some_and(|forever| {
            self.check_endless_loop(forever, while_loop.while_token(), while_loop.block())
        });
        let written = self.context.map.expression(while_loop.condition());
        self.record_loop(while_loop.while_token(), "while", endless, None, written);
        condition == Value::Bool(Some(true)) && !breaks_out(while_loop.block())
    }

    /// Walks a loop whose one pass is `pass` (from the values at the loop's
    /// head; true when the pass cannot complete), until the values at the
    /// head settle: silent passes first, then one that reports. After it,
    /// the values are those where the loop ends (see [`Exit`]) or a
    /// `break` leaves it. Returns whether the last pass cannot complete.
    fn walk_loop(&mut self, exit: Exit<'_>, mut pass: impl FnMut(&mut Self) -> bool) -> bool {
        let entry = self.scopes.snapshot();
        let mut head = entry.clone();
        let precise = self.loops.len() < PRECISE_LOOP_DEPTH;
        let passes = if precise { LOOP_PASSES } else { 1 };
        for done in 0..passes {
            let (diagnostics, returns) = (self.diagnostics.len(), self.returns.len());
            self.loops.push(Loop::default());
            self.scopes.restore(&head);
            let terminates = pass(self);
            let end = (!terminates).then(|| self.scopes.snapshot());
            self.loops.pop();
            self.diagnostics.truncate(diagnostics);
            self.returns.truncate(returns);
            let next = match end {
                Some(end) => entry.join(&end),
                None => entry.clone(),
            };
            if next == head {
                break;
            }
            head = if done + 1 == passes {
                entry.widen(&next)
            } else {
                next
            };
        }
        self.loops.push(Loop::default());
        self.scopes.restore(&head);
        let terminates = pass(self);
        let mut exits = self
            .loops
            .pop()
            .map(|innermost| innermost.exits)
            .unwrap_or_default();
        self.scopes.restore(&head);
        if let Exit::AtHead(condition) = exit {
            if let Some(condition) = condition {
                self.narrow(condition, false);
            }
            exits.push(self.scopes.snapshot());
        }
        if let Some(joined) = Snapshot::join_all(&exits) {
            self.scopes.restore(&joined);
        }
        terminates
    }

    /// A block that runs when `condition` holds: the library members the
    /// condition tests exist there, and its locals are narrowed by it.
    /// Returns the condition's value, whether the block never completes
    /// normally, and the values where the condition is false.
    fn guarded_block(&mut self, condition: &Expression, block: &Block) -> (Value, bool, Snapshot) {
        let value = self.value_of(condition);
        self.tested(&value);
        let span = self.context.map.expression(condition);
        self.check_truth(&value, condition, span);
        let before = self.scopes.snapshot();
        self.narrow(condition, false);
        let otherwise = self.scopes.snapshot();
        self.scopes.restore(&before);
        self.narrow(condition, true);
        let guards = self.guards_of(condition);
        let pushed = self.missing.push_guards(guards);
        let terminates = self.scoped_block(block);
        self.missing.pop_guards(pushed);
        (value, terminates, otherwise)
    }

    // ----- expressions ------------------------------------------------

    /// Evaluates an expression; using KEYS/ARGV as a whole counts as
    /// dynamic access.
    pub fn value_of(&mut self, expression: &Expression) -> Value {
        let value = self.raw_value_of(expression);
        if let Value::Params(param) = value {
            let span = self.context.map.expression(expression);
            self.param_dynamic(param, span);
        }
        value
    }

    /// Records a whole-table use of KEYS/ARGV at `span`.
    pub fn settle(&mut self, value: Value, span: Span) -> Value {
        if let Value::Params(param) = value {
            self.param_dynamic(param, span);
        }
        value
    }

    /// Evaluates without recording a whole-table use of KEYS/ARGV, for
    /// consumers that report it with a better span.
    pub fn raw_value_of(&mut self, expression: &Expression) -> Value {
        if !self.enter() {
            self.leave();
            return Value::Unknown;
        }
        let value = match expression {
            Expression::BinaryOperator { lhs, binop, rhs } => self.binary(lhs, binop, rhs),
            Expression::Parentheses { expression, .. } => self.value_of(expression),
            Expression::UnaryOperator { unop, expression } => self.unary(unop, expression),
            Expression::Function(function) => {
                let summary = self.walk_function_body(function.body(), None);
                Value::Function(summary.map(std::rc::Rc::new))
            }
            Expression::FunctionCall(call) => self.eval_function_call(call),
            Expression::TableConstructor(table) => self.eval_table(table),
            Expression::Number(token) => number(token),
            Expression::String(token) => Value::Str(string_literal(self.context.map, token)),
            Expression::Symbol(token) => self.symbol(token),
            Expression::Var(Var::Name(token)) => self.read_name(token, None),
            Expression::Var(Var::Expression(variable)) => {
                let suffixes: Vec<&Suffix> = variable.suffixes().collect();
                self.eval_chain(variable.prefix(), &suffixes)
            }
            _ => Value::Unknown,
        };
        self.leave();
        value
    }

    fn binary(&mut self, lhs: &Expression, operator: &BinOp, rhs: &Expression) -> Value {
        let left = self.value_of(lhs);
        // `t.m and t.m(x)`: the right side runs only when `t.m` exists,
        // and `v and v + 1` only where `v` is true.
        let guards = match operator {
            BinOp::And(_) => self.guards_of(lhs),
            _ => Vec::new(),
        };
        let pushed = self.missing.push_guards(guards);
        let before = self.scopes.snapshot();
        match operator {
            BinOp::And(_) => self.narrow(lhs, true),
            BinOp::Or(_) => self.narrow(lhs, false),
            _ => {}
        }
        let right = self.value_of(rhs);
        self.scopes.restore(&before);
        self.missing.pop_guards(pushed);
        if matches!(
            operator,
            BinOp::And(_) | BinOp::Or(_) | BinOp::TwoEqual(_) | BinOp::TildeEqual(_)
        ) {
            self.tested(&left);
            self.tested(&right);
        }
        self.check_binary(lhs, operator, rhs, &left, &right);
        let constants = left.as_number().zip(right.as_number());
        let (left_kinds, right_kinds) = (left.ty().kinds, right.ty().kinds);
        let divided = left.ty().divided || right.ty().divided;
        // The length of a flat map or list of pairs, halved: whole.
        let halves_even = left.ty().even && right.as_number() == Some(2.0);
        let parities = parity(&left).zip(parity(&right));
        let fold = |apply: fn(f64, f64) -> f64, keeps_integers: bool| match constants {
            Some((a, b)) => Value::Number(apply(a, b)),
            None if keeps_integers
                && left_kinds.within(Kinds::INTEGER)
                && right_kinds.within(Kinds::INTEGER) =>
            {
                let even = match operator {
                    BinOp::Plus(_) | BinOp::Minus(_) => parities.map(|(a, b)| a == b),
                    BinOp::Star(_) => parities.map(|(a, b)| a || b),
                    _ => None,
                };
                Value::Typed(Type::integer_with_parity(even))
            }
            // `/` and `^` make fractions; other operators keep them.
            None if !keeps_integers || divided => Value::Typed(Type::divided()),
            None => Value::ComputedNumber,
        };
        match operator {
            BinOp::Plus(_) => fold(|a, b| a + b, true),
            BinOp::Minus(_) => fold(|a, b| a - b, true),
            BinOp::Star(_) => fold(|a, b| a * b, true),
            BinOp::Slash(_) if halves_even => Value::Typed(Type::of(Kinds::INTEGER)),
            BinOp::Slash(_) => fold(|a, b| a / b, false),
            BinOp::Percent(_) => fold(|a, b| a - (a / b).floor() * b, true),
            BinOp::Caret(_) => fold(f64::powf, false),
            BinOp::TwoDots(_) => match left.derivation() {
                Some(derivation) => Value::DerivedKey(derivation),
                None => Value::ComputedString(match left {
                    Value::Str(text) | Value::ComputedString(Some(text)) => Some(text),
                    _ => None,
                }),
            },
            BinOp::And(_) => logical(&left, right, true),
            BinOp::Or(_) => logical(&left, right, false),
            _ => Value::Bool(None),
        }
    }

    fn unary(&mut self, operator: &UnOp, operand: &Expression) -> Value {
        let span = self.context.map.span_between(
            Some(operator.token().token().start_position()),
            span::expression_end(operand),
        );
        let operand_span = self.context.map.expression(operand);
        match operator {
            UnOp::Hash(_) => {
                let value = self.raw_value_of(operand);
                self.check_nil_use(&value, operand_span, "get the length of", span);
                let ty = value.ty();
                let even = ty.table_type().is_some_and(|table| table.even_length);
                self.settle(value, span);
                Value::Typed(Type {
                    even,
                    unbounded: ty.unbounded,
                    ..Type::of(Kinds::INTEGER)
                })
            }
            UnOp::Minus(_) => {
                let value = self.value_of(operand);
                self.check_nil_use(&value, operand_span, "perform arithmetic on", span);
                match value.as_number() {
                    Some(number) => Value::Number(-number),
                    None if value.ty().kinds.within(Kinds::INTEGER) => {
                        Value::Typed(Type::of(Kinds::INTEGER))
                    }
                    None => Value::ComputedNumber,
                }
            }
            _ => {
                let value = self.value_of(operand);
                self.tested(&value);
                self.check_truth(&value, operand, operand_span);
                Value::Bool(None)
            }
        }
    }

    /// The value findings of `lhs <operator> rhs`.
    fn check_binary(
        &mut self,
        lhs: &Expression,
        operator: &BinOp,
        rhs: &Expression,
        left: &Value,
        right: &Value,
    ) {
        let map = self.context.map;
        let span = map.span_between(span::expression_start(lhs), span::expression_end(rhs));
        let (left_span, right_span) = (map.expression(lhs), map.expression(rhs));
        let sides = || {
            (
                Side {
                    value: left,
                    span: left_span,
                },
                Side {
                    value: right,
                    span: right_span,
                },
            )
        };
        match operator {
            BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_) => {
                let (left, right) = sides();
                self.check_ordering(left, right, span);
            }
            BinOp::TwoEqual(_) | BinOp::TildeEqual(_) => {
                let (left, right) = sides();
                let equal = matches!(operator, BinOp::TwoEqual(_));
                self.check_equality(left, right, equal, span);
            }
            BinOp::Plus(_)
            | BinOp::Minus(_)
            | BinOp::Star(_)
            | BinOp::Slash(_)
            | BinOp::Percent(_)
            | BinOp::Caret(_) => {
                self.check_nil_use(left, left_span, "perform arithmetic on", span);
                self.check_nil_use(right, right_span, "perform arithmetic on", span);
            }
            BinOp::TwoDots(_) => {
                self.check_nil_use(left, left_span, "concatenate", span);
                self.check_nil_use(right, right_span, "concatenate", span);
            }
            BinOp::And(_) => self.check_truth(left, lhs, left_span),
            _ => {}
        }
    }

    fn symbol(&mut self, token: &TokenReference) -> Value {
        match token.token_type() {
            TokenType::Symbol {
                symbol: Symbol::True,
            } => Value::Bool(Some(true)),
            TokenType::Symbol {
                symbol: Symbol::False,
            } => Value::Bool(Some(false)),
            TokenType::Symbol {
                symbol: Symbol::Nil,
            } => Value::Nil,
            TokenType::Symbol {
                symbol: Symbol::Ellipsis,
            } => {
                self.check_vararg(token);
                Value::Unknown
            }
            _ => Value::Unknown,
        }
    }

    fn check_vararg(&mut self, token: &TokenReference) {
        self.chunk_varargs |= self.functions.is_empty();
        let allowed = self.functions.last().is_none_or(|function| function.vararg);
        if !allowed {
            let span = self.span(token);
            self.diagnostics.push(span.error(
                "`...` is used in a function that does not declare `...`: Lua 5.1 refuses to compile this",
                "add `...` to the function's parameters, or pass the values as named parameters",
            ));
        }
    }

    fn eval_function_call(&mut self, call: &FunctionCall) -> Value {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        self.eval_chain(call.prefix(), &suffixes)
    }

    /// `prefix.member[index](args):method(args)...`
    pub fn eval_chain(&mut self, prefix: &Prefix, suffixes: &[&Suffix]) -> Value {
        let mut value = match prefix {
            Prefix::Name(token) => {
                let next_member = match suffixes.first() {
                    Some(Suffix::Index(Index::Dot { name, .. })) => Some(identifier(name)),
                    _ => None,
                };
                self.read_name(token, next_member)
            }
            Prefix::Expression(expression) => self.value_of(expression),
            _ => Value::Unknown,
        };
        let mut base_span = match prefix {
            Prefix::Name(token) => self.span(token),
            Prefix::Expression(expression) => self.context.map.expression(expression),
            _ => Span::TOP,
        };
        for suffix in suffixes {
            let span = self.context.map.chain(prefix, suffix);
            value = self.apply_suffix(value, suffix, base_span, span);
            base_span = span;
        }
        value
    }

    /// `value` (written at `base_span`) followed by `suffix`, together at
    /// `span`.
    fn apply_suffix(
        &mut self,
        value: Value,
        suffix: &Suffix,
        base_span: Span,
        span: Span,
    ) -> Value {
        if let Value::Missing(missing) = &value {
            let usage = match suffix {
                Suffix::Call(Call::AnonymousCall(_)) => MissingUse::Call,
                _ => MissingUse::Index,
            };
            self.use_missing(missing, usage);
        }
        let operation = match suffix {
            Suffix::Call(Call::AnonymousCall(_)) => "call",
            _ => "index",
        };
        self.check_nil_use(&value, base_span, operation, span);
        match suffix {
            Suffix::Index(Index::Dot { name, .. }) => {
                let member_span = self.span(name);
                if let Value::Params(param) = value {
                    self.param_dynamic(param, span);
                    return Value::Unknown;
                }
                self.index_member(value, identifier(name), member_span)
            }
            Suffix::Index(Index::Brackets { expression, .. }) => {
                let key = self.value_of(expression);
                match (value, key) {
                    (Value::Params(param), key) => self.param_index(param, &key, span),
                    (base @ Value::Builtin { .. }, Value::Str(member)) => {
                        self.index_member(base, &member, span)
                    }
                    (Value::Typed(ty), key) => element(&ty, &key),
                    _ => Value::Unknown,
                }
            }
            Suffix::Call(Call::AnonymousCall(arguments)) => self.call(value, arguments, span),
            Suffix::Call(Call::MethodCall(method)) => {
                self.settle(value, span);
                self.eval_arguments(method.args(), span);
                self.last_call_many = true;
                Value::Unknown
            }
            _ => Value::Unknown,
        }
    }

    /// Evaluates call arguments. KEYS/ARGV passed whole are reported with
    /// the span of the call (`unpack(KEYS)`).
    pub fn eval_arguments(&mut self, arguments: &FunctionArgs, call_span: Span) -> Vec<Operand> {
        match arguments {
            FunctionArgs::Parentheses { arguments, .. } => {
                let operands = self.eval_list(arguments.iter(), false);
                for operand in &operands {
                    self.settle(operand.value.clone(), call_span);
                }
                operands
            }
            FunctionArgs::String(token) => vec![Operand {
                value: Value::Str(string_literal(self.context.map, token)),
                span: self.span(token),
                many: false,
            }],
            FunctionArgs::TableConstructor(table) => vec![Operand {
                value: self.eval_table(table),
                span: self
                    .context
                    .map
                    .tokens(table.braces().tokens().0, table.braces().tokens().1),
                many: false,
            }],
            _ => Vec::new(),
        }
    }

    /// Evaluates an expression list, noting whether the last one may expand
    /// to any number of values. With `settle`, KEYS/ARGV used whole are
    /// recorded at their own span.
    fn eval_list<'e>(
        &mut self,
        expressions: impl Iterator<Item = &'e Expression>,
        settle: bool,
    ) -> Vec<Operand> {
        let expressions: Vec<&Expression> = expressions.collect();
        let count = expressions.len();
        let mut operands = Vec::with_capacity(count);
        for (position, expression) in expressions.into_iter().enumerate() {
            self.last_call_many = false;
            let span = self.context.map.expression(expression);
            let value = if settle {
                self.value_of(expression)
            } else {
                self.raw_value_of(expression)
            };
            let many = position + 1 == count && self.expands(expression);
            operands.push(Operand { value, span, many });
        }
        operands
    }

    /// A call or `...` in the last position expands to all its values.
    fn expands(&self, expression: &Expression) -> bool {
        match expression {
            Expression::FunctionCall(_) => self.last_call_many,
            Expression::Symbol(token) => token.is_symbol(Symbol::Ellipsis),
            _ => false,
        }
    }

    fn eval_table(&mut self, table: &TableConstructor) -> Value {
        let mut array = Vec::new();
        let mut reply = None;
        let fields: Vec<&Field> = table.fields().iter().collect();
        let count = fields.len();
        for (position, field) in fields.into_iter().enumerate() {
            match field {
                Field::NoKey(expression) => {
                    self.last_call_many = false;
                    let value = self.value_of(expression);
                    let many = position + 1 == count && self.expands(expression);
                    let span = self.context.map.expression(expression);
                    array.push((value, many, span));
                }
                Field::NameKey {
                    key,
                    value: expression,
                    ..
                } => {
                    let value = self.value_of(expression);
                    let span = self.context.map.expression(expression);
                    if let Some(field_reply) = self.reply_field(identifier(key), &value, span) {
                        reply = Some(field_reply);
                    }
                }
                Field::ExpressionKey {
                    key,
                    value: expression,
                    ..
                } => {
                    let key = self.value_of(key);
                    let value = self.value_of(expression);
                    match key {
                        Value::Str(name) => {
                            let span = self.context.map.expression(expression);
                            if let Some(field_reply) = self.reply_field(&name, &value, span) {
                                reply = Some(field_reply);
                            }
                        }
                        key => self.error_codes.computed_field(&key, &value),
                    }
                }
                _ => {}
            }
        }
        if let Some(reply) = reply {
            return Value::Reply(reply);
        }
        let open_ended = array.last().is_some_and(|(_, many, _)| *many);
        if open_ended {
            array.pop();
        }
        let tag = array
            .first()
            .and_then(|(value, _, _)| value.as_str().map(str::to_string));
        Value::Table(Some(Box::new(TableShape {
            tag,
            elements: array.iter().map(|(value, _, _)| value.kind()).collect(),
            values: array
                .into_iter()
                .map(|(value, _, span)| (value, span))
                .collect(),
            open_ended,
        })))
    }
}

impl Analyzer<'_> {
    /// A constructor's field `name = value`: `err` and `ok` make the table
    /// a reply of its own.
    fn reply_field(&mut self, name: &str, value: &Value, span: Span) -> Option<Reply> {
        match name {
            "err" => {
                self.error_codes
                    .err_field(value, span, &mut self.diagnostics);
                // Returned, the table is an error reply only when `err` is
                // a string.
                super::error_codes::may_be_string(value).then(|| Reply::Error(error_code(value)))
            }
            "ok" => Some(Reply::Status(value.as_str().map(str::to_string))),
            _ => None,
        }
    }
}

/// `table[key]` of a table of type `table`: the element's type where the
/// table's shape tells it (its position, or what all its elements are,
/// or nil past its end).
fn element(table: &Type, key: &Value) -> Value {
    let Some(shape) = table.table_type() else {
        return Value::Unknown;
    };
    if let Some(index) = key
        .as_integer()
        .and_then(|index| usize::try_from(index).ok())
        && let Some(position) = index.checked_sub(1).and_then(|at| shape.positions.get(at))
    {
        return Value::Typed(position.clone());
    }
    match (&shape.elements, key.ty().kinds.within(Kinds::NUMBER)) {
        (Some(elements), true) => Value::Typed(elements.join(&Type::of(Kinds::NIL))),
        _ => Value::Unknown,
    }
}

/// The value of `left and right` (`and_`) or `left or right`: the left
/// side when it decides, else the right side.
fn logical(left: &Value, right: Value, and_: bool) -> Value {
    let ty = left.ty();
    let (decides, goes_on) = if and_ {
        (ty.falsy(), ty.truthy())
    } else {
        (ty.truthy(), ty.falsy())
    };
    if decides.kinds.is_empty() {
        return right;
    }
    if goes_on.kinds.is_empty() {
        return left.clone();
    }
    Value::Typed(decides).join(&right)
}

/// Source order, with falling off the end last.
fn sort_returns(returns: &mut [ReturnSite]) {
    returns.sort_by_key(|site| {
        let falls_off = site.shape == ReturnShape::FallsOffEnd;
        (falls_off, site.line, site.column)
    });
}

/// True when the loop body has a `break` of its own (not of a nested loop).
fn breaks_out(block: &Block) -> bool {
    if matches!(block.last_stmt(), Some(LastStmt::Break(_))) {
        return true;
    }
    block.stmts().any(|stmt| match stmt {
        Stmt::Do(inner) => breaks_out(inner.block()),
        Stmt::If(branches) => {
            breaks_out(branches.block())
                || branches
                    .else_if()
                    .into_iter()
                    .flatten()
                    .any(|branch| breaks_out(branch.block()))
                || branches.else_block().is_some_and(breaks_out)
        }
        _ => false,
    })
}

pub(crate) fn identifier(token: &TokenReference) -> &str {
    match token.token_type() {
        TokenType::Identifier { identifier } => identifier.as_str(),
        _ => "",
    }
}

/// A declaration's identity: the byte offset of its name.
fn offset(token: &TokenReference) -> usize {
    token.token().start_position().bytes()
}

fn number(token: &TokenReference) -> Value {
    match token.token_type() {
        TokenType::Number { text } => {
            value::parse_number(text.as_str()).map_or(Value::ComputedNumber, Value::Number)
        }
        _ => Value::Unknown,
    }
}

/// The value of a string literal, read from the source as written (see
/// `syntax::Prepared::new` for why not from the token).
pub(crate) fn string_literal(map: &SourceMap<'_>, token: &TokenReference) -> String {
    let (start, end) = (token.token().start_position(), token.token().end_position());
    let written = map.text(start.bytes(), end.bytes()).unwrap_or_default();
    match token.token_type() {
        TokenType::StringLiteral {
            quote_type: StringLiteralQuoteType::Brackets,
            multi_line_depth,
            ..
        } => long_string(written, *multi_line_depth),
        TokenType::StringLiteral { .. } => {
            let mut characters = written.chars();
            characters.next();
            characters.next_back();
            value::unescape(characters.as_str())
        }
        _ => String::new(),
    }
}

/// `[==[text]==]` without its brackets; Lua drops a first line break.
fn long_string(written: &str, depth: usize) -> String {
    let bracket = depth + 2;
    let inner = written
        .get(bracket..written.len().saturating_sub(bracket))
        .unwrap_or_default();
    let inner = inner
        .strip_prefix("\r\n")
        .or_else(|| inner.strip_prefix('\n'))
        .unwrap_or(inner);
    inner.to_string()
}

/// Whether an integer value is even, when that is known.
fn parity(value: &Value) -> Option<bool> {
    match value.as_number() {
        Some(number) if number.fract() == 0.0 => Some(number % 2.0 == 0.0),
        Some(_) => None,
        None => value.ty().parity(),
    }
}

impl Value {
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Value::Number(number) => Some(*number),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(text) => Some(text),
            _ => None,
        }
    }
}

impl super::value::Param {
    /// What one element of this table is.
    pub fn element(self) -> Value {
        match self {
            super::value::Param::Keys => Value::Key(None),
            super::value::Param::Argv => Value::Arg(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::syntax::Prepared;

    fn lua_files(directory: &Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(directory) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                lua_files(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "lua") {
                found.extend(std::fs::read_to_string(&path).ok());
            }
        }
    }

    /// Skipping the second walk is exact: on every script of the test
    /// suite, and on closures that read and assign outer locals, the
    /// outcome is the one two walks give.
    #[test]
    fn the_second_walk_is_skipped_only_when_it_changes_nothing() {
        let mut sources = Vec::new();
        lua_files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lua"),
            &mut sources,
        );
        assert!(sources.len() > 40, "the test scripts were not found");
        sources.extend(
            [
                "local n = 0\nlocal function bump() n = n + 1 end\nbump()\nreturn n + 1",
                "local v = redis.call('GET', KEYS[1])\nlocal function read() return v end\nv = 'x'\nreturn read()",
                "local v = redis.call('GET', KEYS[1])\nlocal function read() return v == nil end\nreturn read()",
                "local t = {}\nlocal function add(x) t[#t + 1] = x end\nadd(ARGV[1])\nreturn redis.call('DEL', unpack(t))",
            ]
            .map(str::to_owned),
        );
        let signature = Signature {
            keys: 2,
            args: 3,
            variadic_keys: true,
            variadic_args: true,
            allow_unused: true,
            dynamic_keys: true,
            ..Signature::default()
        };
        let (flags, header) = (ScriptFlags::default(), Header::default());
        let mut skipped = 0;
        for source in &sources {
            let prepared = Prepared::new(source);
            let Ok(ast) = prepared.parse() else { continue };
            let map = SourceMap::new(source);
            let context = Context {
                map: &map,
                signature: &signature,
                flags: &flags,
                header: &header,
                environment: Environment::Eval,
                tables: ["KEYS", "ARGV"],
                plan: None,
                resp: Resp::of_source(source),
            };
            let (first, assignments) = survey(context, &ast);
            skipped += usize::from(first.scopes.agrees_with(&assignments));
            let twice = walk_knowing(context, &ast, assignments).finish();
            let shortcut = walk_twice(context, &ast).finish();
            assert_eq!(format!("{shortcut:?}"), format!("{twice:?}"), "{source}");
        }
        // Both ways are exercised.
        assert!(
            skipped > 0 && skipped < sources.len(),
            "{skipped} of {}",
            sources.len()
        );
    }
}
