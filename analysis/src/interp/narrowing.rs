//! What a condition says about the locals it tests: where `if v then`
//! holds, `v` is neither nil nor false; where `v == nil` fails, it is not
//! nil; where `#t > 0` holds, `t` is not empty.
//!
//! Only locals are narrowed, and only by the forms below; any other
//! condition leaves every value as it was.

use std::rc::Rc;

use full_moon::ast::{BinOp, Call, Expression, FunctionArgs, Index, Prefix, Suffix, UnOp, Var};
use full_moon::tokenizer::{Symbol, TokenReference, TokenType};

use crate::domain::scope::Binding;
use crate::domain::types::{DataRead, Kinds, TableType, Type};
use crate::domain::value::Value;
use crate::interp::Analyzer;
use crate::source::tokens::{identifier, string_literal};

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
        self.note_false_comparisons(condition);
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
            // `if next(t) then`: `t` has an element.
            call @ Expression::FunctionCall(_) if truth => {
                if let Some(declared_at) =
                    local_argument(call, &["next"]).and_then(|table| self.local_declaration(table))
                {
                    self.known_non_empty(declared_at);
                }
            }
            _ => {}
        }
    }

    /// Records the locals `condition` compares with `false`, on either side
    /// of `and`, `or` and `not`.
    fn note_false_comparisons(&mut self, condition: &Expression) {
        let compared = match condition {
            Expression::Parentheses { expression, .. }
            | Expression::UnaryOperator {
                unop: UnOp::Not(_),
                expression,
            } => return self.note_false_comparisons(expression),
            Expression::BinaryOperator { lhs, binop, rhs } => match binop {
                BinOp::And(_) | BinOp::Or(_) => {
                    self.note_false_comparisons(lhs);
                    return self.note_false_comparisons(rhs);
                }
                BinOp::TwoEqual(_) | BinOp::TildeEqual(_) => {
                    let element = match (local_element(lhs), local_element(rhs)) {
                        (Some(element), None) if is_nil(rhs) => Some(element),
                        (None, Some(element)) if is_nil(lhs) => Some(element),
                        _ => None,
                    };
                    if let Some((table, index)) = element {
                        self.note_element_compared_with_nil(table, index);
                        return;
                    }
                    match (local_name(lhs), local_name(rhs)) {
                        (Some(local), None) if is_false(rhs) => local,
                        (None, Some(local)) if is_false(lhs) => local,
                        _ => return,
                    }
                }
                _ => return,
            },
            _ => return,
        };
        if let Some(declared_at) = self.local_declaration(compared) {
            let line = self.span(compared).line;
            self.compared_with_false.entry(declared_at).or_insert(line);
        }
    }

    fn note_element_compared_with_nil(&mut self, table: &TokenReference, index: &TokenReference) {
        if let (Some(table_at), Some(index_at)) =
            (self.local_declaration(table), self.local_declaration(index))
        {
            let line = self.span(table).line;
            self.element_compared_with_nil
                .entry((table_at, index_at))
                .or_insert(line);
        }
    }

    /// The element `table[index]` read as `value`: where the script compares
    /// that element with nil and it may be false, the comparison (which
    /// false passes) is why it may be.
    pub(super) fn element_read_after_nil_test(
        &self,
        table: &TokenReference,
        index: &TokenReference,
        value: Value,
    ) -> Value {
        let (Some(table_at), Some(index_at)) =
            (self.local_declaration(table), self.local_declaration(index))
        else {
            return value;
        };
        let Some(line) = self.element_compared_with_nil.get(&(table_at, index_at)) else {
            return value;
        };
        let ty = value.ty();
        if ty.is_unknown() || !ty.kinds.intersects(Kinds::FALSE) {
            return value;
        }
        let shown = format!("`{}[{}]`", identifier(table), identifier(index));
        Value::Typed(
            Type {
                absence: None,
                ..ty
            }
            .absent(
                shown,
                format!("is compared with nil at line {line}, a test that false passes"),
            ),
        )
    }

    /// `lhs == rhs` is `truth`.
    fn narrow_equality(&mut self, lhs: &Expression, rhs: &Expression, truth: bool) {
        let (local, compared) = match (local_name(lhs), local_name(rhs)) {
            (Some(local), None) => (local, self.compared(rhs)),
            (None, Some(local)) => (local, self.compared(lhs)),
            _ => {
                // `next(t) ~= nil`: `t` has an element.
                let next_of = |expression| local_argument(expression, &["next"]);
                if !truth
                    && let Some(table) = next_of(lhs)
                        .filter(|_| is_nil(rhs))
                        .or_else(|| next_of(rhs).filter(|_| is_nil(lhs)))
                    && let Some(declared_at) = self.local_declaration(table)
                {
                    self.known_non_empty(declared_at);
                    return;
                }
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
            // Equal to a constant: it is that constant. Unless it never
            // can be (a string against a number): the branch never runs,
            // and what it would make of the local must not leak out of it.
            (Compared::Constant(constant), true) => {
                let Some(declared_at) = self.local_declaration(local) else {
                    return;
                };
                let possible = self
                    .scopes
                    .value_at(declared_at, self.functions_depth())
                    .is_some_and(|value| value.ty().kinds.intersects(constant.ty().kinds));
                if possible {
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

    /// `local n = #t` (or `table.getn(t)`): `n` keeps the link to `t`.
    pub fn with_length_link(&self, expression: &Expression, value: Value) -> Value {
        let table = match expression {
            Expression::UnaryOperator {
                unop: UnOp::Hash(_),
                expression,
            } => local_name(expression),
            call => local_argument(call, &["table", "getn"]),
        };
        let Some(declared_at) = table.and_then(|table| self.local_declaration(table)) else {
            return value;
        };
        Value::Typed(Type {
            length_of: Some(declared_at),
            ..value.ty()
        })
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
        // The table whose length `expression` is: `#t`, or a local that
        // holds it (`local n = #t`).
        let length_of = |expression: &Expression| -> Option<usize> {
            match expression {
                Expression::UnaryOperator {
                    unop: UnOp::Hash(_),
                    expression,
                } => self.local_declaration(local_name(expression)?),
                _ => match self
                    .scopes
                    .resolve(identifier(local_name(expression)?), self.functions_depth())
                {
                    Binding::Local { value, .. } => value.ty().length_of,
                    Binding::Global => None,
                },
            }
        };
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

    /// The local table declared at `declared_at` has at least one
    /// element here.
    fn known_non_empty(&mut self, declared_at: usize) {
        self.narrow_declared(declared_at, |ty| {
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
    pub(super) fn narrow_local(
        &mut self,
        token: &TokenReference,
        narrowing: impl Fn(&Type) -> Type,
    ) {
        if let Some(declared_at) = self.local_declaration(token) {
            self.narrow_declared(declared_at, narrowing);
        }
    }

    pub(super) fn narrow_declared(
        &mut self,
        declared_at: usize,
        narrowing: impl Fn(&Type) -> Type,
    ) {
        let Some(value) = self.scopes.value_at(declared_at, self.functions_depth()) else {
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
    /// The keys it was constructed of are no longer known either.
    /// An element of the local table `token` is written: `appended` when
    /// it goes at its end (`t[#t + 1] = v`, `table.insert(t, v)`), which
    /// keeps a table of keys and values in turn one.
    pub fn table_written(&mut self, token: &TokenReference, appended: Option<&Value>) {
        self.change_table(token, |table| TableType {
            may_be_empty: false,
            keys: None,
            pairs: appended.and_then(|element| {
                table
                    .pairs
                    .as_ref()
                    .and_then(|pairs| pairs.appended(element))
                    .map(Rc::new)
            }),
            ..table.clone()
        });
    }

    /// The elements of the local table `token` change (removed, sorted):
    /// the keys it was constructed of are no longer known.
    pub fn table_changed(&mut self, token: &TokenReference) {
        self.change_table(token, |table| TableType {
            keys: None,
            pairs: None,
            ..table.clone()
        });
    }

    /// What the local `token` is known to hold, as a table, after `change`.
    pub(super) fn change_table(
        &mut self,
        token: &TokenReference,
        change: impl Fn(&TableType) -> TableType,
    ) {
        // A written table is no longer the reply a command sent.
        self.narrow_local(token, |ty| match ty.table_type() {
            Some(table) => Type {
                table: Some(Rc::new(change(table))),
                reply_form: None,
                ..ty.clone()
            },
            None => Type {
                reply_form: None,
                ..ty.clone()
            },
        });
    }

    /// The local table `token` gets `value` as an element (`t[#t + 1] =
    /// v`, `table.insert(t, v)`): a value read from data, an argument or a
    /// string built from neither a key nor a prefix makes its elements
    /// values that are no key names from KEYS either.
    pub fn table_holds(&mut self, token: &TokenReference, value: &Value) {
        let read = match value {
            Value::Arg(Some(_)) | Value::ComputedString(_) => value.not_a_key().map(|what| {
                Rc::new(DataRead {
                    what,
                    line: self.span(token).line,
                    in_request: matches!(value, Value::Arg(_)),
                })
            }),
            _ => value.data_read(),
        };
        let Some(read) = read else {
            return;
        };
        self.narrow_local(token, |ty| {
            if ty.read_from.is_some() || !ty.kinds.intersects(Kinds::TABLE) {
                return ty.clone();
            }
            Type {
                read_from: Some(read.clone()),
                ..ty.clone()
            }
        });
    }

    pub(super) fn local_declaration(&self, token: &TokenReference) -> Option<usize> {
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

fn is_nil(expression: &Expression) -> bool {
    is_symbol(expression, Symbol::Nil)
}

/// `false`, written as such.
fn is_false(expression: &Expression) -> bool {
    is_symbol(expression, Symbol::False)
}

fn is_symbol(expression: &Expression, symbol: Symbol) -> bool {
    matches!(
        expression,
        Expression::Symbol(token)
            if matches!(token.token_type(), TokenType::Symbol { symbol: written } if *written == symbol)
    )
}

/// The local `t` of a call `name(t)` or `table.name(t)` (`path` is the
/// dotted name), with no other argument.
fn local_argument<'e>(expression: &'e Expression, path: &[&str]) -> Option<&'e TokenReference> {
    let Expression::FunctionCall(call) = expression else {
        return None;
    };
    let Prefix::Name(first) = call.prefix() else {
        return None;
    };
    let (head, members) = path.split_first()?;
    if identifier(first) != *head {
        return None;
    }
    let mut suffixes = call.suffixes();
    for member in members {
        match suffixes.next() {
            Some(Suffix::Index(Index::Dot { name, .. })) if identifier(name) == *member => {}
            _ => return None,
        }
    }
    let (Some(Suffix::Call(Call::AnonymousCall(arguments))), None) =
        (suffixes.next(), suffixes.next())
    else {
        return None;
    };
    let FunctionArgs::Parentheses { arguments, .. } = &**arguments else {
        return None;
    };
    let mut arguments = arguments.iter();
    let local = local_name(arguments.next()?)?;
    arguments.next().is_none().then_some(local)
}

/// `t[i]`, a local table at a local index.
fn local_element(expression: &Expression) -> Option<(&TokenReference, &TokenReference)> {
    let Expression::Var(Var::Expression(variable)) = expression else {
        return None;
    };
    let Prefix::Name(table) = variable.prefix() else {
        return None;
    };
    let mut suffixes = variable.suffixes();
    match (suffixes.next(), suffixes.next()) {
        (Some(Suffix::Index(Index::Brackets { expression, .. })), None) => {
            Some((table, local_name(expression)?))
        }
        _ => None,
    }
}
