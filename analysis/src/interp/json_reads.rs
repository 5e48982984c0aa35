//! The parts of `Json<T>` arguments the script reads, and how it uses
//! each: a value decoded from `ARGV[n]`, where that parameter is a
//! `Json<T>`, carries its origin ([`JsonOrigin`]) through fields,
//! elements and locals; each use is one [`JsonRead`] for the attribute to
//! check against `T`'s shape.

use std::rc::Rc;

use full_moon::ast::{BinOp, Expression};
use full_moon::tokenizer::{Symbol, TokenType};

use super::Analyzer;
use crate::domain::json::{JsonOrigin, JsonPath, JsonRead, JsonStep, JsonUse, LiteralKind};
use crate::domain::operand::Operand;
use crate::domain::signature::SentAs;
use crate::domain::types::Type;
use crate::domain::value::Value;
use crate::source::span::Span;

impl Analyzer<'_> {
    /// `cjson.decode(ARGV[n])` of a `Json<T>` parameter: where the
    /// decoded value comes from.
    pub(super) fn json_argument_decoded(&self, operands: &[Operand]) -> Option<Rc<JsonOrigin>> {
        let Some(Value::Arg(Some(argument))) = operands.first().map(|operand| &operand.value)
        else {
            return None;
        };
        let declared = argument
            .checked_sub(1)
            .and_then(|at| self.context.signature.arg_types.get(at))?;
        (declared.sent == SentAs::Json).then(|| {
            Rc::new(JsonOrigin {
                argument: *argument,
                path: JsonPath::default(),
            })
        })
    }

    /// `base.name` or `base[key]` where `base` (written at `base_span`) is
    /// a part of a decoded argument: the part one step in, read at `span`.
    /// `None` when `base` is no such part. A key computed at run time
    /// reads a part the analysis cannot name: only the indexing is a use.
    pub(super) fn json_member(
        &mut self,
        base: &Value,
        key: &Value,
        base_span: Span,
        span: Span,
    ) -> Option<Value> {
        let Value::Typed(ty) = base else {
            return None;
        };
        ty.json.as_ref()?;
        self.json_used(base, JsonUse::Indexed, base_span);
        let step = match key {
            Value::Str(name) => Some(JsonStep::Field(name.clone())),
            key if key.as_integer().is_some() => Some(JsonStep::Element),
            key if key.ty().kinds.within(crate::domain::types::Kinds::NUMBER) => {
                Some(JsonStep::Element)
            }
            _ => None,
        };
        let mut part = ty.part(Type::unknown());
        part.json = step.and_then(|step| ty.json_part(step));
        let part = Value::Typed(part);
        self.json_used(&part, JsonUse::Read, span);
        Some(part)
    }

    /// `base.name = …` (`name` given) or a write the analysis cannot name
    /// (`base[k] = …`, `rawset`, `table.insert`) on a part of a decoded
    /// argument: what the script reads there is then its own, not what
    /// serde wrote, and is not checked against `T`.
    pub(super) fn json_part_written(&mut self, base: &Value, name: Option<&str>) {
        let Value::Typed(ty) = base else {
            return;
        };
        let written = match name {
            Some(name) => ty.json_part(JsonStep::Field(name.to_owned())),
            None => ty.json.clone(),
        };
        if let Some(origin) = written {
            self.facts
                .unit
                .json_written
                .push((origin.argument, origin.path.clone()));
        }
    }

    /// `value`, written at `span`, used as a number: when it is the text
    /// of a `Json<T>` argument, not decoded, that is a use of its text.
    pub(super) fn json_text_as_number(&mut self, value: &Value, span: Span) {
        let Value::Arg(Some(argument)) = value else {
            return;
        };
        let json = argument
            .checked_sub(1)
            .and_then(|at| self.context.signature.arg_types.get(at))
            .is_some_and(|declared| declared.sent == SentAs::Json);
        if json {
            self.facts.unit.json_reads.push(JsonRead {
                argument: *argument,
                path: JsonPath::default(),
                used: JsonUse::TextAsNumber,
                line: span.line,
                column: span.column,
                width: span.width,
            });
        }
    }

    /// Notes `used` of `value`, written at `span`, when it is a part of a
    /// decoded argument.
    pub(super) fn json_used(&mut self, value: &Value, used: JsonUse, span: Span) {
        let Value::Typed(Type {
            json: Some(origin), ..
        }) = value
        else {
            return;
        };
        self.facts.unit.json_reads.push(JsonRead {
            argument: origin.argument,
            path: origin.path.clone(),
            used,
            line: span.line,
            column: span.column,
            width: span.width,
        });
    }

    /// The uses in `left <operator> right`.
    pub(super) fn json_operands(
        &mut self,
        (lhs, left): (&Expression, &Value),
        operator: &BinOp,
        (rhs, right): (&Expression, &Value),
    ) {
        let map = self.context.map;
        let (left_span, right_span) = (map.expression(lhs), map.expression(rhs));
        let used = match operator {
            BinOp::Plus(_)
            | BinOp::Minus(_)
            | BinOp::Star(_)
            | BinOp::Slash(_)
            | BinOp::Percent(_)
            | BinOp::Caret(_) => {
                self.json_text_as_number(left, left_span);
                self.json_text_as_number(right, right_span);
                JsonUse::Arithmetic
            }
            BinOp::TwoDots(_) => JsonUse::Concatenated,
            BinOp::LessThan(_)
            | BinOp::LessThanEqual(_)
            | BinOp::GreaterThan(_)
            | BinOp::GreaterThanEqual(_) => JsonUse::Ordered,
            BinOp::TwoEqual(_) | BinOp::TildeEqual(_) => {
                if let Some(kind) = literal_kind(rhs, right) {
                    self.json_used(left, JsonUse::ComparedWith(kind), left_span);
                }
                if let Some(kind) = literal_kind(lhs, left) {
                    self.json_used(right, JsonUse::ComparedWith(kind), right_span);
                }
                return;
            }
            // `part or default`: the part is tested.
            BinOp::Or(_) => {
                self.json_used(left, JsonUse::Tested, left_span);
                return;
            }
            _ => return,
        };
        self.json_used(left, used, left_span);
        self.json_used(right, used, right_span);
    }
}

/// The kind of the literal `expression` (whose value is `value`), or of
/// `cjson.null`.
fn literal_kind(expression: &Expression, value: &Value) -> Option<LiteralKind> {
    if let Value::Builtin { global, member } = value
        && global == "cjson"
        && member.as_deref() == Some("null")
    {
        return Some(LiteralKind::JsonNull);
    }
    match expression {
        Expression::Number(_) => Some(LiteralKind::Number),
        Expression::String(_) => Some(LiteralKind::String),
        Expression::Symbol(token) => match token.token_type() {
            TokenType::Symbol {
                symbol: Symbol::True | Symbol::False,
            } => Some(LiteralKind::Boolean),
            TokenType::Symbol {
                symbol: Symbol::Nil,
            } => Some(LiteralKind::Nil),
            _ => None,
        },
        _ => None,
    }
}
