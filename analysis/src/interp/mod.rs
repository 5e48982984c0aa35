//! The walk over the syntax tree: scopes, statements and expressions, and
//! the checks of what the script asks of its inputs and of the server
//! (`globals`, `params`, `calls`, `returns`). The findings observe it
//! through the hooks of [`observe`]; the walk names none of them.

pub(crate) mod calls;
pub(crate) mod derived_keys;
pub(crate) mod error_codes;
mod expr;
pub(crate) mod globals;
mod json_reads;
mod json_tables;
mod key_elements;
pub(crate) mod library;
mod loops;
pub(crate) mod narrowing;
pub(crate) mod observe;
pub(crate) mod params;
mod reads;
pub(crate) mod redis_api;
pub(crate) mod returns;
pub(crate) mod script_options;
mod stmt;
mod uncalled;

use std::collections::HashSet;

use full_moon::ast::{
    Assignment, Ast, BinOp, Block, Call, Expression, Field, FunctionArgs, FunctionBody,
    FunctionCall, FunctionDeclaration, GenericFor, If, Index, LastStmt, LocalAssignment,
    NumericFor, Parameter, Prefix, Repeat, Stmt, Suffix, TableConstructor, UnOp, Var, While,
};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};

use crate::domain::analysis::{ErrorCodes, ReturnShape, ReturnSite};
use crate::domain::keys::{KeyElements, KeyPrefixes, KeyUse, ParameterId};
use crate::domain::operand::Operand;
use crate::domain::replies::Resp;
use crate::domain::review::{LoopBound, LoopSite, Review};
use crate::domain::scope::{Assignments, Binding, Scopes, Snapshot};
use crate::domain::signature::Signature;
use crate::domain::types::{Kinds, Type};
use crate::domain::value::{self, FunctionSummary, Reply, TableShape, Value};
use crate::interp::error_codes::error_code;
use crate::interp::globals::{MissingMembers, MissingUse};
use crate::interp::library::Plan;
use crate::interp::observe::{Finding, Guard, Site};
use crate::interp::params::ParamUsage;
use crate::model::sandbox::Environment;
use crate::source::code::Code;
use crate::source::diagnostic::Diagnostic;
use crate::source::header::Header;
use crate::source::shebang::ScriptFlags;
use crate::source::span::{self, SourceMap, Span};
use crate::source::syntax::MAX_NESTING;
use crate::source::tokens::{identifier, string_literal};

/// What the walk found.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    pub diagnostics: Vec<Diagnostic>,
    /// What the script's code does.
    pub script: FunctionWalk,
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
    findings: Findings<'_>,
) -> Walk {
    let map = SourceMap::new(source);
    let uncalled = uncalled::uncalled_functions(ast);
    let escaping_tables = json_tables::escaping_tables(ast);
    let escaping_replies = json_tables::escaping_replies(ast);
    let context = Context {
        map: &map,
        signature,
        flags,
        header,
        environment: Environment::Eval,
        tables: ["KEYS", "ARGV"],
        plan: None,
        resp: Resp::of_source(source),
        findings,
        uncalled: &uncalled,
        escaping_tables: &escaping_tables,
        escaping_replies: &escaping_replies,
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
pub(crate) struct LibraryWalk {
    pub diagnostics: Vec<Diagnostic>,
    /// By registration, in the order of the plan.
    pub functions: Vec<FunctionWalk>,
}

/// What the code behind one reply does: a script, or one callback of a
/// library.
#[derive(Debug, Default, Clone)]
pub(crate) struct FunctionWalk {
    /// Every way it can end, in source order.
    pub returns: Vec<ReturnSite>,
    pub review: Review,
    /// A write command is reachable, or a command name is not a literal.
    pub may_write: bool,
    pub error_codes: ErrorCodes,
    pub key_prefixes: KeyPrefixes,
    pub json_reads: Vec<crate::domain::json::JsonRead>,
}

/// Walks a library: its top level as `FUNCTION LOAD` runs it, each
/// registered callback as `FCALL` runs it.
pub(crate) fn run_library(
    source: &str,
    ast: &Ast,
    plan: &Plan,
    library: &Signature,
    header: &Header,
    findings: Findings<'_>,
) -> LibraryWalk {
    let map = SourceMap::new(source);
    let flags = ScriptFlags::default();
    let uncalled = uncalled::uncalled_functions(ast);
    let context = Context {
        map: &map,
        signature: library,
        flags: &flags,
        header,
        environment: Environment::LibraryLoad,
        tables: ["KEYS", "ARGV"],
        plan: Some(plan),
        resp: Resp::of_source(source),
        findings,
        uncalled: &uncalled,
        escaping_tables: &json_tables::escaping_tables(ast),
        // A library's replies are returned in function bodies, where a
        // `return t` lets the table go like any other mention.
        escaping_replies: &json_tables::escaping_tables(ast),
    };
    let mut analyzer = walk_twice(context, ast);
    let missing = std::mem::take(&mut analyzer.facts.missing);
    analyzer.facts.diagnostics.extend(missing.into_notes());
    let mut functions = analyzer.facts.function_walks;
    functions.resize_with(plan.registrations.len(), FunctionWalk::default);
    // Code outside the callbacks (their helpers) runs when any of them
    // calls it: each callback can end with the replies it builds.
    for function in &mut functions {
        function.error_codes.merge(&analyzer.facts.unit.error_codes);
    }
    LibraryWalk {
        diagnostics: analyzer.facts.diagnostics,
        functions,
    }
}

/// The findings that observe a walk, each with its code.
pub(crate) type Findings<'a> = &'a [(Code, &'a dyn Finding)];

/// Read-only inputs of one analysis.
#[derive(Clone, Copy)]
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
    /// The findings shown what the walk sees.
    pub findings: Findings<'a>,
    /// Where the bodies of the local functions nothing refers to start.
    pub uncalled: &'a HashSet<usize>,
    /// The names of locals whose tables may change where the walk does
    /// not look.
    pub escaping_tables: &'a HashSet<String>,
    /// The same, where the script's own `return t` is no escape: the
    /// locals whose command reply may have changed before it is returned.
    pub escaping_replies: &'a HashSet<String>,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Context")
            .field("environment", &self.environment)
            .field("tables", &self.tables)
            .field("findings", &self.findings.len())
            .finish_non_exhaustive()
    }
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
    /// Nothing refers to it (or to a function around it): it never runs.
    never_called: bool,
}

impl Function {
    fn new(id: u32) -> Self {
        Self {
            never_called: false,
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
    /// Set when the loop runs once per element of the data or up to a
    /// count the script computes.
    growing: Option<GrowingLoop>,
}

/// A loop whose number of passes the data or an argument sets: a table
/// declared before it that gets an element on each pass grows with them.
#[derive(Debug, Clone)]
struct GrowingLoop {
    /// The offset of its keyword.
    starts_at: usize,
    /// Why its table grows: "gets an element on each pass of the loop at
    /// line 17, which runs up to `amount`".
    growth: std::rc::Rc<crate::domain::types::Growth>,
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

#[derive(Debug)]
pub(crate) struct Analyzer<'a> {
    context: Context<'a>,
    /// What the walk has found so far: what the analysis reports.
    facts: Facts,
    scopes: Scopes,
    /// Locals assigned after their declaration, and which of them from a
    /// closure (collected by the survey).
    assignments_found: Assignments,
    /// Set by a call to `error`: the statement never completes.
    raised: bool,
    /// Set by each call: it may return any number of values.
    last_call_many: bool,
    /// Inside the arguments of a `pcall`/`xpcall` or `setmetatable`: the
    /// number of functions around that call, and which call. A function
    /// written among a `pcall`'s arguments runs protected (what it raises,
    /// the call catches); one among `setmetatable`'s is a metamethod, which
    /// runs only when the table is used that way.
    protected_from: Option<(usize, Guard)>,
    /// Where the `not` of a default guard is written (its byte offset),
    /// while the condition holding it is walked: `if not ttl then ttl = 0
    /// end`, a test the findings judge apart.
    default_guard: Option<usize>,
    /// How many functions enclose the code whose `return` is the reply:
    /// none for a script, the callback for a library function.
    reply_depth: usize,
    functions: Vec<Function>,
    /// The number the next walk of a function body gets.
    next_function_id: u32,
    /// The loops around the code being walked, innermost last.
    loops: Vec<Loop>,
    /// Locals the script compares with `false` (`x ~= false`), by
    /// declaration, with the line of the first comparison: the script
    /// knows they may be false, so a use the comparison does not guard
    /// says why it may be.
    compared_with_false: std::collections::BTreeMap<usize, usize>,
    /// Elements `t[i]` (of local tables, at local indices) the script
    /// compares with `nil`, by the two declarations, with the line: a test
    /// that an element which may be `false` passes.
    element_compared_with_nil: std::collections::BTreeMap<(usize, usize), usize>,
    depth: usize,
    too_deep: bool,
}

/// What the walk finds: the diagnostics and the facts the analysis
/// reports, apart from the state of the walk itself (scopes, loops,
/// functions), so that undoing what a silent pass of a loop reported is
/// one operation ([`Facts::forget_since`]).
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub diagnostics: Vec<Diagnostic>,
    /// What the code behind the reply being walked does.
    pub unit: Unit,
    pub chunk_varargs: bool,
    pub missing: MissingMembers,
    /// Globals the script tried to create: already reported, so reading
    /// them later is not reported again.
    pub refused_globals: HashSet<String>,
    /// In a library: what each registered callback does, by registration.
    pub function_walks: Vec<FunctionWalk>,
}

/// What the code behind one reply does, as the walk finds it: the
/// script's main chunk, or one registered callback of a library. A
/// callback is walked from an empty one, which it gives back whole
/// ([`Analyzer::walk_unit`]), so that every fact kept here is the
/// callback's own.
#[derive(Debug, Default)]
pub(crate) struct Unit {
    pub returns: Vec<ReturnSite>,
    pub may_write: bool,
    pub error_codes: ErrorCodes,
    /// The facts for its review (`--report`).
    pub review: Review,
    /// The prefixes keys are built from, which each call checks.
    pub key_prefixes: KeyPrefixes,
    pub params: ParamUsage,
    /// Where the elements of KEYS go.
    pub key_elements: KeyElements,
    /// What it reads from its `Json<T>` arguments.
    pub json_reads: Vec<crate::domain::json::JsonRead>,
    /// The parts of decoded arguments it writes itself, by argument.
    pub json_written: Vec<(usize, crate::domain::json::JsonPath)>,
}

impl Unit {
    /// What it does, its returns in source order.
    fn finish(self) -> FunctionWalk {
        let mut returns = self.returns;
        sort_returns(&mut returns);
        let mut review = self.review;
        review.finish();
        FunctionWalk {
            returns,
            review,
            may_write: self.may_write,
            error_codes: self.error_codes,
            key_prefixes: self.key_prefixes,
            json_reads: crate::domain::json::deduplicated(self.json_reads, &self.json_written),
        }
    }
}

impl Facts {
    /// How far the reports go now, to undo later ([`Self::forget_since`]).
    pub(super) fn mark(&self) -> Reported {
        Reported {
            diagnostics: self.diagnostics.len(),
            returns: self.unit.returns.len(),
        }
    }

    /// Undoes every diagnostic and return site reported since `mark`: a
    /// silent pass of a loop, walked only to settle the values at its
    /// head, reports nothing. The other facts are sets that the pass which
    /// reports adds again (a command used, an error code, a key prefix).
    pub(super) fn forget_since(&mut self, mark: Reported) {
        self.diagnostics.truncate(mark.diagnostics);
        self.unit.returns.truncate(mark.returns);
    }
}

impl<'a> Analyzer<'a> {
    fn new(context: Context<'a>, assignments: Assignments) -> Self {
        Self {
            context,
            facts: Facts::default(),
            scopes: Scopes::new(assignments),
            assignments_found: Assignments::default(),
            raised: false,
            last_call_many: false,
            protected_from: None,
            default_guard: None,
            reply_depth: 0,
            functions: Vec::new(),
            next_function_id: 0,
            loops: Vec::new(),
            compared_with_false: std::collections::BTreeMap::new(),
            element_compared_with_nil: std::collections::BTreeMap::new(),
            depth: 0,
            too_deep: false,
        }
    }

    /// The innermost function returns `returned` first.
    pub fn function_returned(&mut self, returned: &Value) {
        if let Some(function) = self.functions.last_mut() {
            let ty = returned.ty();
            function.returns = Some(match function.returns.take() {
                Some(returns) => {
                    // A path that gives nil or false (a `return nil`) stays
                    // a reason its calls may give it, whatever the other
                    // paths return: the call takes that path sometimes.
                    let absence = returns.absence.clone().or_else(|| ty.absence.clone());
                    Type {
                        absence,
                        ..returns.join(&ty)
                    }
                }
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
        self.facts.unit.review.loop_site(LoopSite {
            line: at.line,
            column: at.column,
            kind,
            bound,
        });
    }

    /// Shows every finding the moment `notify` describes, where the walk
    /// is now.
    fn observe(&mut self, notify: impl Fn(&dyn Finding, &mut Site<'_>)) {
        let mut site = Site {
            map: self.context.map,
            signature: self.context.signature,
            tables: self.context.tables,
            scopes: &self.scopes,
            functions: self.functions.len(),
            loops: self.loops.len(),
            diagnostics: &mut self.facts.diagnostics,
            code: Code::InternalError,
        };
        for &(code, finding) in self.context.findings {
            site.code = code;
            notify(finding, &mut site);
        }
    }

    fn declare(&mut self, name: &str, declared_at: usize, value: Value) {
        let depth = self.functions_depth();
        self.scopes.declare(name, declared_at, depth, value);
    }

    /// Shows every finding where the elements of KEYS went in the code
    /// behind the reply just walked.
    fn observe_key_elements(&mut self) {
        let elements = std::mem::take(&mut self.facts.unit.key_elements);
        self.observe(|finding, site| finding.key_elements(site, &elements));
        self.facts.unit.key_elements = elements;
    }

    fn finish(mut self) -> Walk {
        self.observe_key_elements();
        let findings = self.param_findings();
        self.facts.diagnostics.extend(findings);
        let missing = std::mem::take(&mut self.facts.missing);
        self.facts.diagnostics.extend(missing.into_notes());
        Walk {
            diagnostics: self.facts.diagnostics,
            script: self.facts.unit.finish(),
            chunk_varargs: self.facts.chunk_varargs,
        }
    }

    /// Walks, with `walk`, the code behind another reply (a library's
    /// callback) in `context`, from an empty [`Unit`]: returns its unit,
    /// and leaves the walk's context and the outer unit as they were.
    fn walk_unit(&mut self, context: Context<'a>, walk: impl FnOnce(&mut Self)) -> Unit {
        let outer_context = std::mem::replace(&mut self.context, context);
        let outer_unit = std::mem::take(&mut self.facts.unit);
        let outer_reply_depth = self.reply_depth;
        walk(self);
        self.reply_depth = outer_reply_depth;
        self.context = outer_context;
        std::mem::replace(&mut self.facts.unit, outer_unit)
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

    /// Guards the recursion: past [`WALK_DEPTH_LIMIT`] the subtree is
    /// skipped. The syntax pre-scan refuses scripts nesting more than
    /// [`MAX_NESTING`] levels first, so real input stays below it.
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth <= WALK_DEPTH_LIMIT {
            return true;
        }
        if !self.too_deep {
            self.too_deep = true;
            self.facts.diagnostics.push(Span::TOP.error(
                Code::Syntax,
                format!(
                    "the script nests blocks, brackets and operators more than {MAX_NESTING} levels deep"
                ),
                format!(
                    "Lua 5.1 refuses chunks with more than {MAX_NESTING} syntax levels; split the expression into locals"
                ),
            ));
        }
        false
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// How many diagnostics and return sites the walk had reported.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reported {
    diagnostics: usize,
    returns: usize,
}

/// How deep the walk may recurse: it enters a statement and then its
/// expression for one syntax level, so twice [`MAX_NESTING`] covers every
/// script the syntax pre-scan accepts.
const WALK_DEPTH_LIMIT: usize = MAX_NESTING * 2;

/// Source order, with falling off the end last.
fn sort_returns(returns: &mut [ReturnSite]) {
    returns.sort_by_key(|site| {
        let falls_off = site.shape == ReturnShape::FallsOffEnd;
        (falls_off, site.line, site.column)
    });
}

/// A declaration's identity: the byte offset of its name.
fn offset(token: &TokenReference) -> usize {
    token.token().start_position().bytes()
}

/// Whether an integer value is even, when that is known.
fn parity(value: &Value) -> Option<bool> {
    match value.as_number() {
        Some(number) if number.fract() == 0.0 => Some(number % 2.0 == 0.0),
        Some(_) => None,
        None => value.ty().parity(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::syntax::Prepared;

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
                findings: crate::findings::ALL,
                uncalled: &uncalled::uncalled_functions(&ast),
                escaping_tables: &json_tables::escaping_tables(&ast),
                escaping_replies: &json_tables::escaping_replies(&ast),
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
