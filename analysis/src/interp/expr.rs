//! The walk of expressions: the value each one may hold, operators,
//! call chains, argument lists and table constructors.

use super::*;
use crate::interp::observe::{Condition, Operation, Side, Test};
use crate::source::code::Code;

impl Analyzer<'_> {
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
                let summary = self.walk_function_body(function.body(), None);
                Value::Function(summary.map(std::rc::Rc::new))
            }
            Expression::FunctionCall(call) => self.eval_function_call(call),
            Expression::TableConstructor(table) => self.eval_table(table),
            Expression::Number(token) => number(token),
            Expression::String(token) => Value::Str(string_literal(self.context.map, token)),
            Expression::Symbol(token) => self.symbol(token),
            Expression::Var(Var::Name(token)) => {
                let value = self.read_name(token, None);
                self.element_read(&value, self.span(token));
                value
            }
            Expression::Var(Var::Expression(variable)) => {
                let suffixes: Vec<&Suffix> = variable.suffixes().collect();
                self.eval_chain(variable.prefix(), &suffixes)
            }
            _ => Value::Unknown,
        };
        self.leave();
        value
    }

    pub(super) fn binary(&mut self, lhs: &Expression, operator: &BinOp, rhs: &Expression) -> Value {
        let left = self.value_of(lhs);
        // `t.m and t.m(x)`: the right side runs only when `t.m` exists,
        // and `v and v + 1` only where `v` is true.
        let guards = match operator {
            BinOp::And(_) => self.guards_of(lhs),
            _ => Vec::new(),
        };
        let pushed = self.facts.missing.push_guards(guards);
        let before = self.scopes.snapshot();
        match operator {
            BinOp::And(_) => self.narrow(lhs, true),
            BinOp::Or(_) => self.narrow(lhs, false),
            _ => {}
        }
        let right = self.value_of(rhs);
        self.scopes.restore(&before);
        self.facts.missing.pop_guards(pushed);
        if matches!(operator, BinOp::TwoEqual(_) | BinOp::TildeEqual(_)) {
            // A comparison gives a boolean: the elements compared go no
            // further.
            self.element_followed(&left, self.context.map.expression(lhs));
            self.element_followed(&right, self.context.map.expression(rhs));
        }
        if matches!(
            operator,
            BinOp::And(_) | BinOp::Or(_) | BinOp::TwoEqual(_) | BinOp::TildeEqual(_)
        ) {
            self.tested(&left);
            self.tested(&right);
        }
        self.observe_binary(lhs, operator, rhs, &left, &right);
        let constants = left.as_number().zip(right.as_number());
        let (left_kinds, right_kinds) = (left.ty().kinds, right.ty().kinds);
        let divided = left.ty().divided || right.ty().divided;
        // The length of a flat map or list of pairs, halved: whole.
        let halves_even = left.ty().even && right.as_number() == Some(2.0);
        let parities = parity(&left).zip(parity(&right));
        let fold = |apply: fn(f64, f64) -> f64, keeps_integers: bool| match constants {
            Some((a, b)) => Value::Number(apply(a, b)),
            None if keeps_integers
                && left_kinds.within(Kinds::INTEGER)
                && right_kinds.within(Kinds::INTEGER) =>
            {
                let even = match operator {
                    BinOp::Plus(_) | BinOp::Minus(_) => parities.map(|(a, b)| a == b),
                    BinOp::Star(_) => parities.map(|(a, b)| a || b),
                    _ => None,
                };
                Value::Typed(Type::integer_with_parity(even))
            }
            // `/` and `^` make fractions; other operators keep them.
            None if !keeps_integers || divided => Value::Typed(Type::divided()),
            None => Value::ComputedNumber,
        };
        match operator {
            BinOp::Plus(_) => fold(|a, b| a + b, true),
            BinOp::Minus(_) => fold(|a, b| a - b, true),
            BinOp::Star(_) => fold(|a, b| a * b, true),
            BinOp::Slash(_) if halves_even => Value::Typed(Type::of(Kinds::INTEGER)),
            BinOp::Slash(_) => fold(|a, b| a / b, false),
            BinOp::Percent(_) => fold(|a, b| a - (a / b).floor() * b, true),
            BinOp::Caret(_) => fold(f64::powf, false),
            BinOp::TwoDots(_) => match left.derivation() {
                Some(derivation) => Value::DerivedKey(derivation),
                // A name read from data, extended, is read from data still.
                None if left.data_read().is_some() => Value::Typed(Type {
                    read_from: left.data_read(),
                    ..Type::of(Kinds::STRING)
                }),
                None => Value::ComputedString(match left {
                    Value::Str(text) | Value::ComputedString(Some(text)) => Some(text),
                    _ => None,
                }),
            },
            BinOp::And(_) => logical(&left, right, true),
            BinOp::Or(_) => logical(&left, right, false),
            _ => Value::Bool(None),
        }
    }

    pub(super) fn unary(&mut self, operator: &UnOp, operand: &Expression) -> Value {
        let span = self.context.map.span_between(
            Some(operator.token().token().start_position()),
            span::expression_end(operand),
        );
        let operand_span = self.context.map.expression(operand);
        match operator {
            UnOp::Hash(_) => {
                let value = self.raw_value_of(operand);
                self.observe_unary(operator, &value, operand_span, span);
                let ty = value.ty();
                let even = ty.table_type().is_some_and(|table| table.even_length);
                // `#KEYS` counts the elements: none of them goes anywhere.
                if let Value::Params(param) = value {
                    self.param_counted(param, span);
                }
                Value::Typed(Type {
                    even,
                    unbounded: ty.unbounded,
                    grows: ty.grows,
                    ..Type::of(Kinds::INTEGER)
                })
            }
            UnOp::Minus(_) => {
                let value = self.value_of(operand);
                self.observe_unary(operator, &value, operand_span, span);
                self.json_used(
                    &value,
                    crate::domain::json::JsonUse::Arithmetic,
                    operand_span,
                );
                match value.as_number() {
                    Some(number) => Value::Number(-number),
                    None if value.ty().kinds.within(Kinds::INTEGER) => {
                        Value::Typed(Type::of(Kinds::INTEGER))
                    }
                    None => Value::ComputedNumber,
                }
            }
            _ => {
                let value = self.value_of(operand);
                self.tested(&value);
                let test = if self.default_guard == Some(offset(operator.token())) {
                    Test::DefaultGuard
                } else {
                    Test::Not
                };
                self.observe_condition(&value, operand, operand_span, test, None);
                Value::Bool(None)
            }
        }
    }

    /// Shows the findings `operator` applied to `value` (written at
    /// `operand_span`), together at `span`.
    fn observe_unary(&mut self, operator: &UnOp, value: &Value, operand_span: Span, span: Span) {
        let operation = Operation::Unary {
            operator,
            operand: Side {
                value,
                span: operand_span,
            },
            span,
        };
        self.observe(|finding, site| finding.operation(site, &operation));
    }

    /// Shows the findings `value`, the value of `expression` (at `span`),
    /// tested for truth by `test` (guarding `guarded`, the right side of an
    /// `and`).
    pub(super) fn observe_condition(
        &mut self,
        value: &Value,
        expression: &Expression,
        span: Span,
        test: Test,
        guarded: Option<&Expression>,
    ) {
        let condition = Condition {
            value,
            expression,
            span,
            test,
            guarded,
        };
        self.observe(|finding, site| finding.condition(site, &condition));
        self.json_used(value, crate::domain::json::JsonUse::Tested, span);
    }

    /// Shows the findings `lhs <operator> rhs`, whose sides hold `left`
    /// and `right`.
    pub(super) fn observe_binary(
        &mut self,
        lhs: &Expression,
        operator: &BinOp,
        rhs: &Expression,
        left: &Value,
        right: &Value,
    ) {
        let map = self.context.map;
        let span = map.span_between(span::expression_start(lhs), span::expression_end(rhs));
        let left_span = map.expression(lhs);
        let operation = Operation::Binary {
            operator,
            left: Side {
                value: left,
                span: left_span,
            },
            right: Side {
                value: right,
                span: map.expression(rhs),
            },
            span,
        };
        self.observe(|finding, site| finding.operation(site, &operation));
        self.json_operands((lhs, left), operator, (rhs, right));
        if let BinOp::And(_) = operator {
            self.observe_condition(left, lhs, left_span, Test::And, Some(rhs));
        }
    }

    pub(super) fn symbol(&mut self, token: &TokenReference) -> Value {
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

    pub(super) fn check_vararg(&mut self, token: &TokenReference) {
        self.facts.chunk_varargs |= self.functions.is_empty();
        let allowed = self.functions.last().is_none_or(|function| function.vararg);
        if !allowed {
            let span = self.span(token);
            self.facts.diagnostics.push(span.error(
                Code::Syntax,
                "`...` is used in a function that does not declare `...`: Lua 5.1 refuses to compile this",
                "add `...` to the function's parameters, or pass the values as named parameters",
            ));
        }
    }

    pub(super) fn eval_function_call(&mut self, call: &FunctionCall) -> Value {
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
                self.read_name(token, next_member)
            }
            Prefix::Expression(expression) => self.value_of(expression),
            _ => Value::Unknown,
        };
        let mut base_span = match prefix {
            Prefix::Name(token) => self.span(token),
            Prefix::Expression(expression) => self.context.map.expression(expression),
            _ => Span::TOP,
        };
        self.element_read(&value, base_span);
        for suffix in suffixes {
            let span = self.context.map.chain(prefix, suffix);
            value = self.apply_suffix(value, suffix, base_span, span);
            self.element_read(&value, span);
            base_span = span;
        }
        if let (Prefix::Name(table), [Suffix::Index(Index::Brackets { expression, .. })]) =
            (prefix, suffixes)
            && let Expression::Var(Var::Name(index)) = &**expression
        {
            value = self.element_read_after_nil_test(table, index, value);
        }
        value
    }

    /// `value` (written at `base_span`) followed by `suffix`, together at
    /// `span`.
    pub(super) fn apply_suffix(
        &mut self,
        value: Value,
        suffix: &Suffix,
        base_span: Span,
        span: Span,
    ) -> Value {
        if let Value::Missing(missing) = &value {
            let usage = match suffix {
                Suffix::Call(Call::AnonymousCall(_)) => MissingUse::Call,
                _ => MissingUse::Index,
            };
            self.use_missing(missing, usage);
        }
        let operation = Operation::Suffix {
            value: Side {
                value: &value,
                span: base_span,
            },
            called: matches!(suffix, Suffix::Call(Call::AnonymousCall(_))),
            span,
        };
        self.observe(|finding, site| finding.operation(site, &operation));
        match suffix {
            Suffix::Index(Index::Dot { name, .. }) => {
                let member_span = self.span(name);
                if let Value::Params(param) = value {
                    self.param_dynamic(param, span);
                    return Value::Unknown;
                }
                let key = Value::Str(identifier(name).to_owned());
                if let Some(part) = self.json_member(&value, &key, base_span, span) {
                    return part;
                }
                // A field of data is data too.
                if let Value::Typed(ty) = &value
                    && ty.read_from.is_some()
                {
                    return Value::Typed(ty.part(Type::unknown()));
                }
                self.index_member(value, identifier(name), member_span)
            }
            Suffix::Index(Index::Brackets { expression, .. }) => {
                let key = self.value_of(expression);
                if let Some(part) = self.json_member(&value, &key, base_span, span) {
                    return part;
                }
                match (value, key) {
                    (Value::Params(param), key) => self.param_index(param, &key, span),
                    (base @ Value::Builtin { .. }, Value::Str(member)) => {
                        self.index_member(base, &member, span)
                    }
                    (Value::Typed(ty), key) => element(&ty, &key),
                    // `({…})[i]`: an element of a constructor, as of a local
                    // holding it.
                    (table @ Value::Table(Some(_)), key) => match table.stored() {
                        Value::Typed(ty) => element(&ty, &key),
                        _ => Value::Unknown,
                    },
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
    pub(super) fn eval_list<'e>(
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
    pub(super) fn expands(&self, expression: &Expression) -> bool {
        match expression {
            Expression::FunctionCall(_) => self.last_call_many,
            Expression::Symbol(token) => token.is_symbol(Symbol::Ellipsis),
            _ => false,
        }
    }

    pub(super) fn eval_table(&mut self, table: &TableConstructor) -> Value {
        let mut array = Vec::new();
        let mut reply = None;
        let mut named = Vec::new();
        let mut computed_keys = false;
        let fields: Vec<&Field> = table.fields().iter().collect();
        let count = fields.len();
        for (position, field) in fields.into_iter().enumerate() {
            match field {
                Field::NoKey(expression) => {
                    self.last_call_many = false;
                    let value = self.value_of(expression);
                    let many = position + 1 == count && self.expands(expression);
                    let span = self.context.map.expression(expression);
                    array.push((value, many, span));
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
                    named.push((identifier(key).to_owned(), value, span));
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
                            named.push((name, value, span));
                        }
                        key => {
                            self.facts.unit.error_codes.computed_field(&key, &value);
                            computed_keys = true;
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(reply) = reply {
            return Value::Reply(reply);
        }
        // Only a table of nothing but data is data: one that mixes keys
        // from KEYS with values read from data (`{id, KEYS[i]}`) keeps no
        // element's origin, as no position is kept.
        let read_from = array
            .iter()
            .map(|(value, _, _)| value.data_read())
            .collect::<Option<Vec<_>>>()
            .and_then(|reads| reads.into_iter().next());
        let open_ended = array.last().is_some_and(|(_, many, _)| *many);
        if open_ended {
            array.pop();
        }
        let tag = array
            .first()
            .and_then(|(value, _, _)| value.as_str().map(str::to_string));
        Value::Table(Some(Box::new(TableShape {
            tag,
            elements: array.iter().map(|(value, _, _)| value.kind()).collect(),
            values: array
                .into_iter()
                .map(|(value, _, span)| (value, span))
                .collect(),
            open_ended,
            read_from,
            fields: named,
            computed_keys,
        })))
    }
}

impl Analyzer<'_> {
    /// A constructor's field `name = value`: `err` and `ok` make the table
    /// a reply of its own.
    pub(super) fn reply_field(&mut self, name: &str, value: &Value, span: Span) -> Option<Reply> {
        match name {
            "err" => {
                self.facts
                    .unit
                    .error_codes
                    .err_field(value, span, &mut self.facts.diagnostics);
                // Returned, the table is an error reply only when `err` is
                // a string.
                crate::interp::error_codes::may_be_string(value)
                    .then(|| Reply::Error(error_code(value), None))
            }
            "ok" => Some(Reply::Status(value.as_str().map(str::to_string))),
            _ => None,
        }
    }
}

/// `table[key]` of a table of type `table`: the element's type where the
/// table's shape tells it (its position, or what all its elements are,
/// or nil past its end).
pub(super) fn element(table: &Type, key: &Value) -> Value {
    if let Some(key) = table
        .table_type()
        .and_then(|table| table.keys.as_deref())
        .and_then(|keys| key_element(keys, key))
    {
        return key;
    }
    let element = element_of_shape(table, key);
    // A part of data is data too.
    if table.read_from.is_none() {
        return element;
    }
    match element {
        Value::Unknown => Value::Typed(table.part(Type::unknown())),
        Value::Typed(ty) => Value::Typed(table.part(ty)),
        other => other,
    }
}

/// `t[i]` of a table made of keys: the key at a constant position, or, at
/// one known only at run time, any of them (their prefixes joined).
fn key_element(keys: &[Value], index: &Value) -> Option<Value> {
    if let Some(index) = index.as_integer() {
        let at = usize::try_from(index).ok()?.checked_sub(1)?;
        return keys.get(at).cloned();
    }
    if !index.ty().kinds.within(Kinds::NUMBER) {
        return None;
    }
    if keys.iter().all(|key| matches!(key, Value::Key(_))) {
        return Some(Value::Key(None));
    }
    keys.iter()
        .map(Value::derivation)
        .reduce(|joined, next| Some(joined?.union(&next?)))?
        .map(Value::DerivedKey)
}

/// `table[key]` as the table's shape tells it.
fn element_of_shape(table: &Type, key: &Value) -> Value {
    let Some(shape) = table.table_type() else {
        return Value::Unknown;
    };
    if let Some(index) = key
        .as_integer()
        .and_then(|index| usize::try_from(index).ok())
        && let Some(position) = index.checked_sub(1).and_then(|at| shape.positions.get(at))
    {
        return Value::Typed(position.clone());
    }
    match (&shape.elements, key.ty().kinds.within(Kinds::NUMBER)) {
        (Some(elements), true) => Value::Typed(elements.join(&Type::of(Kinds::NIL))),
        _ => Value::Unknown,
    }
}

/// The value of `left and right` (`and_`) or `left or right`: the left
/// side when it decides, else the right side.
pub(super) fn logical(left: &Value, right: Value, and_: bool) -> Value {
    let ty = left.ty();
    let (decides, goes_on) = if and_ {
        (ty.falsy(), ty.truthy())
    } else {
        (ty.truthy(), ty.falsy())
    };
    if decides.kinds.is_empty() {
        return right;
    }
    if goes_on.kinds.is_empty() {
        return left.clone();
    }
    Value::Typed(decides).join(&right)
}

pub(super) fn number(token: &TokenReference) -> Value {
    match token.token_type() {
        TokenType::Number { text } => {
            value::parse_number(text.as_str()).map_or(Value::ComputedNumber, Value::Number)
        }
        _ => Value::Unknown,
    }
}
