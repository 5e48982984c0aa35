//! The tables the script encodes with `cjson.encode`: their named fields,
//! from the constructor and the assignments since, for the check of a
//! reply declared `Json<T>`.
//!
//! A table's fields are known only while every write to it is one the
//! walk sees. A local table the script hands to a function, calls a
//! method of, aliases or assigns again may change where the walk does
//! not look: such names are found before the walk ([`escaping_tables`]),
//! and their tables are not checked. Names are compared as written,
//! across scopes, which keeps the answer on the side of "may change".

use crate::source::text::is_lua_name;
use std::collections::HashSet;
use std::rc::Rc;

use full_moon::ast::{
    Assignment, Ast, Call, Expression, FunctionArgs, FunctionBody, FunctionCall, Index, Prefix,
    Return, Suffix, UnOp, Var,
};
use full_moon::tokenizer::TokenReference;
use full_moon::visitors::{Visit, Visitor};

use super::Analyzer;
use crate::domain::json::{EncodedField, EncodedKind, JsonEncoded};
use crate::domain::operand::Operand;
use crate::domain::types::{Kinds, Type};
use crate::domain::value::Value;
use crate::source::span::Span;
use crate::source::tokens::identifier;

impl Analyzer<'_> {
    /// `table.name = value`, `table['name'] = value` on the local `table`.
    pub(super) fn table_field_written(
        &mut self,
        table: &TokenReference,
        name: &str,
        value: &Value,
        span: Span,
    ) {
        let ty = value.field_type();
        self.change_table(table, |held| crate::domain::types::TableType {
            fields: held
                .fields
                .as_ref()
                .map(|fields| Rc::new(fields.with(name, ty.clone(), span))),
            ..held.clone()
        });
    }

    /// `table[key] = value` with a key computed at run time: any field
    /// may have changed.
    pub(super) fn table_fields_unknown(&mut self, table: &TokenReference) {
        self.change_table(table, |held| crate::domain::types::TableType {
            fields: None,
            ..held.clone()
        });
    }

    /// What `cjson.encode(operands…)` encodes, when it is a constructor or
    /// a local table whose every write the walk saw.
    pub(super) fn encoded_table(&self, operands: &[Operand]) -> Option<Rc<JsonEncoded>> {
        let operand = operands.first()?;
        let constructed = matches!(operand.value, Value::Table(Some(_)));
        let seen_whole = constructed
            || self
                .context
                .map
                .snippet(operand.span)
                .is_some_and(|written| {
                    is_lua_name(&written)
                        && !self.context.escaping_tables.contains(written.as_str())
                });
        if !seen_whole {
            return None;
        }
        let ty = operand.value.clone().stored().ty();
        let fields = ty.table_type()?.fields.as_deref()?;
        Some(Rc::new(JsonEncoded {
            fields: fields
                .known
                .iter()
                .map(|field| EncodedField {
                    name: field.name.clone(),
                    kind: encoded_kind(&field.ty),
                    always: field.always,
                    line: field.span.line,
                    column: field.span.column,
                    width: field.span.width,
                })
                .collect(),
            complete: fields.complete,
        }))
    }
}

/// What cjson writes for a value of type `ty`.
fn encoded_kind(ty: &Type) -> EncodedKind {
    let kinds = ty.kinds;
    if kinds.is_unknown() {
        return EncodedKind::Unknown;
    }
    for (within, kind) in [
        (Kinds::NIL, EncodedKind::Nil),
        (Kinds::OTHER, EncodedKind::Null),
        (Kinds::INTEGER, EncodedKind::Integer),
        (Kinds::FRACTION, EncodedKind::Fraction),
        (Kinds::NUMBER, EncodedKind::Number),
        (Kinds::STRING, EncodedKind::String),
        (Kinds::BOOLEAN, EncodedKind::Boolean),
        (Kinds::TABLE, EncodedKind::Table),
    ] {
        if kinds.within(within) {
            return kind;
        }
    }
    if kinds.within(Kinds::STRING | Kinds::FALSE) && ty.absence.is_some() {
        return EncodedKind::StringOrFalse;
    }
    if kinds.within(Kinds::NUMBER | Kinds::NIL) {
        return EncodedKind::NumberOrNil;
    }
    EncodedKind::Unknown
}

/// The names of locals whose table may change where the walk does not
/// look: every name mentioned other than as `name.field`, `name[key]`,
/// `#name`, `cjson.encode(name)` or in its `local` declaration.
pub(crate) fn escaping_tables(ast: &Ast) -> HashSet<String> {
    mentioned_unseen(ast, Mentions::default())
}

/// [`escaping_tables`], where the script's own `return t` (outside any
/// function) is no escape either: it ends the script, and what a command
/// replied is compared with the reply type only while no other mention
/// may have changed it.
pub(crate) fn escaping_replies(ast: &Ast) -> HashSet<String> {
    mentioned_unseen(
        ast,
        Mentions {
            chunk_returns_harmless: true,
            ..Mentions::default()
        },
    )
}

fn mentioned_unseen(ast: &Ast, mut mentions: Mentions) -> HashSet<String> {
    ast.nodes().visit(&mut mentions);
    mentions
        .mentioned
        .into_iter()
        .filter(|(_, at)| !mentions.harmless.contains(at))
        .map(|(name, _)| name)
        .collect()
}

#[derive(Default)]
struct Mentions {
    /// Every mention of a name as a value, with where it is written.
    mentioned: Vec<(String, usize)>,
    /// The mentions that neither change the table nor let it go.
    harmless: HashSet<usize>,
    /// `return t` in the main chunk counts as harmless.
    chunk_returns_harmless: bool,
    /// How many function bodies the visit is in.
    depth: usize,
}

fn offset(token: &TokenReference) -> usize {
    token.token().start_position().bytes()
}

impl Visitor for Mentions {
    fn visit_var(&mut self, var: &Var) {
        if let Var::Name(token) = var {
            self.mentioned
                .push((identifier(token).to_owned(), offset(token)));
        }
    }

    fn visit_prefix(&mut self, prefix: &Prefix) {
        if let Prefix::Name(token) = prefix {
            self.mentioned
                .push((identifier(token).to_owned(), offset(token)));
        }
    }

    fn visit_var_expression(&mut self, var: &full_moon::ast::VarExpression) {
        if let (Prefix::Name(token), Some(Suffix::Index(_))) = (var.prefix(), var.suffixes().next())
        {
            self.harmless.insert(offset(token));
        }
    }

    fn visit_function_call(&mut self, call: &FunctionCall) {
        let suffixes: Vec<&Suffix> = call.suffixes().collect();
        // `t.f(…)` reads a field; a method call `t:m(…)` may change `t`.
        if let (Prefix::Name(token), Some(Suffix::Index(_))) = (call.prefix(), suffixes.first()) {
            self.harmless.insert(offset(token));
        }
        let encodes = matches!(
            (call.prefix(), suffixes.as_slice()),
            (Prefix::Name(library), [Suffix::Index(Index::Dot { name, .. }), Suffix::Call(Call::AnonymousCall(_))])
                if identifier(library) == "cjson" && identifier(name) == "encode"
        );
        if encodes
            && let Some(Suffix::Call(Call::AnonymousCall(arguments))) = suffixes.last().copied()
            && let FunctionArgs::Parentheses { arguments, .. } = &**arguments
            && let Some(Expression::Var(Var::Name(token))) = arguments.iter().next()
        {
            self.harmless.insert(offset(token));
        }
    }

    fn visit_expression(&mut self, expression: &Expression) {
        if let Expression::UnaryOperator {
            unop: UnOp::Hash(_),
            expression,
        } = expression
            && let Expression::Var(Var::Name(token)) = &**expression
        {
            self.harmless.insert(offset(token));
        }
    }

    fn visit_function_body(&mut self, _: &FunctionBody) {
        self.depth += 1;
    }

    fn visit_function_body_end(&mut self, _: &FunctionBody) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn visit_return(&mut self, statement: &Return) {
        if self.chunk_returns_harmless
            && self.depth == 0
            && let Some(Expression::Var(Var::Name(token))) = statement.returns().iter().next()
        {
            self.harmless.insert(offset(token));
        }
    }

    fn visit_assignment(&mut self, assignment: &Assignment) {
        // `t.f = v` writes a field the walk follows; `t = v` is seen as
        // a mention of `t` as a variable, which is not harmless.
        for var in assignment.variables() {
            if let Var::Expression(target) = var
                && let (Prefix::Name(token), Some(Suffix::Index(_))) =
                    (target.prefix(), target.suffixes().next())
            {
                self.harmless.insert(offset(token));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::syntax::Prepared;

    fn escaping(source: &str) -> Vec<String> {
        let prepared = Prepared::new(source);
        let Ok(ast) = prepared.parse() else {
            panic!("invalid Lua: {source}");
        };
        let mut names: Vec<String> = escaping_tables(&ast).into_iter().collect();
        names.sort();
        names
    }

    #[test]
    fn field_reads_and_writes_length_and_encoding_keep_a_table_in_sight() {
        assert_eq!(
            escaping(
                "local t = {a = 1}\nt.b = 2\nt['c'] = #t\nlocal x = t.a + t[1]\nreturn cjson.encode(t)"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn calls_methods_aliases_and_assignments_let_it_go() {
        assert_eq!(
            escaping("local t = {}\nfill(t)\nreturn cjson.encode(t)"),
            ["fill", "t"]
        );
        assert_eq!(
            escaping("local t = {}\nt:fill()\nreturn cjson.encode(t)"),
            ["t"]
        );
        assert_eq!(
            escaping("local t = {}\nlocal u = t\nu.a = 1\nreturn cjson.encode(t)"),
            ["t"]
        );
        assert_eq!(
            escaping("local t = {}\nt = {a = 1}\nreturn cjson.encode(t)"),
            ["t"]
        );
        assert_eq!(
            escaping("local t = {}\ntable.insert(t, 1)\nreturn cjson.encode(t)"),
            ["t"]
        );
        assert_eq!(
            escaping("local t = {}\nreturn cjson.encode(t, 1), t"),
            ["t"]
        );
    }
}
