//! Return sites and the shape of what each one replies.

use full_moon::ast::{Expression, Return, Var};

use crate::domain::analysis::{ReplyForm, ReturnShape, ReturnSite};
use crate::domain::types::{Kinds, Type};
use crate::domain::value::{Reply, Value};
use crate::interp::Analyzer;
use crate::interp::observe::ReplyValue;
use crate::source::span;
use crate::source::tokens::identifier;

impl Analyzer<'_> {
    /// `return ...`: evaluated everywhere, recorded in the main chunk only
    /// (a function's `return` is not the script's reply).
    pub fn walk_return(&mut self, statement: &Return) {
        let mut values = Vec::new();
        for expression in statement.returns() {
            values.push(self.value_of(expression));
        }
        if !self.in_main_chunk() {
            // A function's return: the summary its calls take. A nil
            // written as such says why its calls may give nil.
            let returned = match values.first() {
                Some(Value::Nil) | None => {
                    let line = self.context.map.token(statement.token()).line;
                    Value::Typed(Type::of(Kinds::NIL).absent(
                        "the function it comes from",
                        format!("returns nil at line {line}"),
                    ))
                }
                Some(value) => value.clone(),
            };
            self.function_returned(&returned);
            return;
        }
        let end = statement
            .returns()
            .iter()
            .last()
            .and_then(span::expression_end)
            .or_else(|| Some(statement.token().token().end_position()));
        let span = self
            .context
            .map
            .span_between(Some(statement.token().token().start_position()), end);
        if let Some(value) = values.first() {
            let first = statement
                .returns()
                .iter()
                .next()
                .map_or(span, |expression| self.context.map.expression(expression));
            let reply = ReplyValue { value, span: first };
            self.observe(|finding, site| finding.reply(site, &reply));
        }
        // Redis replies with the first value only.
        let shape = values.first().map_or(ReturnShape::Nil, shape_of);
        let lone_error_word = match values.first() {
            Some(Value::Reply(Reply::Error(_, lone_word))) => lone_word.clone(),
            _ => None,
        };
        let encoded = match values.first() {
            Some(Value::Typed(ty)) => ty.encoded.as_deref().cloned(),
            _ => None,
        };
        let form = match (values.first(), statement.returns().iter().next()) {
            (Some(Value::Typed(ty)), Some(expression)) => self.returned_form(ty, expression),
            _ => None,
        };
        self.facts.unit.returns.push(ReturnSite {
            line: span.line,
            column: span.column,
            width: span.width,
            shape,
            lone_error_word,
            encoded,
            form,
        });
    }

    /// The form of a command's reply returned as it came: the value is
    /// the reply (or nil), and no code the walk does not see may have
    /// changed it (a local handed to a function, aliased, or a method's
    /// receiver).
    fn returned_form(&self, ty: &Type, expression: &Expression) -> Option<ReplyForm> {
        let form = ty.reply_form.as_deref()?;
        // A test may have narrowed it to its nil: then it is no reply of
        // that form. (The model's kinds may be wider than the form: `SET`
        // without `GET` never replies a string, which its type still has.)
        if !ty.kinds.intersects(Kinds::TABLE) {
            return None;
        }
        if let Expression::Var(Var::Name(name)) = expression
            && self.context.escaping_replies.contains(identifier(name))
        {
            return None;
        }
        Some(form.clone())
    }
}

fn shape_of(value: &Value) -> ReturnShape {
    match value {
        Value::Table(Some(table)) => {
            let open_ended = table.open_ended;
            match &table.tag {
                Some(tag) => ReturnShape::Tagged {
                    tag: tag.clone(),
                    elements: table.elements.iter().skip(1).cloned().collect(),
                    open_ended,
                },
                None => ReturnShape::Array {
                    elements: table.elements.clone(),
                    open_ended,
                },
            }
        }
        Value::Reply(Reply::Error(code, _)) => ReturnShape::Error(code.clone()),
        Value::Reply(Reply::Status(status)) => ReturnShape::Status(status.clone()),
        Value::Nil => ReturnShape::Nil,
        other => ReturnShape::Value(other.kind()),
    }
}
