//! The walk over the syntax tree: scopes, statements and expressions. The
//! checks themselves live in `globals`, `params`, `calls` and `returns`.

use std::collections::HashSet;

use full_moon::ast::{
    Assignment, Ast, BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody,
    FunctionCall, FunctionDeclaration, GenericFor, If, Index, LastStmt, LocalAssignment,
    NumericFor, Parameter, Prefix, Repeat, Stmt, Suffix, TableConstructor, UnOp, Var, While,
};
use full_moon::tokenizer::{StringLiteralQuoteType, Symbol, TokenReference, TokenType};

use super::diagnostic::Diagnostic;
use super::error_codes::error_code;
use super::globals::{MissingMembers, MissingUse};
use super::header::Header;
use super::library::{self, Plan};
use super::params::ParamUsage;
use super::sandbox::Environment;
use super::scope::{Binding, Scopes};
use super::shebang::ScriptFlags;
use super::span::{self, SourceMap, Span};
use super::syntax::MAX_NESTING;
use super::value::{self, Reply, TableShape, Value};
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
    };
    walk_twice(context, ast).finish()
}

/// The first walk finds the locals assigned again, the second checks.
fn walk_twice<'a>(context: Context<'a>, ast: &Ast) -> Analyzer<'a> {
    let mut survey = Analyzer::new(context, HashSet::new());
    survey.walk_chunk(ast);
    let reassigned = std::mem::take(&mut survey.reassigned_found);
    let mut analyzer = Analyzer::new(context, reassigned);
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
}

/// Per-function state: whether `...` is allowed.
#[derive(Debug)]
struct Function {
    vararg: bool,
}

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
    pub params: ParamUsage,
    pub missing: MissingMembers,
    /// Locals assigned after their declaration (collected by the survey).
    pub reassigned_found: HashSet<usize>,
    /// Set by a call to `error`: the statement never completes.
    pub raised: bool,
    /// What the script does with metatables (see `error_codes`).
    pub metatables: super::error_codes::Metatables,
    /// Set by each call: it may return any number of values.
    pub last_call_many: bool,
    /// Globals the script tried to create: already reported, so reading
    /// them later is not reported again.
    pub refused_globals: HashSet<String>,
    /// In a library: what each registered callback does, by registration.
    function_outcomes: Vec<FunctionOutcome>,
    /// How many functions enclose the code whose `return` is the reply:
    /// none for a script, the callback for a library function.
    reply_depth: usize,
    functions: Vec<Function>,
    depth: usize,
    too_deep: bool,
}

impl<'a> Analyzer<'a> {
    fn new(context: Context<'a>, reassigned: HashSet<usize>) -> Self {
        Self {
            context,
            scopes: Scopes::new(reassigned),
            diagnostics: Vec::new(),
            returns: Vec::new(),
            may_write: false,
            error_codes: ErrorCodes::default(),
            chunk_varargs: false,
            params: ParamUsage::default(),
            missing: MissingMembers::default(),
            refused_globals: HashSet::new(),
            function_outcomes: Vec::new(),
            reply_depth: 0,
            reassigned_found: HashSet::new(),
            raised: false,
            metatables: Default::default(),
            last_call_many: false,
            functions: Vec::new(),
            depth: 0,
            too_deep: false,
        }
    }

    fn finish(mut self) -> Outcome {
        let findings = self.param_findings();
        self.diagnostics.extend(findings);
        let missing = std::mem::take(&mut self.missing);
        self.diagnostics.extend(missing.into_notes());
        sort_returns(&mut self.returns);
        Outcome {
            diagnostics: self.diagnostics,
            returns: self.returns,
            may_write: self.may_write,
            error_codes: self.error_codes,
            chunk_varargs: self.chunk_varargs,
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
        if let Some(LastStmt::Return(statement)) = block.last_stmt() {
            self.walk_return(statement);
            terminates = true;
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
                self.scopes
                    .declare(identifier(name), offset(name), Value::Function);
                self.walk_function_body(function.body(), None);
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
            self.assign_to(variable, &value);
        }
    }

    fn assign_to(&mut self, variable: &Var, value: &Value) {
        match variable {
            Var::Name(token) => self.assign_name(token, false),
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
                            key => self.error_codes.computed_field(&key, value),
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

    /// `name = ...` or `function name() end`.
    fn assign_name(&mut self, token: &TokenReference, is_function: bool) {
        let name = identifier(token);
        match self.scopes.resolve(name) {
            Binding::Local { declared_at, .. } => {
                self.reassigned_found.insert(declared_at);
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
            self.scopes.declare(identifier(name), offset(name), value);
        }
    }

    fn walk_function_declaration(&mut self, declaration: &FunctionDeclaration) {
        let function_name = declaration.name();
        let names: Vec<&TokenReference> = function_name.names().iter().collect();
        let method = function_name.method_name();
        match (names.split_first(), method) {
            (Some((only, [])), None) => self.assign_name(only, true),
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

    fn walk_function_body(&mut self, body: &FunctionBody, method: Option<&TokenReference>) {
        let plan = self.context.plan;
        if let Some(registrations) =
            plan.and_then(|plan| plan.callbacks.get(&library::callback_offset(body)))
        {
            for &registration in registrations {
                self.walk_callback(body, registration);
            }
            return;
        }
        // Code in a library's own functions runs when its callbacks call it.
        let environment = self.context.environment;
        if plan.is_some() {
            self.context.environment = Environment::FunctionCall;
        }
        self.functions.push(Function { vararg: false });
        self.scopes.push();
        if let Some(method) = method {
            self.scopes.declare("self", offset(method), Value::Unknown);
        }
        for parameter in body.parameters() {
            match parameter {
                Parameter::Name(name) => {
                    self.scopes
                        .declare(identifier(name), offset(name), Value::Unknown);
                }
                Parameter::Ellipsis(_) => {
                    if let Some(function) = self.functions.last_mut() {
                        function.vararg = true;
                    }
                }
                _ => {}
            }
        }
        self.walk_block(body.block());
        self.scopes.pop();
        self.functions.pop();
        self.context.environment = environment;
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
        };
        let outer_params = std::mem::take(&mut self.params);
        let outer_reply_depth = self.reply_depth;

        self.functions.push(Function { vararg: false });
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
                    self.scopes.declare(identifier(name), offset(name), value);
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
        let (_, mut all_terminate) = self.guarded_block(statement.condition(), statement.block());
        for branch in statement.else_if().into_iter().flatten() {
            all_terminate &= self.guarded_block(branch.condition(), branch.block()).1;
        }
        match statement.else_block() {
            Some(block) => self.scoped_block(block) && all_terminate,
            None => false,
        }
    }

    fn walk_numeric_for(&mut self, numeric_for: &NumericFor) {
        self.value_of(numeric_for.start());
        self.value_of(numeric_for.end());
        if let Some(step) = numeric_for.step() {
            self.value_of(step);
        }
        self.scopes.push();
        let variable = numeric_for.index_variable();
        self.scopes.declare(
            identifier(variable),
            offset(variable),
            Value::ComputedNumber,
        );
        self.walk_block(numeric_for.block());
        self.scopes.pop();
    }

    fn walk_generic_for(&mut self, generic_for: &GenericFor) {
        let operands = self.eval_list(generic_for.expressions().iter(), false);
        let iterated = match operands.first().map(|operand| &operand.value) {
            Some(Value::ParamIterator(param)) => Some(*param),
            _ => None,
        };
        self.scopes.push();
        for (position, name) in generic_for.names().iter().enumerate() {
            let value = match (position, iterated) {
                (0, Some(_)) => Value::ComputedNumber,
                (1, Some(param)) => param.element(),
                _ => Value::Unknown,
            };
            self.scopes.declare(identifier(name), offset(name), value);
        }
        self.walk_block(generic_for.block());
        self.scopes.pop();
    }

    fn walk_repeat(&mut self, repeat: &Repeat) -> bool {
        // The until-condition sees the body's locals.
        self.scopes.push();
        let terminates = self.walk_block(repeat.block());
        let until = self.value_of(repeat.until());
        self.tested(&until);
        self.scopes.pop();
        terminates && !breaks_out(repeat.block())
    }

    fn walk_while(&mut self, while_loop: &While) -> bool {
        let (condition, _) = self.guarded_block(while_loop.condition(), while_loop.block());
        condition == Value::Bool(Some(true)) && !breaks_out(while_loop.block())
    }

    /// A block that runs when `condition` holds: the library members the
    /// condition tests exist there. Returns the condition's value and
    /// whether the block never completes normally.
    fn guarded_block(&mut self, condition: &Expression, block: &Block) -> (Value, bool) {
        let value = self.value_of(condition);
        self.tested(&value);
        let guards = self.guards_of(condition);
        let pushed = self.missing.push_guards(guards);
        let terminates = self.scoped_block(block);
        self.missing.pop_guards(pushed);
        (value, terminates)
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
                self.walk_function_body(function.body(), None);
                Value::Function
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
        // `t.m and t.m(x)`: the right side runs only when `t.m` exists.
        let guards = match operator {
            BinOp::And(_) => self.guards_of(lhs),
            _ => Vec::new(),
        };
        let pushed = self.missing.push_guards(guards);
        let right = self.value_of(rhs);
        self.missing.pop_guards(pushed);
        if matches!(
            operator,
            BinOp::And(_) | BinOp::Or(_) | BinOp::TwoEqual(_) | BinOp::TildeEqual(_)
        ) {
            self.tested(&left);
            self.tested(&right);
        }
        let constants = left.as_number().zip(right.as_number());
        let fold = |apply: fn(f64, f64) -> f64| match constants {
            Some((a, b)) => Value::Number(apply(a, b)),
            None => Value::ComputedNumber,
        };
        match operator {
            BinOp::Plus(_) => fold(|a, b| a + b),
            BinOp::Minus(_) => fold(|a, b| a - b),
            BinOp::Star(_) => fold(|a, b| a * b),
            BinOp::Slash(_) => fold(|a, b| a / b),
            BinOp::Percent(_) => fold(|a, b| a - (a / b).floor() * b),
            BinOp::Caret(_) => fold(f64::powf),
            BinOp::TwoDots(_) => Value::ComputedString(match left {
                Value::Str(text) | Value::ComputedString(Some(text)) => Some(text),
                _ => None,
            }),
            BinOp::And(_) | BinOp::Or(_) => Value::Unknown,
            _ => Value::Bool(None),
        }
    }

    fn unary(&mut self, operator: &UnOp, operand: &Expression) -> Value {
        match operator {
            UnOp::Hash(_) => {
                let value = self.raw_value_of(operand);
                let span = self.context.map.span_between(
                    Some(operator.token().token().start_position()),
                    span::expression_end(operand),
                );
                self.settle(value, span);
                Value::ComputedNumber
            }
            UnOp::Minus(_) => match self.value_of(operand).as_number() {
                Some(number) => Value::Number(-number),
                None => Value::ComputedNumber,
            },
            _ => {
                let value = self.value_of(operand);
                self.tested(&value);
                Value::Bool(None)
            }
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
                self.metatables.literal_call = suffixes.first().is_some_and(|suffix| {
                    super::error_codes::is_literal_metatable_call(self.context.map, suffix)
                });
                let value = self.read_name(token, next_member);
                self.metatables.literal_call = false;
                value
            }
            Prefix::Expression(expression) => self.value_of(expression),
            _ => Value::Unknown,
        };
        for suffix in suffixes {
            let span = self.context.map.chain(prefix, suffix);
            value = self.apply_suffix(value, suffix, span);
        }
        value
    }

    fn apply_suffix(&mut self, value: Value, suffix: &Suffix, span: Span) -> Value {
        if let Value::Missing(missing) = &value {
            let usage = match suffix {
                Suffix::Call(Call::AnonymousCall(_)) => MissingUse::Call,
                _ => MissingUse::Index,
            };
            self.use_missing(missing, usage);
        }
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
                    array.push((value, many));
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
        let open_ended = array.last().is_some_and(|(_, many)| *many);
        if open_ended {
            array.pop();
        }
        let tag = array
            .first()
            .and_then(|(value, _)| value.as_str().map(str::to_string));
        Value::Table(Some(Box::new(TableShape {
            tag,
            elements: array.iter().map(|(value, _)| value.kind()).collect(),
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
            super::value::Param::Keys => Value::Key,
            super::value::Param::Argv => Value::Arg(None),
        }
    }
}
