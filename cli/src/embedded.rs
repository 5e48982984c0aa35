//! Lua scripts written as string literals in Go, Python, JavaScript,
//! TypeScript, Ruby and PHP sources, found with each language's own parser
//! (tree-sitter grammars), so that a literal is read with the language's
//! real rules: Go raw strings, Python triple quotes and prefixes, template
//! literals, Ruby heredocs, PHP heredocs and nowdocs, escapes, and literals
//! joined with `+` or `.`.
//!
//! A literal is a script when it is passed to an API that takes one
//! (`redis.NewScript`, `register_script`, `defineCommand`, `eval`, …),
//! directly or through the constant, variable or method it is assigned
//! to; or when its text calls `redis.call`/`redis.pcall` (or Valkey's
//! `server.call`/`server.pcall`) and parses as Lua. A literal with
//! interpolation (`${x}`, `#{x}`, `$x`, f-strings) is built at run time
//! and is not read. Each script keeps the host byte of every byte of its
//! text, so that diagnostics point into the host file.

use std::collections::HashMap;
use std::path::Path;

use tree_sitter::{Language, Node, Parser};

use crate::options::Count;

/// A language whose sources may embed scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    Go,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Ruby,
    Php,
}

impl Host {
    /// The language of a file, by its extension.
    pub fn of(path: &Path) -> Option<Host> {
        Some(match path.extension()?.to_str()? {
            "go" => Host::Go,
            "py" => Host::Python,
            "js" | "mjs" | "cjs" | "jsx" => Host::JavaScript,
            "ts" | "mts" | "cts" => Host::TypeScript,
            "tsx" => Host::Tsx,
            "rb" => Host::Ruby,
            "php" => Host::Php,
            _ => return None,
        })
    }

    fn language(self) -> Language {
        match self {
            Host::Go => tree_sitter_go::LANGUAGE.into(),
            Host::Python => tree_sitter_python::LANGUAGE.into(),
            Host::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Host::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Host::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Host::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Host::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        }
    }
}

/// A script found in a host file.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The script's text, as the program sends it.
    pub text: String,
    /// For each byte of `text`, and one past its end: the host byte it
    /// was written at.
    map: Vec<usize>,
    /// The key and argument counts the host calls state, when they agree.
    pub keys: Option<Count>,
    pub args: Option<Count>,
}

impl Embedded {
    /// The 1-based host line and column (in characters) of the script's
    /// `line` and `column`.
    pub fn host_position(&self, host: &str, line: usize, column: usize) -> (usize, usize) {
        let start = self
            .text
            .split_inclusive('\n')
            .take(line.saturating_sub(1))
            .map(str::len)
            .sum::<usize>()
            .min(self.text.len());
        let rest = &self.text[start..];
        let offset = start
            + rest
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(rest.len(), |(index, _)| index);
        let host_byte = self
            .map
            .get(offset)
            .copied()
            .unwrap_or_else(|| self.map.last().copied().unwrap_or(0));
        position(host, host_byte)
    }

    /// The 1-based host line of the script's first code (or comment):
    /// where a reader sees it start.
    pub fn host_line(&self, host: &str) -> usize {
        self.first_code(host).0
    }

    /// The host line and column of the script's first code (or comment),
    /// where a diagnostic about the whole script points.
    pub fn first_code(&self, host: &str) -> (usize, usize) {
        let first = self.text.find(|c: char| !c.is_whitespace()).unwrap_or(0);
        let host_byte = self.map.get(first).copied().unwrap_or(0);
        position(host, host_byte)
    }
}

/// The 1-based line and column (in characters) of byte `offset`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// What a host file holds: its scripts, and the host lines of the
/// scripts it builds at run time, which cannot be checked.
#[derive(Debug, Default)]
pub struct Found {
    pub scripts: Vec<Embedded>,
    pub built_at_run_time: Vec<usize>,
}

/// The scripts of a host file, in the order they appear. A file that
/// does not parse yields what its parsed parts hold.
pub fn scripts(host: Host, source: &str) -> Found {
    let mut parser = Parser::new();
    if parser.set_language(&host.language()).is_err() {
        return Found::default();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Found::default();
    };
    let mut finder = Finder {
        host,
        source,
        constants: HashMap::new(),
        joined_names: Vec::new(),
    };
    finder.constants = finder.constant_values(tree.root_node());
    finder.joined_names = finder.names_joined_at_run_time(tree.root_node());
    let mut literals = Vec::new();
    finder.collect_literals(tree.root_node(), false, &mut literals);
    let names = finder.names(&literals);
    let mut found: HashMap<usize, Embedded> = HashMap::new();
    let mut stated: HashMap<usize, (Stated, Stated)> = HashMap::new();
    // Literals passed to a script API, directly or by name, and script
    // objects called by the name they are bound to.
    let mut calls = Vec::new();
    finder.collect_calls(tree.root_node(), &mut calls);
    let objects = finder.script_objects(&calls, &literals, &names);
    for call in calls {
        let Some(use_) = finder
            .api_use(call)
            .or_else(|| finder.python_object_call(call, &objects))
        else {
            continue;
        };
        let Some(index) = finder.script_literal(use_.script, &literals, &names, &objects) else {
            continue;
        };
        let Some(script) = &literals[index].decoded else {
            continue;
        };
        found.entry(index).or_insert_with(|| script.clone());
        let (keys, args) = stated.entry(index).or_default();
        keys.add(use_.keys);
        args.add(use_.args);
    }
    for (index, (keys, args)) in stated {
        if let Some(script) = found.get_mut(&index) {
            script.keys = keys.agreed();
            script.args = args.agreed();
        }
    }
    // Literals whose text is plainly a script; a part of a text the
    // program joins at run time is none, but says a script is built there.
    let mut built_at_run_time = Vec::new();
    for (index, literal) in literals.iter().enumerate() {
        if found.contains_key(&index) {
            continue;
        }
        let is_part = literal.part
            || literal
                .owner
                .as_ref()
                .is_some_and(|owner| finder.joined_names.contains(owner));
        match &literal.decoded {
            Some(decoded) if !is_part && looks_like_lua(&decoded.text) => {
                found.insert(index, decoded.clone());
            }
            // One line per joined text: its first part that calls Redis.
            _ if literal.part && literal.first_part_calling_redis => {
                built_at_run_time.push(position(source, literal.start).0);
            }
            None if !literal.part && calls_redis(&literal.raw_text) => {
                built_at_run_time.push(position(source, literal.start).0);
            }
            _ => {}
        }
    }
    let mut scripts: Vec<(usize, Embedded)> = found.into_iter().collect();
    scripts.sort_by_key(|(index, _)| literals[*index].start);
    Found {
        scripts: scripts.into_iter().map(|(_, script)| script).collect(),
        built_at_run_time,
    }
}

/// What the calls passing a script say of one count.
#[derive(Debug, Default)]
enum Stated {
    #[default]
    Nothing,
    Agreed(Count),
    /// Two calls state other counts: it is not known.
    Disagreed,
}

impl Stated {
    fn add(&mut self, count: Option<Count>) {
        *self = match (std::mem::take(self), count) {
            (before, None) => before,
            (Stated::Nothing, Some(count)) => Stated::Agreed(count),
            (Stated::Agreed(before), Some(count)) if before == count => Stated::Agreed(before),
            _ => Stated::Disagreed,
        };
    }

    fn agreed(&self) -> Option<Count> {
        match self {
            Stated::Agreed(count) => Some(*count),
            _ => None,
        }
    }
}

/// A script's text calls the server (Redis or Valkey) and parses as Lua 5.1.
fn looks_like_lua(text: &str) -> bool {
    calls_redis(text) && redis_script_analysis::parses_as_lua(text)
}

/// A text calls the server as a script does: `redis.call(`/`redis.pcall(`,
/// or Valkey's spelling `server.call(`/`server.pcall(`. Host programs
/// often hold an RPC client or a web server named `server`, and text
/// about it (`"retry server.call(id)"`), so that spelling counts only
/// as a whole name (not `observer.call(` or `app.server.call(`), in a
/// text that also reads `KEYS`/`ARGV` or registers a function: what
/// every script or library that deserves checking does.
fn calls_redis(text: &str) -> bool {
    const REDIS: [&str; 4] = [
        "redis.call(",
        "redis.pcall(",
        "redis.call (",
        "redis.pcall (",
    ];
    const SERVER: [&str; 4] = [
        "server.call(",
        "server.pcall(",
        "server.call (",
        "server.pcall (",
    ];
    REDIS.iter().any(|needle| text.contains(needle))
        || SERVER.iter().any(|needle| contains_as_name(text, needle))
            && (contains_as_name(text, "KEYS")
                || contains_as_name(text, "ARGV")
                || text.contains(".register_function("))
}

/// `needle` (which starts with a name) occurs in `text` as a name of its
/// own: no name character, `.`, `:` or `$` just before it (not the end of
/// a longer name, nor a member of something else), and, when it ends with
/// a name character, none just after it (`KEYS`, not `KEYSPACE`).
fn contains_as_name(text: &str, needle: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let ends_with_name = needle.chars().next_back().is_some_and(is_name);
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        let joined_before = before.is_some_and(|c| is_name(c) || matches!(c, '.' | ':' | '$'));
        let joined_after = ends_with_name && after.is_some_and(is_name);
        !joined_before && !joined_after
    })
}

/// A literal (or a concatenation of literals) of the host file.
#[derive(Debug)]
struct Literal {
    /// The outermost node: the literal, or the concatenation.
    node_id: usize,
    start: usize,
    /// `None` when it is built at run time (interpolation).
    decoded: Option<Embedded>,
    /// Its text as written, for telling a script built at run time.
    raw_text: String,
    /// An operand of a concatenation with a run-time value.
    part: bool,
    /// The first such operand of its concatenation to call Redis.
    first_part_calling_redis: bool,
    /// The name it is assigned to or returned by, when there is one.
    owner: Option<String>,
}

/// How a call uses a script.
struct ApiUse<'tree> {
    script: Node<'tree>,
    keys: Option<Count>,
    args: Option<Count>,
}

impl<'tree> ApiUse<'tree> {
    /// The script at `script`, with the fixed counts of keys and
    /// arguments the call passes, where it says.
    fn of(script: Node<'tree>, keys: Option<usize>, args: Option<usize>) -> Self {
        let fixed = |fixed: usize| Count {
            fixed,
            variadic: false,
        };
        ApiUse {
            script,
            keys: keys.map(fixed),
            args: args.map(fixed),
        }
    }
}

/// A call of a client API: its node and its arguments.
struct Call<'a, 'tree> {
    node: Node<'tree>,
    arguments: &'a [Node<'tree>],
}

/// How a client API takes a script and its counts.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `f(count, src)` or `f(src)`.
    CountThenScript,
    /// `f(src, …)`: the script only.
    ScriptFirst,
    /// `script.Run(ctx, client, []string{keys…}, args…)`.
    RunOnReceiver,
    /// `Eval([ctx,] src, []string{keys…}, args…)`.
    GoEval,
    /// `eval(src, numkeys, keys…, args…)`; `keys_only` when the rest may
    /// end with a callback.
    NumberOfKeys { keys_only: bool },
    /// An object argument at `at` holding the script and the number of
    /// keys under these names.
    Options {
        at: usize,
        script: &'static str,
        number_of_keys: &'static str,
    },
    /// ioredis' or node-redis' `eval`.
    JavaScriptEval,
    /// redis-rb's `eval`, by position or by name.
    RubyEval,
    /// `script('load', src)`.
    ScriptLoad,
    /// phpredis', Predis' and Laravel's `eval`.
    PhpEval,
}

/// A client API that takes a script: in which host languages, under
/// which names, and how.
struct ClientApi {
    hosts: &'static [Host],
    names: &'static [&'static str],
    shape: Shape,
}

const JAVASCRIPT: &[Host] = &[Host::JavaScript, Host::TypeScript, Host::Tsx];

/// The client APIs whose calls the checker reads.
const CLIENT_APIS: &[ClientApi] = &[
    // redigo: NewScript(keyCount, src); go-redis: NewScript(src).
    ClientApi {
        hosts: &[Host::Go],
        names: &["NewScript"],
        shape: Shape::CountThenScript,
    },
    // go-redis: script.Run(ctx, client, []string{keys…}, args…).
    ClientApi {
        hosts: &[Host::Go],
        names: &["Run", "RunRO"],
        shape: Shape::RunOnReceiver,
    },
    ClientApi {
        hosts: &[Host::Go],
        names: &["NewLuaScript", "NewLuaScriptReadOnly", "NewScriptRO"],
        shape: Shape::ScriptFirst,
    },
    // go-redis: Eval(ctx, src, []string{keys…}, args…).
    ClientApi {
        hosts: &[Host::Go],
        names: &["Eval", "EvalRO"],
        shape: Shape::GoEval,
    },
    ClientApi {
        hosts: &[Host::Python],
        names: &["register_script"],
        shape: Shape::ScriptFirst,
    },
    // redis-py: eval(src, numkeys, *keys_and_args).
    ClientApi {
        hosts: &[Host::Python],
        names: &["eval", "eval_ro"],
        shape: Shape::NumberOfKeys { keys_only: false },
    },
    // ioredis: defineCommand(name, { numberOfKeys, lua }).
    ClientApi {
        hosts: JAVASCRIPT,
        names: &["defineCommand"],
        shape: Shape::Options {
            at: 1,
            script: "lua",
            number_of_keys: "numberOfKeys",
        },
    },
    // node-redis: defineScript({ NUMBER_OF_KEYS, SCRIPT }).
    ClientApi {
        hosts: JAVASCRIPT,
        names: &["defineScript"],
        shape: Shape::Options {
            at: 0,
            script: "SCRIPT",
            number_of_keys: "NUMBER_OF_KEYS",
        },
    },
    ClientApi {
        hosts: JAVASCRIPT,
        names: &["eval", "evalRo", "eval_ro"],
        shape: Shape::JavaScriptEval,
    },
    ClientApi {
        hosts: &[Host::Ruby],
        names: &["eval", "evalsha_or_eval"],
        shape: Shape::RubyEval,
    },
    ClientApi {
        hosts: &[Host::Ruby, Host::Php],
        names: &["script"],
        shape: Shape::ScriptLoad,
    },
    ClientApi {
        hosts: &[Host::Php],
        names: &["eval", "eval_ro"],
        shape: Shape::PhpEval,
    },
];

struct Finder<'a> {
    host: Host,
    source: &'a str,
    /// Names bound to a number or a plain string, which a template may
    /// put in a script (`${LIMIT}`).
    constants: HashMap<String, String>,
    /// Names whose values the program joins to other text at run time
    /// (`'…' . $this->nowCode() . '…'`): the literals they return or hold
    /// are parts of scripts, not scripts.
    joined_names: Vec<String>,
}

/// Literal kinds of every grammar.
const STRING_KINDS: &[&str] = &[
    "interpreted_string_literal",
    "raw_string_literal",
    "string",
    "template_string",
    "encapsed_string",
    "heredoc",
    "nowdoc",
    "heredoc_body",
];

/// Nodes whose text is the literal's text.
const CONTENT_KINDS: &[&str] = &[
    "interpreted_string_literal_content",
    "raw_string_literal_content",
    "string_content",
    "string_fragment",
    "heredoc_content",
    "nowdoc_string",
];

/// Nodes that put a run-time value into the literal.
const DYNAMIC_KINDS: &[&str] = &[
    "interpolation",
    "template_substitution",
    "variable_name",
    "dynamic_variable_name",
    "member_access_expression",
    "subscript_expression",
    "format_specifier",
];

impl<'a> Finder<'a> {
    /// The source between two bytes; empty where the parser's bytes are
    /// not character boundaries, which valid UTF-8 never gives.
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.source.get(start..end).unwrap_or_default()
    }

    fn text(&self, node: Node<'_>) -> &'a str {
        self.slice(node.start_byte(), node.end_byte())
    }

    /// Every outermost literal or literal concatenation, in order.
    /// `part` when `node` is an operand of a concatenation with a value
    /// known only at run time.
    fn collect_literals(&self, node: Node<'_>, part: bool, out: &mut Vec<Literal>) {
        // A Ruby heredoc's body is a node of its own after the statement
        // that opens it.
        let ruby_heredoc = node.kind() == "heredoc_body" && self.host == Host::Ruby;
        if self.is_literal_expression(node) || ruby_heredoc {
            let mut literal = self.literal(node);
            literal.part = part;
            out.push(literal);
            return;
        }
        let joins = self.is_joining(node);
        let first = out.len();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.collect_literals(child, part || joins, out);
        }
        if joins && !part {
            let parts = &mut out[first..];
            if let Some(literal) = parts
                .iter_mut()
                .find(|literal| calls_redis(&literal.raw_text))
            {
                literal.first_part_calling_redis = true;
            }
        }
    }

    /// A `+` or `.` concatenation (of anything).
    fn is_joining(&self, node: Node<'_>) -> bool {
        matches!(
            node.kind(),
            "binary_expression" | "binary_operator" | "binary"
        ) && node
            .child_by_field_name("operator")
            .is_some_and(|operator| matches!(self.text(operator), "+" | "."))
    }

    /// Names called or read as operands of concatenations.
    fn names_joined_at_run_time(&self, root: Node<'_>) -> Vec<String> {
        let mut names = Vec::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if self.is_joining(node) && !self.is_concatenation(node) {
                for side in ["left", "right"] {
                    let Some(operand) = node.child_by_field_name(side) else {
                        continue;
                    };
                    if !self.is_literal_expression(operand) && !self.is_joining(operand) {
                        names.extend(self.reference_name(operand));
                    }
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        names
    }

    /// Names bound to a number literal or a plain string literal, each to
    /// one value.
    fn constant_values(&self, root: Node<'_>) -> HashMap<String, String> {
        let mut values: HashMap<String, Option<String>> = HashMap::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            let value = node
                .child_by_field_name("value")
                .or_else(|| node.child_by_field_name("right"));
            if let (Some(name), Some(value)) = (self.assigned_name(node), value) {
                let value = match value.kind() {
                    "expression_list" => value.named_child(0),
                    _ => Some(value),
                };
                let text = value.and_then(|value| match value.kind() {
                    "int_literal" | "float_literal" | "integer" | "float" | "number" => {
                        Some(self.text(value).to_owned())
                    }
                    kind if STRING_KINDS.contains(&kind) => {
                        let mut decoded = Decoded::default();
                        self.decode_into(value, &mut decoded)
                            .then_some(decoded.text)
                    }
                    // `-1`
                    _ if self.text(value).parse::<f64>().is_ok() => {
                        Some(self.text(value).to_owned())
                    }
                    _ => None,
                });
                if let Some(text) = text {
                    values
                        .entry(name)
                        .and_modify(|known| {
                            if known.as_deref() != Some(text.as_str()) {
                                *known = None;
                            }
                        })
                        .or_insert(Some(text));
                }
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        values
            .into_iter()
            .filter_map(|(name, value)| value.map(|value| (name, value)))
            .collect()
    }

    fn is_literal_expression(&self, node: Node<'_>) -> bool {
        let kind = node.kind();
        if kind == "heredoc_body" {
            return false;
        }
        STRING_KINDS.contains(&kind) || kind == "concatenated_string" || self.is_concatenation(node)
    }

    /// `a + b` (Go, JavaScript, Python, Ruby) or `a . b` (PHP) where both
    /// sides are literals.
    fn is_concatenation(&self, node: Node<'_>) -> bool {
        if !matches!(
            node.kind(),
            "binary_expression" | "binary_operator" | "binary"
        ) {
            return false;
        }
        let operator = node
            .child_by_field_name("operator")
            .map(|operator| self.text(operator));
        let joins = matches!(operator, Some("+") | Some("."));
        let sides = [
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ];
        joins
            && sides
                .iter()
                .all(|side| side.is_some_and(|side| self.is_literal_expression(side)))
    }

    fn literal(&self, node: Node<'_>) -> Literal {
        let mut decoded = Decoded::default();
        let dynamic = !self.decode_into(node, &mut decoded);
        let (start, text_node) = (node.start_byte(), node);
        let embedded = (!dynamic).then(|| {
            decoded.map.push(text_node.end_byte());
            Embedded {
                text: decoded.text,
                map: decoded.map,
                keys: None,
                args: None,
            }
        });
        Literal {
            node_id: node.id(),
            start,
            decoded: embedded,
            raw_text: self.text(node).to_owned(),
            part: false,
            first_part_calling_redis: false,
            owner: self.owner(node),
        }
    }

    /// Appends the literal's text; false when part of it is computed at
    /// run time.
    fn decode_into(&self, node: Node<'_>, out: &mut Decoded) -> bool {
        let kind = node.kind();
        if matches!(kind, "template_substitution" | "interpolation") {
            // `${LIMIT}` of a constant of this file: its text.
            let value = node
                .named_child(0)
                .filter(|_| node.named_child_count() == 1)
                .and_then(|name| self.constants.get(self.text(name)));
            if let Some(value) = value {
                out.text.push_str(value);
                out.map
                    .extend(std::iter::repeat_n(node.start_byte(), value.len()));
                return true;
            }
        }
        if DYNAMIC_KINDS.contains(&kind) {
            return false;
        }
        if kind == "escape_sequence" {
            out.escape(self.text(node), node.start_byte(), self.host);
            return true;
        }
        if CONTENT_KINDS.contains(&kind) {
            // Content may hold escapes and interpolations as children.
            let mut at = node.start_byte();
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                out.raw(self.slice(at, child.start_byte()), at);
                if !self.decode_into(child, out) {
                    return false;
                }
                at = child.end_byte();
            }
            out.raw(self.slice(at, node.end_byte()), at);
            return true;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        children
            .into_iter()
            .all(|child| self.decode_into(child, out))
    }

    /// The name a literal is assigned to, initialises, or is returned by.
    fn owner(&self, node: Node<'_>) -> Option<String> {
        let mut child = node;
        let mut parent = node.parent()?;
        // A Ruby heredoc's name is on the statement that opens it.
        if node.kind() == "heredoc_body" {
            let opener = node.prev_named_sibling()?;
            return self.assigned_name(opener);
        }
        loop {
            match parent.kind() {
                "parenthesized_expression" | "expression_list" | "literal_element" => {}
                // `release := redis.NewScript(…)`: the script object's name
                // names the script too (`release.Run(…)`).
                "argument_list" | "arguments"
                    if parent
                        .parent()
                        .is_some_and(|call| self.constructs_script(call)) => {}
                "call_expression" | "call" if self.constructs_script(parent) => {}
                "return_statement" => {
                    let function = ancestor(
                        parent,
                        &[
                            "function_declaration",
                            "method_declaration",
                            "function_definition",
                            "method",
                            "singleton_method",
                            "function_item",
                        ],
                    )?;
                    return function
                        .child_by_field_name("name")
                        .map(|name| self.text(name).to_owned());
                }
                _ => {
                    return self.assigned_name(parent).or_else(|| {
                        // A pair or field names it by its key.
                        let key = parent
                            .child_by_field_name("key")
                            .or_else(|| parent.child_by_field_name("property"))
                            .or_else(|| parent.child_by_field_name("name"))?;
                        (key.id() != child.id()).then(|| last_name(self.text(key)))
                    });
                }
            }
            child = parent;
            parent = parent.parent()?;
        }
    }

    /// The name on the left of an assignment or declaration.
    fn assigned_name(&self, node: Node<'_>) -> Option<String> {
        let name = match node.kind() {
            "assignment" | "assignment_expression" | "augmented_assignment" => {
                node.child_by_field_name("left")?
            }
            "const_spec"
            | "var_spec"
            | "variable_declarator"
            | "const_element"
            | "property_element"
            | "field_definition"
            | "public_field_definition" => node
                .child_by_field_name("name")
                .or_else(|| node.named_child(0))?,
            "short_var_declaration" => node.child_by_field_name("left")?,
            _ => return None,
        };
        Some(last_name(self.text(name)))
    }

    /// The literal `node` is, or holds as a whole.
    fn literal_of(&self, node: Node<'_>, literals: &[Literal]) -> Option<usize> {
        let mut node = node;
        while matches!(node.kind(), "parenthesized_expression" | "argument") {
            node = node.named_child(0)?;
        }
        if let Some(index) = literals
            .iter()
            .position(|literal| literal.node_id == node.id())
        {
            return Some(index);
        }
        // A Ruby heredoc argument: its body follows the statement that
        // opens it, in the enclosing statement list.
        if node.kind() == "heredoc_beginning" {
            let mut search = node;
            while let Some(parent) = search.parent() {
                if let Some(body) = next_heredoc_body(parent, node.end_byte()) {
                    return literals
                        .iter()
                        .position(|literal| literal.node_id == body.id());
                }
                search = parent;
            }
        }
        None
    }

    /// The literal a script API's script argument (or receiver) is: the
    /// literal itself, a name bound to it, or a name bound to a script
    /// object made of it.
    fn script_literal(
        &self,
        script: Node<'_>,
        literals: &[Literal],
        names: &HashMap<String, usize>,
        objects: &HashMap<String, usize>,
    ) -> Option<usize> {
        self.literal_of(script, literals).or_else(|| {
            let name = self.reference_name(script)?;
            names.get(&name).or_else(|| objects.get(&name)).copied()
        })
    }

    /// Script objects bound to a name, each to the literal it was made of:
    /// `self.extend_script = self.redis.register_script(EXTEND)` binds
    /// `extend_script`, `legacy := redigo.NewScript(1, src)` binds
    /// `legacy`. The literal may be named itself (`EXTEND`), so the object's
    /// name is not the literal's owner. A name bound to two scripts is left
    /// out.
    fn script_objects(
        &self,
        calls: &[Node<'_>],
        literals: &[Literal],
        names: &HashMap<String, usize>,
    ) -> HashMap<String, usize> {
        let no_objects = HashMap::new();
        bound_once(
            calls
                .iter()
                .filter(|call| self.constructs_script(**call))
                .filter_map(|call| {
                    let use_ = self.api_use(*call)?;
                    let index = self.script_literal(use_.script, literals, names, &no_objects)?;
                    Some((self.bound_name(*call)?, index))
                }),
        )
    }

    /// The name an expression's value is assigned to or declared as.
    fn bound_name(&self, expression: Node<'_>) -> Option<String> {
        let mut parent = expression.parent()?;
        while matches!(
            parent.kind(),
            "parenthesized_expression" | "expression_list" | "await" | "await_expression"
        ) {
            parent = parent.parent()?;
        }
        self.assigned_name(parent)
    }

    /// redis-py's script object called by its name:
    /// `self.extend_script(keys=[…], args=[…])`, or with the two lists in
    /// that order (`Script.__call__(keys, args, client)`); a list left out
    /// passes none. A typing cast around the name (`cast(Script,
    /// self.extend_script)(…)`) is seen through.
    fn python_object_call<'tree>(
        &self,
        call: Node<'tree>,
        objects: &HashMap<String, usize>,
    ) -> Option<ApiUse<'tree>> {
        if self.host != Host::Python {
            return None;
        }
        let mut callee = call.child_by_field_name("function")?;
        while let Some((name, arguments)) = self.call_parts(callee) {
            match (name.as_str(), arguments.as_slice()) {
                ("cast", [_, value]) => callee = *value,
                _ => break,
            }
        }
        if !objects.contains_key(&self.reference_name(callee)?) {
            return None;
        }
        let (_, arguments) = self.call_parts(call)?;
        // `*lists` or `**options`: which list is which is not known.
        if arguments
            .iter()
            .any(|node| matches!(node.kind(), "list_splat" | "dictionary_splat"))
        {
            return Some(ApiUse::of(callee, None, None));
        }
        let keyword = |name: &str| {
            arguments
                .iter()
                .filter(|node| node.kind() == "keyword_argument")
                .find(|node| {
                    node.child_by_field_name("name")
                        .is_some_and(|key| self.text(key) == name)
                })
                .and_then(|node| node.child_by_field_name("value"))
        };
        let positional: Vec<Node<'tree>> = arguments
            .iter()
            .copied()
            .filter(|node| node.kind() != "keyword_argument")
            .collect();
        let count = |name: &str, position: usize| match keyword(name)
            .or_else(|| positional.get(position).copied())
        {
            None => Some(0),
            Some(list) if list.kind() == "none" => Some(0),
            Some(list) => self.element_count(list),
        };
        Some(ApiUse::of(callee, count("keys", 0), count("args", 1)))
    }

    /// The last name of an identifier, attribute, member or constant
    /// reference (`self.LUA`, `Lock::RELEASE`, `LuaScripts::size()`).
    fn reference_name(&self, node: Node<'_>) -> Option<String> {
        let mut node = node;
        while matches!(node.kind(), "argument" | "parenthesized_expression") {
            node = node.named_child(0)?;
        }
        let text = match node.kind() {
            // A call of a function returning the literal.
            "call_expression"
            | "call"
            | "scoped_call_expression"
            | "member_call_expression"
            | "function_call_expression" => {
                let callee = node
                    .child_by_field_name("name")
                    .or_else(|| node.child_by_field_name("method"))
                    .or_else(|| node.child_by_field_name("function"))?;
                self.text(callee)
            }
            _ => self.text(node),
        };
        let name = last_name(text);
        (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
    }

    /// Names bound to one literal each (a name bound to two is left out).
    fn names(&self, literals: &[Literal]) -> HashMap<String, usize> {
        bound_once(
            literals
                .iter()
                .enumerate()
                .filter_map(|(index, literal)| Some((literal.owner.clone()?, index))),
        )
    }

    fn collect_calls<'tree>(&self, node: Node<'tree>, out: &mut Vec<Node<'tree>>) {
        if matches!(
            node.kind(),
            "call_expression"
                | "call"
                | "member_call_expression"
                | "scoped_call_expression"
                | "function_call_expression"
        ) {
            out.push(node);
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.collect_calls(child, out);
        }
    }

    /// A call that makes a script object of its argument.
    fn constructs_script(&self, call: Node<'_>) -> bool {
        self.call_parts(call).is_some_and(|(name, _)| {
            matches!(
                name.as_str(),
                "NewScript"
                    | "NewLuaScript"
                    | "NewLuaScriptReadOnly"
                    | "NewScriptRO"
                    | "register_script"
            )
        })
    }

    /// The callee's last name and the argument nodes.
    fn call_parts<'tree>(&self, call: Node<'tree>) -> Option<(String, Vec<Node<'tree>>)> {
        let callee = match self.host {
            Host::Ruby => call.child_by_field_name("method")?,
            Host::Php => call.child_by_field_name("name")?,
            _ => call.child_by_field_name("function")?,
        };
        let name = last_name(self.text(callee));
        let arguments = call.child_by_field_name("arguments")?;
        let mut cursor = arguments.walk();
        let nodes = arguments
            .named_children(&mut cursor)
            .filter(|node| !matches!(node.kind(), "comment" | "heredoc_body"))
            .collect();
        Some((name, nodes))
    }

    /// The script a call takes, and the counts it states.
    fn api_use<'tree>(&self, call: Node<'tree>) -> Option<ApiUse<'tree>> {
        let (name, arguments) = self.call_parts(call)?;
        let api = CLIENT_APIS
            .iter()
            .find(|api| api.hosts.contains(&self.host) && api.names.contains(&name.as_str()))?;
        let call = Call {
            node: call,
            arguments: &arguments,
        };
        match api.shape {
            Shape::CountThenScript => self.count_then_script(&call),
            Shape::ScriptFirst => Some(ApiUse::of(*arguments.first()?, None, None)),
            Shape::RunOnReceiver => self.run_on_receiver(&call),
            Shape::GoEval => self.go_eval(&call),
            Shape::NumberOfKeys { keys_only } => self.number_of_keys(&call, keys_only),
            Shape::Options {
                at,
                script,
                number_of_keys,
            } => self.options(&call, at, script, number_of_keys),
            Shape::JavaScriptEval => self.javascript_eval(&call),
            Shape::RubyEval => self.ruby_eval(&call),
            Shape::ScriptLoad => self.script_load(&call),
            Shape::PhpEval => self.php_eval(&call),
        }
    }

    /// The integer literal at `index` among `call`'s arguments.
    fn integer_at(&self, call: &Call<'_, '_>, index: usize) -> Option<usize> {
        call.arguments
            .get(index)
            .and_then(|node| self.integer(*node))
    }

    /// How many arguments `call` passes from `from` on, when none of them
    /// is spread.
    fn count_from(&self, call: &Call<'_, '_>, from: usize) -> Option<usize> {
        let rest = call.arguments.get(from..)?;
        (!rest.iter().any(|node| self.is_spread(*node))).then_some(rest.len())
    }

    /// `f(count, src)` or `f(src)`.
    fn count_then_script<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        match call.arguments {
            [count, script] => Some(ApiUse::of(*script, self.integer(*count), None)),
            [script] => Some(ApiUse::of(*script, None, None)),
            _ => None,
        }
    }

    /// `script.Run(ctx, client, []string{keys…}, args…)`: the script is
    /// the receiver.
    fn run_on_receiver<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let receiver = call
            .node
            .child_by_field_name("function")?
            .child_by_field_name("operand")?;
        let keys = call
            .arguments
            .get(2)
            .and_then(|node| self.element_count(*node));
        Some(ApiUse::of(receiver, keys, self.count_from(call, 3)))
    }

    /// `Eval(ctx, src, []string{keys…}, args…)`, and before go-redis v8
    /// without the context.
    fn go_eval<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let script = usize::from(!self.is_string_like(*call.arguments.first()?));
        let keys = call
            .arguments
            .get(script + 1)
            .and_then(|node| self.element_count(*node));
        Some(ApiUse::of(
            *call.arguments.get(script)?,
            keys,
            self.count_from(call, script + 2),
        ))
    }

    /// `eval(src, numkeys, *keys_and_args)`; with `keys_only`, only the
    /// keys are sure (a callback may end the arguments).
    fn number_of_keys<'tree>(
        &self,
        call: &Call<'_, 'tree>,
        keys_only: bool,
    ) -> Option<ApiUse<'tree>> {
        let keys = self.integer_at(call, 1);
        let args = keys
            .filter(|_| !keys_only)
            .and_then(|keys| self.count_from(call, 2)?.checked_sub(keys));
        Some(ApiUse::of(*call.arguments.first()?, keys, args))
    }

    /// One object argument, at `at`, with the script under `script` and
    /// the number of keys under `number_of_keys`.
    fn options<'tree>(
        &self,
        call: &Call<'_, 'tree>,
        at: usize,
        script: &str,
        number_of_keys: &str,
    ) -> Option<ApiUse<'tree>> {
        let options = *call.arguments.get(at)?;
        let source = self.property(options, &[script])?;
        let keys = self
            .property(options, &[number_of_keys])
            .and_then(|node| self.integer(node));
        Some(ApiUse::of(source, keys, None))
    }

    /// ioredis: `eval(src, numkeys, …)`; node-redis: `eval(src, { keys,
    /// arguments })`.
    fn javascript_eval<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let script = *call.arguments.first()?;
        match call.arguments.get(1) {
            Some(options) if options.kind() == "object" => {
                let count = |name: &str| {
                    self.property(*options, &[name])
                        .and_then(|node| self.element_count(node))
                };
                Some(ApiUse::of(script, count("keys"), count("arguments")))
            }
            _ => self.number_of_keys(call, true),
        }
    }

    /// `eval(src, keys: […], argv: […])` or `eval(src, […], […])`.
    fn ruby_eval<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let script = *call.arguments.first()?;
        let by_name = |key: &str| {
            call.arguments
                .iter()
                .filter(|node| node.kind() == "pair")
                .find(|pair| {
                    pair.child_by_field_name("key").is_some_and(|k| {
                        self.text(k).trim_end_matches(':').trim_start_matches(':') == key
                    })
                })
                .and_then(|pair| pair.child_by_field_name("value"))
        };
        let array = |key: &str, position: usize| {
            by_name(key)
                .or_else(|| {
                    call.arguments
                        .get(position)
                        .copied()
                        .filter(|node| node.kind() == "array")
                })
                .and_then(|node| self.element_count(node))
        };
        Some(ApiUse::of(script, array("keys", 1), array("argv", 2)))
    }

    /// `script('load', src)`, `script(:load, src)`.
    fn script_load<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let load = call.arguments.first().is_some_and(|node| {
            self.text(*node)
                .trim_matches(|c| matches!(c, ':' | '\'' | '"'))
                .eq_ignore_ascii_case("load")
        });
        load.then(|| {
            call.arguments
                .get(1)
                .map(|script| ApiUse::of(*script, None, None))
        })
        .flatten()
    }

    /// phpredis: `eval(src, [keys…, args…], numKeys)`; Predis and Laravel:
    /// `eval(src, numkeys, …)`.
    fn php_eval<'tree>(&self, call: &Call<'_, 'tree>) -> Option<ApiUse<'tree>> {
        let script = *call.arguments.first()?;
        let second = call
            .arguments
            .get(1)
            .map(|node| self.unwrap_argument(*node));
        match second {
            Some(array) if array.kind() == "array_creation_expression" => {
                let all = self.element_count(array);
                let keys = self.integer_at(call, 2).or(Some(0));
                let args = all.zip(keys).and_then(|(all, keys)| all.checked_sub(keys));
                Some(ApiUse::of(script, keys, args))
            }
            _ => self.number_of_keys(call, false),
        }
    }

    /// A string literal, or a name other than a context's: what may hold
    /// a script.
    fn is_string_like(&self, node: Node<'_>) -> bool {
        STRING_KINDS.contains(&node.kind())
            || self.is_concatenation(node)
            || (node.kind() == "identifier" && !matches!(self.text(node), "ctx" | "context"))
    }

    fn unwrap_argument<'tree>(&self, node: Node<'tree>) -> Node<'tree> {
        if node.kind() == "argument" {
            node.named_child(0).unwrap_or(node)
        } else {
            node
        }
    }

    fn is_spread(&self, node: Node<'_>) -> bool {
        matches!(
            node.kind(),
            "spread_element"
                | "variadic_argument"
                | "list_splat"
                | "splat_argument"
                | "variadic_unpacking"
        ) || self.text(node).starts_with("...")
            || self.text(node).ends_with("...")
    }

    /// An integer literal's value.
    fn integer(&self, node: Node<'_>) -> Option<usize> {
        let node = self.unwrap_argument(node);
        self.text(node).replace('_', "").parse().ok()
    }

    /// The element count of a list, array or composite literal without
    /// spreads.
    fn element_count(&self, node: Node<'_>) -> Option<usize> {
        let node = self.unwrap_argument(node);
        let list = match node.kind() {
            "composite_literal" => node.child_by_field_name("body")?,
            "array" | "list" | "array_creation_expression" | "tuple" => node,
            _ => return None,
        };
        let mut cursor = list.walk();
        let elements: Vec<Node<'_>> = list
            .named_children(&mut cursor)
            .filter(|child| child.kind() != "comment")
            .collect();
        (!elements.iter().any(|element| {
            self.is_spread(*element)
                || element
                    .named_child(0)
                    .is_some_and(|inner| self.is_spread(inner))
        }))
        .then_some(elements.len())
    }

    /// The value of an object literal's property.
    fn property<'tree>(&self, object: Node<'tree>, names: &[&str]) -> Option<Node<'tree>> {
        if object.kind() != "object" {
            return None;
        }
        let mut cursor = object.walk();
        object.named_children(&mut cursor).find_map(|pair| {
            if pair.kind() == "shorthand_property_identifier" && names.contains(&self.text(pair)) {
                return Some(pair);
            }
            let key = pair.child_by_field_name("key")?;
            let key = self.text(key).trim_matches(|c| c == '\'' || c == '"');
            names
                .contains(&key)
                .then(|| pair.child_by_field_name("value"))
                .flatten()
        })
    }
}

/// Each name bound to one literal (by index); a name bound to two is left
/// out, since which one a use means is not known.
fn bound_once(bindings: impl IntoIterator<Item = (String, usize)>) -> HashMap<String, usize> {
    let mut bound: HashMap<String, Option<usize>> = HashMap::new();
    for (name, index) in bindings {
        bound
            .entry(name)
            .and_modify(|known| {
                if *known != Some(index) {
                    *known = None;
                }
            })
            .or_insert(Some(index));
    }
    bound
        .into_iter()
        .filter_map(|(name, index)| index.map(|index| (name, index)))
        .collect()
}

fn ancestor<'tree>(node: Node<'tree>, kinds: &[&str]) -> Option<Node<'tree>> {
    let mut current = node.parent();
    while let Some(parent) = current {
        if kinds.contains(&parent.kind()) {
            return Some(parent);
        }
        current = parent.parent();
    }
    None
}

/// The first Ruby heredoc body under `node` that starts after `after`.
fn next_heredoc_body<'tree>(node: Node<'tree>, after: usize) -> Option<Node<'tree>> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|child| child.kind() == "heredoc_body" && child.start_byte() >= after)
}

/// `self.LUA_RELEASE` → `LUA_RELEASE`; `Lock::SCRIPT` → `SCRIPT`.
fn last_name(text: &str) -> String {
    text.rsplit(['.', ':', '>', '$', ' '])
        .next()
        .unwrap_or(text)
        .trim_end_matches("()")
        .trim()
        .to_owned()
}

/// A literal's text being built, with the host byte of each byte.
#[derive(Debug, Default)]
struct Decoded {
    text: String,
    map: Vec<usize>,
}

impl Decoded {
    fn raw(&mut self, text: &str, at: usize) {
        self.text.push_str(text);
        self.map.extend((0..text.len()).map(|offset| at + offset));
    }

    /// A backslash escape, decoded as the C-family languages read it; every
    /// byte it gives maps to the backslash.
    fn escape(&mut self, escape: &str, at: usize, host: Host) {
        let body = escape.strip_prefix('\\').unwrap_or(escape);
        let decoded: String = match body.chars().next() {
            Some('n') => "\n".into(),
            Some('t') => "\t".into(),
            Some('r') => "\r".into(),
            Some('0') if body.len() == 1 => "\0".into(),
            Some('x') => u32::from_str_radix(&body[1..], 16)
                .ok()
                .and_then(char::from_u32)
                .map(String::from)
                .unwrap_or_default(),
            Some('u') => {
                let digits = body[1..].trim_matches(|c| c == '{' || c == '}');
                u32::from_str_radix(digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .map(String::from)
                    .unwrap_or_default()
            }
            // A line continuation joins the lines.
            Some('\n') if host != Host::Go => String::new(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        self.text.push_str(&decoded);
        self.map.extend(std::iter::repeat_n(at, decoded.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts of the scripts found, and the run-time lines.
    fn found(host: Host, source: &str) -> (Vec<String>, Vec<usize>) {
        let found = scripts(host, source);
        let texts = found
            .scripts
            .iter()
            .map(|script| script.text.clone())
            .collect();
        (texts, found.built_at_run_time)
    }

    #[test]
    fn go_raw_and_interpreted_strings_and_their_concatenation() {
        let (texts, _) = found(
            Host::Go,
            "package x\nvar a = redis.NewScript(`return redis.call(\"GET\", KEYS[1]) -- \\n stays`)\nconst b = \"return redis.call('GET', \\\"k\\\")\\n\" +\n\t`.. 'x'`\n",
        );
        assert_eq!(
            texts,
            [
                "return redis.call(\"GET\", KEYS[1]) -- \\n stays",
                "return redis.call('GET', \"k\")\n.. 'x'",
            ]
        );
    }

    #[test]
    fn python_prefixes_triple_quotes_and_implicit_concatenation() {
        let (texts, run_time) = found(
            Host::Python,
            "A = r'''return redis.call('GET', '\\n')'''\nB = (\"return \" \"redis.call('DEL', KEYS[1])\")\nC = f\"return redis.call('GET', '{key}')\"\nD = f\"return redis.call('GET', 'x')\"\n",
        );
        assert_eq!(
            texts,
            [
                "return redis.call('GET', '\\n')",
                "return redis.call('DEL', KEYS[1])",
                "return redis.call('GET', 'x')",
            ]
        );
        assert_eq!(run_time, [3]);
    }

    #[test]
    fn template_literals_join_continued_lines_and_take_constants() {
        let (texts, run_time) = found(
            Host::JavaScript,
            "const N = -1;\nconst a = `return redis.call('GET', KEYS[1]) \\\nor ${N}`;\nconst b = `return redis.call('GET', ${key})`;\n",
        );
        assert_eq!(texts, ["return redis.call('GET', KEYS[1]) or -1"]);
        assert_eq!(run_time, [4]);
    }

    #[test]
    fn ruby_heredocs_by_name_and_as_arguments() {
        let source = "S = <<~'LUA'\n  return redis.call('GET', KEYS[1])\nLUA\nredis.eval(<<~LUA, keys: [k], argv: [a, b])\n  return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\nLUA\nT = <<~LUA\n  return redis.call('GET', '#{prefix}')\nLUA\n";
        let found = scripts(Host::Ruby, source);
        let counts: Vec<(Option<usize>, Option<usize>)> = found
            .scripts
            .iter()
            .map(|script| (script.keys.map(|c| c.fixed), script.args.map(|c| c.fixed)))
            .collect();
        assert_eq!(counts, [(None, None), (Some(1), Some(2))]);
        assert_eq!(found.scripts[1].host_line(source), 5);
        assert_eq!(found.built_at_run_time, [7]);
    }

    #[test]
    fn php_nowdocs_heredocs_and_functions_returning_scripts() {
        let source = "<?php\nclass L {\n  static function size() {\n    return <<<'LUA'\nreturn redis.call('llen', KEYS[1])\nLUA;\n  }\n}\n$r->eval(L::size(), 1, 'q');\n$s = \"return redis.call('get', '$key')\";\n";
        let found = scripts(Host::Php, source);
        assert_eq!(found.scripts.len(), 1);
        assert_eq!(found.scripts[0].keys.map(|count| count.fixed), Some(1));
        assert_eq!(found.scripts[0].host_line(source), 5);
        assert_eq!(found.built_at_run_time, [10]);
    }

    /// Each script's stated (keys, args), fixed counts only.
    fn counts(host: Host, source: &str) -> Vec<(Option<usize>, Option<usize>)> {
        scripts(host, source)
            .scripts
            .iter()
            .map(|script| (script.keys.map(|c| c.fixed), script.args.map(|c| c.fixed)))
            .collect()
    }

    #[test]
    fn a_script_object_called_through_its_attribute_gives_the_counts() {
        let class = |call: &str| {
            format!(
                "EXTEND = \"\"\"return redis.call('PEXPIRE', KEYS[1], ARGV[1])\"\"\"\n\nclass Lock:\n    def __init__(self, r):\n        self.extend_script = r.register_script(EXTEND)\n\n    def extend(self, ms):\n        return self.{call}\n"
            )
        };
        let stated = |call: &str| counts(Host::Python, &class(call));
        for (call, keys, args) in [
            (
                "extend_script(keys=[self.name], args=[ms, 'x'])",
                Some(1),
                Some(2),
            ),
            // In `Script.__call__`'s order, and a list left out passes none.
            ("extend_script([self.name], [ms])", Some(1), Some(1)),
            ("extend_script(keys=[self.name])", Some(1), Some(0)),
            (
                "extend_script(args=[ms], keys=[a, b], client=pipe)",
                Some(2),
                Some(1),
            ),
            (
                "cast(Script, self.extend_script)(keys=(self.name,), args=(ms,))",
                Some(1),
                Some(1),
            ),
            // Lists known only at run time state nothing.
            ("extend_script(keys=keys, args=[ms])", None, Some(1)),
            ("extend_script(**options)", None, None),
        ] {
            assert_eq!(stated(call), [(keys, args)], "{call}");
        }
        // A name bound to two scripts is neither.
        let two = "A = \"return redis.call('GET', KEYS[1])\"\nB = \"return redis.call('DEL', KEYS[1])\"\ns = r.register_script(A)\ns = r.register_script(B)\ns(keys=[k], args=[a])\n";
        assert_eq!(counts(Host::Python, two), [(None, None), (None, None)]);
    }

    #[test]
    fn a_go_script_object_made_of_a_named_literal_gives_the_counts() {
        let source = "package l\n\nconst src = `return redis.call('GET', KEYS[1])`\n\nvar get = redis.NewScript(src)\n\nfunc f() { get.Run(ctx, rdb, []string{k}, a, b) }\n";
        assert_eq!(counts(Host::Go, source), [(Some(1), Some(2))]);
    }

    #[test]
    fn positions_map_through_escapes_to_the_host() {
        let source = "x = \"\\tlocal v = redis.call('GET', KEYS[1])\\n\\treturn v + 1\"\n";
        let found = scripts(Host::Python, source);
        let script = &found.scripts[0];
        assert_eq!(
            script.text,
            "\tlocal v = redis.call('GET', KEYS[1])\n\treturn v + 1"
        );
        // `v` on the script's second line, after its tab.
        assert_eq!(script.host_position(source, 2, 9), (1, 55));
        assert_eq!(&source[54..55], "v");
    }

    proptest::proptest! {
        /// Any text, in any host language (pieces of literals, escapes,
        /// interpolations and calls, cut anywhere), gives scripts whose
        /// every position maps into the host file, and never a panic.
        #[test]
        fn any_source_maps_into_the_host(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "\"", "'", "`", "\"\"\"", "\\", "\\n", "\\x4", "\\u{1F6", "${", "#{", "}", "$x",
                "<<~LUA\n", "<<<'LUA'\n", "\nLUA\n", "\nLUA;\n", "redis.call('GET', KEYS[1])",
                "return ", " + ", " . ", "\n", "é", "(", ")", "eval(", "NewScript(", ", 1, ",
            ]), 0..40),
            host in proptest::sample::select(vec![
                Host::Go, Host::Python, Host::JavaScript, Host::TypeScript, Host::Tsx, Host::Ruby, Host::Php,
            ]),
        ) {
            let source: String = pieces.concat();
            for script in scripts(host, &source).scripts {
                proptest::prop_assert_eq!(script.map.len(), script.text.len() + 1);
                let lines = script.text.split('\n').count();
                for line in 1..=lines + 1 {
                    let (host_line, _) = script.host_position(&source, line, 1);
                    proptest::prop_assert!(host_line <= source.lines().count() + 1);
                }
            }
        }
    }

    #[test]
    fn calls_stating_other_counts_leave_them_unknown() {
        let script = "S = \"return redis.call('GET', KEYS[1])\"\n";
        let keys = |calls: &str| {
            scripts(Host::Python, &format!("{script}{calls}")).scripts[0]
                .keys
                .map(|count| count.fixed)
        };
        assert_eq!(keys("r.eval(S, 1, 'a')\nr.eval(S, 1, 'b')\n"), Some(1));
        assert_eq!(
            keys("r.eval(S, 1, 'a')\nr.eval(S, 2, 'a', 'b')\nr.eval(S, 1, 'a')\n"),
            None
        );
        assert_eq!(keys("r.register_script(S)\n"), None);
    }

    #[test]
    fn valkeys_server_spelling_is_a_script_call() {
        let (texts, run_time) = found(
            Host::Python,
            "A = \"\"\"\nlocal n = server.call('INCR', KEYS[1])\nreturn n\n\"\"\"\nB = 'return server.pcall (\"GET\", KEYS[1])'\nC = f\"return server.call('GET', '{prefix}' .. ARGV[1])\"\n",
        );
        assert_eq!(
            texts,
            [
                "\nlocal n = server.call('INCR', KEYS[1])\nreturn n\n",
                "return server.pcall (\"GET\", KEYS[1])"
            ]
        );
        assert_eq!(run_time, [6]);
        let (texts, _) = found(
            Host::JavaScript,
            "const LIB = `#!lua name=limiter\nserver.register_function('take', function(keys, args)\n  return server.call('DECR', keys[1])\nend)`;\n",
        );
        assert_eq!(texts.len(), 1, "{texts:?}");
    }

    #[test]
    fn other_texts_about_a_server_are_no_scripts() {
        // Each parses as Lua, or is built at run time, and names
        // `server.call` without being a script: a member of a longer
        // name, an RPC call with no KEYS or ARGV, a key name.
        for source in [
            "a = 'observer.call(KEYS)'\n",
            "a = 'app.server.call(ARGV)'\n",
            "a = 'server.call(\"ping\")'\n",
            "a = f'server.call({method})'\n",
            "a = 'server.call(KEYSPACE)'\n",
        ] {
            let (texts, run_time) = found(Host::Python, source);
            assert!(
                texts.is_empty() && run_time.is_empty(),
                "{source}: {texts:?} {run_time:?}"
            );
        }
    }

    #[test]
    fn a_literal_that_is_not_lua_is_no_script() {
        let (texts, run_time) = found(
            Host::Go,
            "package x\n// redis.NewScript(`return redis.call('GET', KEYS[1])`)\nconst doc = \"call redis.call( to run a command\"\n",
        );
        assert!(
            texts.is_empty() && run_time.is_empty(),
            "{texts:?} {run_time:?}"
        );
    }
}
