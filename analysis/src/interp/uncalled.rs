//! Local functions the script never refers to after defining them: their
//! code never runs, so what would fail there fails on no call.
//!
//! A function is called only through a name or a value that holds it; a
//! local function whose name no other part of the chunk mentions (a read,
//! a call, an assignment, even one inside its own body) is never called.
//! Names are compared as written, across scopes: a mention of a
//! same-named local elsewhere counts, which keeps the answer on the side
//! of "may be called".

use std::collections::{HashMap, HashSet};

use full_moon::ast::{Ast, Expression, FunctionBody, LocalAssignment, LocalFunction, Prefix, Var};
use full_moon::visitors::{Visit, Visitor};

use crate::interp::library::callback_offset;
use crate::source::tokens::identifier;

/// Where the bodies of the local functions `ast` never refers to start
/// (as [`callback_offset`] gives it).
pub(crate) fn uncalled_functions(ast: &Ast) -> HashSet<usize> {
    let mut found = Mentions::default();
    ast.nodes().visit(&mut found);
    found
        .defined
        .into_iter()
        .filter(|(name, _)| !found.mentioned.contains_key(name.as_str()))
        .map(|(_, body)| body)
        .collect()
}

#[derive(Default)]
struct Mentions {
    /// Each local function's name and the offset of its body.
    defined: Vec<(String, usize)>,
    /// How often each name is mentioned other than where a local is
    /// declared.
    mentioned: HashMap<String, usize>,
}

impl Mentions {
    fn define(&mut self, name: &str, body: &FunctionBody) {
        self.defined.push((name.to_owned(), callback_offset(body)));
    }

    fn mention(&mut self, name: &str) {
        *self.mentioned.entry(name.to_owned()).or_default() += 1;
    }
}

impl Visitor for Mentions {
    fn visit_local_function(&mut self, function: &LocalFunction) {
        self.define(identifier(function.name()), function.body());
    }

    fn visit_local_assignment(&mut self, local: &LocalAssignment) {
        for (name, expression) in local.names().iter().zip(local.expressions().iter()) {
            if let Expression::Function(function) = expression {
                self.define(identifier(name), function.body());
            }
        }
    }

    fn visit_var(&mut self, var: &Var) {
        if let Var::Name(token) = var {
            self.mention(identifier(token));
        }
    }

    fn visit_prefix(&mut self, prefix: &Prefix) {
        if let Prefix::Name(token) = prefix {
            self.mention(identifier(token));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::syntax::Prepared;

    fn uncalled_names(source: &str) -> usize {
        let prepared = Prepared::new(source);
        let ast = prepared.parse().expect("valid Lua");
        uncalled_functions(&ast).len()
    }

    #[test]
    fn functions_no_name_refers_to_are_uncalled() {
        assert_eq!(
            uncalled_names("local function f() return x end\nreturn 1"),
            1
        );
        assert_eq!(
            uncalled_names("local f = function() return x end\nreturn 1"),
            1
        );
        assert_eq!(
            uncalled_names("local function f() return x end\nreturn f()"),
            0
        );
        assert_eq!(
            uncalled_names("local function f() return x end\nlocal t = {f}\nreturn t"),
            0
        );
        assert_eq!(
            uncalled_names("local function f() return x end\npcall(f)"),
            0
        );
        // A mention inside its own body counts: no guess about recursion.
        assert_eq!(
            uncalled_names("local function f(n) return f(n) end\nreturn 1"),
            0
        );
        // Nested: the inner one is mentioned, but inside an uncalled one.
        assert_eq!(
            uncalled_names(
                "local function outer()\n  local function inner() end\n  inner()\nend\nreturn 1"
            ),
            1
        );
    }
}
