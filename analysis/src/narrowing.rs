//! What a condition says about the locals it tests: where `if v then`
//! holds, `v` is neither nil nor false; where `v == nil` fails, it is not
//! nil; where `#t > 0` holds, `t` is not empty.
//!
//! Only locals are narrowed, and only by the forms below; any other
//! condition leaves every value as it was.

use std::rc::Rc;

use full_moon::ast::{BinOp, Expression, FunctionArgs, Prefix, Suffix, UnOp, Var};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};

use super::scope::Binding;
use super::types::{Kinds, Type};
use super::value::Value;
use super::walker::{Analyzer, identifier, string_literal};

/// What is compared with a local in `v == x`.
enum Compared {
    Nil,
    Boolean(bool),
    /// A string or number constant.
    Constant(Value),
    /// `type(v) == 'name'`: the kinds of that Lua type.
    TypeName(Kinds),
}

impl Analyzer<'_> {
    /// Narrows the locals `condition` tests to where it is `truth`.
    pub fn narrow(&mut self, condition: &Expression, truth: bool) {
        match condition {
            Expression::Parentheses { expression, .. } => self.narrow(expression, truth),
            Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => self.narrow(expression, !truth),
            Expression::BinaryOperator { lhs, binop, rhs } => match binop {
                // Both hold / both fail; the other outcome says nothing.
                BinOp::And(_) if truth => {
                    self.narrow(lhs, true);
                    self.narrow(rhs, true);
                }
                BinOp::Or(_) if !truth => {
                    self.narrow(lhs, false);
                    self.narrow(rhs, false);
                }
                BinOp::TwoEqual(_) => {
                    self.narrow_equality(lhs, rhs, truth);
                    self.narrow_length(lhs, binop, rhs, truth);
                }
                BinOp::TildeEqual(_) => {
                    self.narrow_equality(lhs, rhs, !truth);
                    self.narrow_length(lhs, binop, rhs, truth);
                }
                BinOp::GreaterThan(_)
                | BinOp::GreaterThanEqual(_)
                | BinOp::LessThan(_)
                | BinOp::LessThanEqual(_) => self.narrow_length(lhs, binop, rhs, truth),
                _ => {}
            },
            Expression::Var(Var::Name(token)) => {
                self.narrow_local(token, |ty| if truth { ty.truthy() } else { ty.falsy() })
            }
            _ => {}
        }
    }

    /// `lhs == rhs` is `truth`.
    fn narrow_equality(&mut self, lhs: &Expression, rhs: &Expression, truth: bool) {
        let (local, compared) = match (local_name(lhs), local_name(rhs)) {
            (Some(local), None) => (local, self.compared(rhs)),
            (None, Some(local)) => (local, self.compared(lhs)),
            _ => {
                // `type(v) == 'string'`, either way round.
                if let Some((local, kinds)) = self
                    .type_test(lhs, rhs)
                    .or_else(|| self.type_test(rhs, lhs))
                {
                    self.narrow_to(local, Compared::TypeName(kinds), truth);
                }
                return;
            }
        };
        if let Some(compared) = compared {
            self.narrow_to(local, compared, truth);
        }
    }

    fn narrow_to(&mut self, local: &TokenReference, compared: Compared, truth: bool) {
        match (compared, truth) {
            (Compared::Nil, true) => self.narrow_local(local, |ty| ty.only(Kinds::NIL)),
            (Compared::Nil, false) => self.narrow_local(local, |ty| ty.without(Kinds::NIL)),
            (Compared::Boolean(value), true) => {
                let kind = if value { Kinds::TRUE } else { Kinds::FALSE };
                self.narrow_local(local, |ty| ty.only(kind));
            }
            (Compared::Boolean(value), false) => {
                let kind = if value { Kinds::TRUE } else { Kinds::FALSE };
                self.narrow_local(local, |ty| ty.without(kind));
            }
            (Compared::TypeName(kinds), true) => self.narrow_local(local, |ty| ty.only(kinds)),
            (Compared::TypeName(kinds), false) => self.narrow_local(local, |ty| ty.without(kinds)),
            // Equal to a constant: it is that constant.
            (Compared::Constant(constant), true) => {
                if let Some(declared_at) = self.local_declaration(local) {
                    self.scopes.assign(declared_at, constant);
                }
            }
            (Compared::Constant(_), false) => {}
        }
    }

    /// What `expression` is, when a local compared with it is narrowed.
    fn compared(&mut self, expression: &Expression) -> Option<Compared> {
        match expression {
            Expression::Symbol(token) => match token.token_type() {
                TokenType::Symbol {
                    symbol: Symbol::Nil,
                } => Some(Compared::Nil),
                TokenType::Symbol {
                    symbol: Symbol::True,
                } => Some(Compared::Boolean(true)),
                TokenType::Symbol {
                    symbol: Symbol::False,
                } => Some(Compared::Boolean(false)),
                _ => None,
            },
            Expression::String(token) => Some(Compared::Constant(Value::Str(string_literal(
                self.context.map,
                token,
            )))),
            Expression::Number(_) => match self.raw_value_of(expression) {
                constant @ Value::Number(_) => Some(Compared::Constant(constant)),
                _ => None,
            },
            _ => None,
        }
    }

    /// `type(v)` compared with a literal type name: the local and the kinds
    /// of that type.
    fn type_test<'e>(
        &self,
        call: &'e Expression,
        name: &Expression,
    ) -> Option<(&'e TokenReference, Kinds)> {
        let Expression::String(token) = name else {
            return None;
        };
        let kinds = match string_literal(self.context.map, token).as_str() {
            "nil" => Kinds::NIL,
            "boolean" => Kinds::BOOLEAN,
            "number" => Kinds::NUMBER,
            "string" => Kinds::STRING,
            "table" => Kinds::TABLE,
            "function" => Kinds::FUNCTION,
            "userdata" | "thread" => Kinds::OTHER,
            _ => return None,
        };
        let Expression::FunctionCall(call) = call else {
            return None;
        };
        let Prefix::Name(function) = call.prefix() else {
            return None;
        };
        if identifier(function) != "type"
            || self.scopes.resolve("type", self.functions_depth()) != Binding::Global
        {
            return None;
        }
        let mut suffixes = call.suffixes();
        let Some(Suffix::Call(full_moon::ast::Call::AnonymousCall(arguments))) = suffixes.next()
        else {
            return None;
        };
        if suffixes.next().is_some() {
            return None;
        }
        let FunctionArgs::Parentheses { arguments, .. } = &**arguments else {
            return None;
        };
        let mut arguments = arguments.iter();
        let local = local_name(arguments.next()?)?;
        arguments.next().is_none().then_some((local, kinds))
    }

    /// `#t > 0` and its equivalents: where it holds, `t` is not empty.
    fn narrow_length(&mut self, lhs: &Expression, operator: &BinOp, rhs: &Expression, truth: bool) {
        let number = |expression: &Expression| match expression {
            Expression::Number(token) => match token.token_type() {
                TokenType::Number { text } => text.parse::<f64>().ok(),
                _ => None,
            },
            _ => None,
        };
        fn length_of(expression: &Expression) -> Option<&TokenReference> {
            match expression {
                Expression::UnaryOperator {
                    unop: UnOp::Hash(_),
                    expression,
                } => local_name(expression),
                _ => None,
            }
        }
        let (local, other) = match (length_of(lhs), length_of(rhs)) {
            (Some(local), None) => (local, rhs),
            (None, Some(local)) => (local, lhs),
            _ => return,
        };
        // `#t == n` holding for n >= 1, or `#t == 0` failing (and the
        // same for `~=` the other way round): at least one element.
        let equal = match operator {
            BinOp::TwoEqual(_) => Some(truth),
            BinOp::TildeEqual(_) => Some(!truth),
            _ => None,
        };
        if let Some(equal) = equal {
            let Some(bound) = number(other) else { return };
            if (equal && bound >= 1.0) || (!equal && bound == 0.0) {
                self.known_non_empty(local);
            }
            return;
        }
        // Normalised to `#t <op> n`.
        let (local, bound, greater, strict) = match (length_of(lhs), length_of(rhs)) {
            (Some(local), None) => {
                let Some(bound) = number(rhs) else { return };
                match operator {
                    BinOp::GreaterThan(_) => (local, bound, true, true),
                    BinOp::GreaterThanEqual(_) => (local, bound, true, false),
                    BinOp::LessThan(_) => (local, bound, false, true),
                    _ => (local, bound, false, false),
                }
            }
            (None, Some(local)) => {
                let Some(bound) = number(lhs) else { return };
                match operator {
                    BinOp::LessThan(_) => (local, bound, true, true),
                    BinOp::LessThanEqual(_) => (local, bound, true, false),
                    BinOp::GreaterThan(_) => (local, bound, false, true),
                    _ => (local, bound, false, false),
                }
            }
            _ => return,
        };
        // `#t > n` (n >= 0) or `#t >= n` (n >= 1) holding, or `#t < n`
        // (n <= 1) / `#t <= n` (n <= 0) failing: at least one element.
        let non_empty = match (greater, strict, truth) {
            (true, true, true) => bound >= 0.0,
            (true, false, true) => bound >= 1.0,
            (false, true, false) => bound <= 1.0,
            (false, false, false) => bound <= 0.0,
            _ => false,
        };
        if non_empty {
            self.known_non_empty(local);
        }
    }

    /// The local table `local` has at least one element here.
    fn known_non_empty(&mut self, local: &TokenReference) {
        self.narrow_local(local, |ty| {
            let mut table = ty.table_type().cloned().unwrap_or_default();
            table.may_be_empty = false;
            Type {
                table: Some(Rc::new(table)),
                ..ty.only(Kinds::TABLE)
            }
        });
    }

    /// Replaces the value of the local `token` by `narrowing` of its type,
    /// unless that changes nothing (the value keeps what else it knows).
    fn narrow_local(&mut self, token: &TokenReference, narrowing: impl Fn(&Type) -> Type) {
        let Binding::Local {
            declared_at, value, ..
        } = self
            .scopes
            .resolve(identifier(token), self.functions_depth())
        else {
            return;
        };
        let ty = value.ty();
        let narrowed = narrowing(&ty);
        if narrowed != ty {
            self.scopes.assign(declared_at, Value::Typed(narrowed));
        }
    }

    /// The local table `token` gets an element (`t[k] = v`,
    /// `table.insert(t, v)`): from here on it is not known to be empty.
    pub fn table_written(&mut self, token: &TokenReference) {
        self.narrow_local(token, |ty| match ty.table_type() {
            Some(table) if table.may_be_empty => {
                let mut table = table.clone();
                table.may_be_empty = false;
                Type {
                    table: Some(Rc::new(table)),
                    ..ty.clone()
                }
            }
            _ => ty.clone(),
        });
    }

    fn local_declaration(&self, token: &TokenReference) -> Option<usize> {
        match self
            .scopes
            .resolve(identifier(token), self.functions_depth())
        {
            Binding::Local { declared_at, .. } => Some(declared_at),
            Binding::Global => None,
        }
    }
}

/// The name of a local read by `expression`, if it is one (or a global:
/// narrowing finds out).
fn local_name(expression: &Expression) -> Option<&TokenReference> {
    match expression {
        Expression::Var(Var::Name(token)) => Some(token),
        Expression::Parentheses { expression, .. } => local_name(expression),
        _ => None,
    }
}
