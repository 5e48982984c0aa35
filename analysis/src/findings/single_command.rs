//! `single_command`: a script whose work one command does on every server
//! of the target. A compare-and-delete (`GET` a key, compare with an
//! argument, `DEL` it on a match) is `DELIFEQ` on Valkey 9.0 and later and
//! `DELEX … IFEQ` on Redis 8.4 and later; a compare-and-set (`SET` on a
//! match) is `SET … IFEQ` on Valkey 8.1 and Redis 8.4 and later. One command is atomic as the script is, needs no script cache,
//! and is cheaper for the server; where some server of the target lacks
//! the command (the default target, which covers every supported server),
//! nothing is said.
//!
//! The pattern is matched as written, so that the claim is a proof: an
//! `if` whose condition compares `redis.call('GET', key)` (directly, or
//! through a local the statement before assigns it to; `redis.call` itself
//! or a local alias of it) with an expression that calls nothing, whose
//! block does nothing but delete (or set, without options) that same key,
//! then return, and whose `else`, if any, only returns a literal.

use full_moon::ast::{
    BinOp, Block, Call, Expression, FunctionArgs, FunctionCall, LastStmt, Prefix, Stmt, Suffix,
    Var,
};
use full_moon::tokenizer::TokenReference;

use crate::domain::scope::Binding;
use crate::domain::value::Value;
use crate::interp::observe::{Branch, Certainty, Finding, Site};
use crate::model::commands::{self, shapes};
use crate::model::target::ReleaseSet;
use crate::source::span::{expression_end, expression_start};
use crate::source::tokens::{identifier, string_literal};

pub(crate) struct SingleCommand;

/// What the block of a compare-and-… does with the key.
enum Action {
    /// `DEL key` or `UNLINK key`.
    Delete,
    /// `SET key value`, the value as written.
    Set(String),
}

impl Finding for SingleCommand {
    fn branch(&self, site: &mut Site<'_>, branch: &Branch<'_>) {
        let (statement, previous) = (branch.statement, branch.previous);
        let reader = Reader { site: &*site };
        // Another branch may only answer a mismatch with a literal, as
        // the command does (`else return 0 end`).
        if statement
            .else_if()
            .is_some_and(|branches| !branches.is_empty())
            || statement
                .else_block()
                .is_some_and(|block| !only_returns_literals(block))
        {
            return;
        }
        let Some((key, expected)) = reader.compared_get(statement.condition(), previous) else {
            return;
        };
        let Some(action) = reader.only_action(statement.block(), &key) else {
            return;
        };
        let releases = site.signature().target.releases();
        let (command, replacement, does, answers) = match &action {
            Action::Delete if every_release_has(releases, "delifeq", None) => (
                "DELIFEQ",
                format!("DELIFEQ {key} {expected}"),
                "deletes",
                "1 when it deleted, 0 otherwise",
            ),
            Action::Delete if every_release_has(releases, "delex", Some("IFEQ")) => (
                "DELEX … IFEQ",
                format!("DELEX {key} IFEQ {expected}"),
                "deletes",
                "1 when it deleted, 0 otherwise",
            ),
            Action::Set(value) if every_release_has(releases, "set", Some("IFEQ")) => (
                "SET … IFEQ",
                format!("SET {key} {value} IFEQ {expected}"),
                "sets",
                "OK when it set, nil otherwise",
            ),
            _ => return,
        };
        let span = site.map().expression(statement.condition());
        let target = site.signature().target.phrase();
        site.report(
            Certainty::Sometimes,
            span,
            format!(
                "this compares the value of `{key}` with `{expected}` and {does} `{key}` on a match: `{command}` does that in one command on every server of the target ({target})"
            ),
            format!(
                "send `{replacement}` instead of this script (one command is atomic as well, with no script to cache; it answers {answers}), or call it from the script if the script does more"
            ),
        );
    }
}

/// Reads the pattern as written, resolving names where the walk is.
struct Reader<'s, 'a> {
    site: &'s Site<'a>,
}

impl Reader<'_, '_> {
    /// The key and the compared expression, as written, of a condition
    /// `redis.call('GET', key) == expected` (either side; the call
    /// directly or through the local `previous` assigns it to).
    fn compared_get(
        &self,
        condition: &Expression,
        previous: Option<&Stmt>,
    ) -> Option<(String, String)> {
        let Expression::BinaryOperator { lhs, binop, rhs } = condition else {
            return None;
        };
        if !matches!(binop, BinOp::TwoEqual(_)) {
            return None;
        }
        for (get, other) in [(&**lhs, &**rhs), (&**rhs, &**lhs)] {
            let key = self
                .get_key(get)
                .or_else(|| self.local_get_key(get, previous));
            if let Some(key) = key
                && !calls_anything(other)
            {
                return Some((key, self.written(other)?));
            }
        }
        None
    }

    /// The key of `redis.call('GET', key)`, as written.
    fn get_key(&self, expression: &Expression) -> Option<String> {
        let Expression::FunctionCall(call) = expression else {
            return None;
        };
        match self.command_call(call)?.as_slice() {
            [name, key] if name.eq_ignore_ascii_case("get") => Some(key.clone()),
            _ => None,
        }
    }

    /// The key of `local name = redis.call('GET', key)` in `previous`,
    /// when `expression` is that `name`.
    fn local_get_key(&self, expression: &Expression, previous: Option<&Stmt>) -> Option<String> {
        let Expression::Var(Var::Name(name)) = expression else {
            return None;
        };
        let Some(Stmt::LocalAssignment(local)) = previous else {
            return None;
        };
        let names: Vec<_> = local.names().iter().collect();
        let values: Vec<_> = local.expressions().iter().collect();
        match (names.as_slice(), values.as_slice()) {
            ([assigned], [value]) if identifier(assigned) == identifier(name) => {
                self.get_key(value)
            }
            _ => None,
        }
    }

    /// What `block` does when it does nothing but delete or set `key`
    /// (then return, or fall off its end).
    fn only_action(&self, block: &Block, key: &str) -> Option<Action> {
        let statements: Vec<&Stmt> = block.stmts().collect();
        let call = match (statements.as_slice(), block.last_stmt()) {
            ([], Some(LastStmt::Return(returned))) => {
                let values: Vec<_> = returned.returns().iter().collect();
                match values.as_slice() {
                    [Expression::FunctionCall(call)] => call,
                    _ => return None,
                }
            }
            ([Stmt::FunctionCall(call)], None) => call,
            ([Stmt::FunctionCall(call)], Some(LastStmt::Return(returned)))
                if returned.returns().iter().all(is_literal) =>
            {
                call
            }
            _ => return None,
        };
        match self.command_call(call)?.as_slice() {
            [name, written] if written == key => match name.to_ascii_lowercase().as_str() {
                "del" | "unlink" => Some(Action::Delete),
                _ => None,
            },
            [name, written, value] if written == key && name.eq_ignore_ascii_case("set") => {
                Some(Action::Set(value.clone()))
            }
            _ => None,
        }
    }

    /// The command name (a literal) and the other arguments, as written,
    /// of `redis.call(…)` (`server.call` on Valkey); `None` for anything
    /// else, `redis.pcall` included (it hands errors back).
    fn command_call(&self, call: &FunctionCall) -> Option<Vec<String>> {
        let Prefix::Name(name) = call.prefix() else {
            return None;
        };
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        let arguments = match suffixes.as_slice() {
            // `redis.call(…)`, `server.call(…)`.
            [
                Suffix::Index(full_moon::ast::Index::Dot { name: member, .. }),
                Suffix::Call(Call::AnonymousCall(arguments)),
            ] if self.is_global(identifier(name), &["redis", "server"])
                && identifier(member) == "call" =>
            {
                arguments
            }
            // `rcall(…)` after `local rcall = redis.call`.
            [Suffix::Call(Call::AnonymousCall(arguments))] if self.is_call_alias(name) => arguments,
            _ => return None,
        };
        let FunctionArgs::Parentheses { arguments, .. } = &**arguments else {
            return None;
        };
        let mut written = Vec::new();
        for (index, argument) in arguments.iter().enumerate() {
            if index == 0 {
                let Expression::String(token) = argument else {
                    return None;
                };
                written.push(string_literal(self.site.map(), token));
            } else if calls_anything(argument) {
                return None;
            } else {
                written.push(self.written(argument)?);
            }
        }
        Some(written)
    }

    /// Whether `name` is one of the sandbox's globals `names`, not a local
    /// of the script.
    fn is_global(&self, name: &str, names: &[&str]) -> bool {
        names.contains(&name)
            && self.site.resolve(name) == Binding::Global
    }

    /// Whether the local `name` holds `redis.call` (`server.call`).
    fn is_call_alias(&self, name: &TokenReference) -> bool {
        matches!(
            self.site.resolve(identifier(name)),
            Binding::Local {
                value: Value::Builtin { ref global, member: Some(ref member) },
                ..
            } if matches!(global.as_str(), "redis" | "server") && member == "call"
        )
    }

    /// An expression as the source writes it.
    fn written(&self, expression: &Expression) -> Option<String> {
        let start = expression_start(expression)?.bytes();
        let end = expression_end(expression)?.bytes();
        self.site.map().text(start, end).map(str::to_owned)
    }
}

/// Whether `command` exists on every release of `releases`, with `token`
/// among its arguments when one is given.
fn every_release_has(releases: ReleaseSet, command: &str, token: Option<&str>) -> bool {
    let Some(entry) = commands::lookup(command) else {
        return false;
    };
    if !entry.releases().contains_all(releases) {
        return false;
    }
    let Some(token) = token else {
        return true;
    };
    let Some(shape) = shapes::shape(command) else {
        return false;
    };
    let covered = shape
        .forms_for(releases)
        .filter(|form| has_token(form.arguments, token))
        .fold(ReleaseSet::NONE, |covered, form| {
            covered.union(form.releases)
        });
    covered.contains_all(releases)
}

/// Whether `token` is one of `arguments`' words, nested ones included.
fn has_token(arguments: &[shapes::Argument], token: &str) -> bool {
    arguments.iter().any(|argument| {
        argument
            .token
            .is_some_and(|word| word.eq_ignore_ascii_case(token))
            || match argument.kind {
                shapes::ArgumentKind::OneOf(inner) | shapes::ArgumentKind::Block(inner) => {
                    has_token(inner, token)
                }
                _ => false,
            }
    })
}

/// Whether evaluating `expression` calls a function (so that its text
/// may not name the same value twice).
fn calls_anything(expression: &Expression) -> bool {
    match expression {
        Expression::FunctionCall(_) => true,
        Expression::Parentheses { expression, .. } => calls_anything(expression),
        Expression::UnaryOperator { expression, .. } => calls_anything(expression),
        Expression::BinaryOperator { lhs, rhs, .. } => calls_anything(lhs) || calls_anything(rhs),
        Expression::Var(Var::Expression(var)) => var.suffixes().any(|suffix| {
            matches!(suffix, Suffix::Call(_))
                || matches!(suffix, Suffix::Index(full_moon::ast::Index::Brackets { expression, .. }) if calls_anything(expression))
        }),
        Expression::Var(_) => false,
        Expression::Number(_) | Expression::String(_) | Expression::Symbol(_) => false,
        _ => true,
    }
}

/// Whether `block` does nothing but return literals (or nothing).
fn only_returns_literals(block: &Block) -> bool {
    block.stmts().next().is_none()
        && match block.last_stmt() {
            None => true,
            Some(LastStmt::Return(returned)) => returned.returns().iter().all(is_literal),
            Some(_) => false,
        }
}

/// A literal (`return 1`, `return 'OK'`).
fn is_literal(expression: &Expression) -> bool {
    matches!(
        expression,
        Expression::Number(_) | Expression::String(_) | Expression::Symbol(_)
    )
}
