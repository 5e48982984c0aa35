//! The walk of statements: blocks and scopes, assignments, function
//! bodies, branches and loops (each loop walked to a fixed point).

use super::*;
use crate::domain::types::Growth;
use crate::interp::loops::may_leave;
use crate::interp::observe::{Branch, Forever, LoopWalked, Test, Whole, WholeUse};

impl Analyzer<'_> {
    pub(super) fn walk_chunk(&mut self, ast: &Ast) {
        let terminates = self.walk_block(ast.nodes());
        // A library's top level registers functions: it is no reply.
        if !terminates && self.context.plan.is_none() {
            let span = self.end_of_chunk(ast);
            self.facts.unit.returns.push(ReturnSite {
                line: span.line,
                column: span.column,
                width: span.width,
                shape: ReturnShape::FallsOffEnd,
                lone_error_word: None,
                encoded: None,
                form: None,
            });
        }
    }

    /// The last line with code on it, for "falls off the end".
    pub(super) fn end_of_chunk(&self, ast: &Ast) -> Span {
        let map = self.context.map;
        let eof_line = ast.eof().token().start_position().line();
        let line = (1..=eof_line)
            .rev()
            .find(|line| !map.line_text(*line).trim().is_empty())
            .unwrap_or(1);
        let text = map.line_text(line);
        let indent = text.chars().take_while(|c| c.is_whitespace()).count();
        Span {
            line,
            column: indent + 1,
            width: text.trim().chars().count().max(1),
            offset: 0,
        }
    }

    /// Walks the statements of a block (the caller opens its scope).
    /// Returns true when the block never completes normally.
    pub(super) fn walk_block(&mut self, block: &Block) -> bool {
        let mut terminates = false;
        let mut previous = None;
        for stmt in block.stmts() {
            if let Stmt::If(statement) = stmt {
                let branch = Branch {
                    statement,
                    previous,
                };
                self.observe(|finding, site| finding.branch(site, &branch));
            }
            terminates |= self.walk_stmt(stmt);
            previous = Some(stmt);
        }
        match block.last_stmt() {
            Some(LastStmt::Return(statement)) => {
                self.walk_return(statement);
                terminates = true;
            }
            Some(LastStmt::Break(_)) => {
                let here = self.scopes.snapshot();
                if let Some(innermost) = self.loops.last_mut() {
                    innermost.exits.push(here);
                }
                terminates = true;
            }
            _ => {}
        }
        terminates
    }

    pub(super) fn scoped_block(&mut self, block: &Block) -> bool {
        self.scopes.push();
        let terminates = self.walk_block(block);
        self.scopes.pop();
        terminates
    }

    pub(super) fn walk_stmt(&mut self, stmt: &Stmt) -> bool {
        if !self.enter() {
            self.leave();
            return false;
        }
        let terminates = match stmt {
            Stmt::Assignment(assignment) => {
                self.walk_assignment(assignment);
                false
            }
            Stmt::Do(block) => self.scoped_block(block.block()),
            Stmt::FunctionCall(call) => {
                self.raised = false;
                self.eval_function_call(call);
                std::mem::take(&mut self.raised)
            }
            Stmt::FunctionDeclaration(declaration) => {
                self.walk_function_declaration(declaration);
                false
            }
            Stmt::GenericFor(generic_for) => {
                self.walk_generic_for(generic_for);
                false
            }
            Stmt::If(if_statement) => self.walk_if(if_statement),
            Stmt::LocalAssignment(local) => {
                self.walk_local_assignment(local);
                false
            }
            Stmt::LocalFunction(function) => {
                let name = function.name();
                self.declare(identifier(name), offset(name), Value::Function(None));
                let summary = self.walk_function_body(function.body(), None);
                self.scopes
                    .assign(offset(name), Value::Function(summary.map(std::rc::Rc::new)));
                false
            }
            Stmt::NumericFor(numeric_for) => {
                self.walk_numeric_for(numeric_for);
                false
            }
            Stmt::Repeat(repeat) => self.walk_repeat(repeat),
            Stmt::While(while_loop) => self.walk_while(while_loop),
            _ => false,
        };
        self.leave();
        terminates
    }

    pub(super) fn walk_assignment(&mut self, assignment: &Assignment) {
        let operands = self.eval_list(assignment.expressions().iter(), true);
        let trailing_many = operands.last().is_some_and(|operand| operand.many);
        for (position, variable) in assignment.variables().iter().enumerate() {
            let value = match operands.get(position) {
                Some(operand) => operand.value.clone(),
                None if trailing_many => Value::Unknown,
                None => Value::Nil,
            };
            let value = match assignment.expressions().iter().nth(position) {
                Some(expression) => self.with_length_link(expression, value),
                None => value,
            };
            self.assign_to(variable, &value);
        }
    }

    pub(super) fn assign_to(&mut self, variable: &Var, value: &Value) {
        match variable {
            Var::Name(token) => self.assign_name(token, false, value.clone()),
            Var::Expression(target) => {
                let suffixes: Vec<&Suffix> = target.suffixes().collect();
                let Some((last, path)) = suffixes.split_last() else {
                    return;
                };
                let base = self.eval_chain(target.prefix(), path);
                let span = self.context.map.chain(target.prefix(), last);
                let local_table = match (target.prefix(), path) {
                    (Prefix::Name(table), []) => Some(table),
                    _ => None,
                };
                match last {
                    Suffix::Index(Index::Dot { name, .. }) => {
                        self.json_part_written(&base, Some(identifier(name)));
                        self.field_write(&base, identifier(name), span, value);
                        if let Some(table) = local_table {
                            self.table_field_written(table, identifier(name), value, span);
                        }
                    }
                    Suffix::Index(Index::Brackets { expression, .. }) => {
                        match self.value_of(expression) {
                            Value::Str(member) => {
                                self.json_part_written(&base, Some(&member));
                                self.field_write(&base, &member, span, value);
                                if let Some(table) = local_table {
                                    self.table_field_written(table, &member, value, span);
                                }
                            }
                            key => {
                                self.json_part_written(&base, None);
                                self.facts.unit.error_codes.computed_field(&key, value);
                                if let Some(table) = local_table {
                                    self.table_fields_unknown(table);
                                }
                                // `t[#t + 1] = v`: an element of a local table.
                                if let (Prefix::Name(table), []) = (target.prefix(), path) {
                                    if !matches!(key, Value::Number(_)) {
                                        self.grows_in_loop(table, value);
                                    }
                                    let appended = appends_to(expression, table);
                                    self.table_written(table, appended.then_some(value));
                                    self.table_holds(table, value);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// `base.member = value`: an `err` string turns a table into an error
    /// reply.
    pub(super) fn field_write(&mut self, base: &Value, member: &str, span: Span, value: &Value) {
        if member == "err" {
            self.facts
                .unit
                .error_codes
                .err_field(value, span, &mut self.facts.diagnostics);
        }
        self.member_write(base, member, span);
    }

    /// `name = value` or `function name() end`.
    pub(super) fn assign_name(&mut self, token: &TokenReference, is_function: bool, value: Value) {
        let name = identifier(token);
        match self.scopes.resolve(name, self.functions_depth()) {
            Binding::Local {
                declared_at, depth, ..
            } => {
                self.scopes.forget_existing_naming(name);
                self.assignments_found.reassigned.insert(declared_at);
                if depth != self.functions_depth() {
                    self.assignments_found.from_closures.insert(declared_at);
                }
                self.scopes.assign(declared_at, value);
            }
            Binding::Global => {
                let span = self.span(token);
                self.global_write(name, span, is_function);
            }
        }
    }

    pub(super) fn walk_local_assignment(&mut self, local: &LocalAssignment) {
        let operands = self.eval_list(local.expressions().iter(), true);
        let names: Vec<&TokenReference> = local.names().iter().collect();
        let trailing_many = operands.last().is_some_and(|operand| operand.many);
        for (position, name) in names.into_iter().enumerate() {
            let value = match operands.get(position) {
                Some(operand) => operand.value.clone(),
                None if trailing_many => Value::Unknown,
                None => Value::Nil,
            };
            let value = match local.expressions().iter().nth(position) {
                Some(expression) => self.with_length_link(expression, value),
                None => value,
            };
            self.declare(identifier(name), offset(name), value);
            // The local names the element: its own reads are followed.
            if let (Some(operand), Binding::Local { value, .. }) = (
                operands.get(position),
                self.scopes
                    .resolve(identifier(name), self.functions_depth()),
            ) && value == operand.value
            {
                self.element_followed(&operand.value, operand.span);
            }
        }
    }

    pub(super) fn walk_function_declaration(&mut self, declaration: &FunctionDeclaration) {
        let function_name = declaration.name();
        let names: Vec<&TokenReference> = function_name.names().iter().collect();
        let method = function_name.method_name();
        match (names.split_first(), method) {
            (Some((only, [])), None) => {
                let summary = self.walk_function_body(declaration.body(), None);
                self.assign_name(only, true, Value::Function(summary.map(std::rc::Rc::new)));
                return;
            }
            (Some((first, rest)), _) => {
                let next = rest.first().map(|name| identifier(name));
                let mut base = self.read_name(first, next);
                let members: Vec<&TokenReference> = rest.iter().copied().chain(method).collect();
                if let Some((target, path)) = members.split_last() {
                    for member in path {
                        let span = self.span(member);
                        base = self.index_member(base, identifier(member), span);
                    }
                    let span = self.context.map.tokens(first, target);
                    self.member_write(&base, identifier(target), span);
                }
            }
            (None, _) => {}
        }
        self.walk_function_body(declaration.body(), method);
    }

    /// Walks a function's body where it is defined (its parameters
    /// unknown), and returns the type of the first value its calls return
    /// (`None` for a library's registered callback, which has no caller in
    /// the file). The values of the enclosing function's locals are left
    /// as they were: the body runs later.
    pub(super) fn walk_function_body(
        &mut self,
        body: &FunctionBody,
        method: Option<&TokenReference>,
    ) -> Option<FunctionSummary> {
        let plan = self.context.plan;
        if let Some(registrations) =
            plan.and_then(|plan| plan.callbacks.get(&library::callback_offset(body)))
        {
            for &registration in registrations {
                self.walk_callback(body, registration);
            }
            return None;
        }
        // Code in a library's own functions runs when its callbacks call it.
        let environment = self.context.environment;
        if plan.is_some() {
            self.context.environment = Environment::FunctionCall;
        }
        let outer = self.scopes.snapshot();
        let id = self.next_function_id;
        self.next_function_id = self.next_function_id.wrapping_add(1);
        let never_called = self
            .context
            .uncalled
            .contains(&library::callback_offset(body))
            || self
                .functions
                .last()
                .is_some_and(|function| function.never_called);
        self.functions.push(Function {
            never_called,
            ..Function::new(id)
        });
        // The body runs when it is called, not here: no key is known to
        // exist then.
        self.scopes.forget_existing();
        self.scopes.push();
        if let Some(method) = method {
            self.declare("self", offset(method), Value::Unknown);
        }
        for (index, parameter) in body.parameters().iter().enumerate() {
            match parameter {
                Parameter::Name(name) => {
                    let parameter = Value::Parameter(ParameterId {
                        function: id,
                        index,
                    });
                    self.declare(identifier(name), offset(name), parameter);
                }
                Parameter::Ellipsis(_) => {
                    if let Some(function) = self.functions.last_mut() {
                        function.vararg = true;
                    }
                }
                _ => {}
            }
        }
        let terminates = self.walk_block(body.block());
        self.scopes.pop();
        let function = self.functions.pop();
        self.scopes.restore(&outer);
        self.context.environment = environment;
        let function = function?;
        let mut returns = function.returns;
        let mut returned_key = function.returned_key.flatten();
        if !terminates {
            let falls_off = Type::of(Kinds::NIL);
            returns = Some(returns.map_or(falls_off.clone(), |returns| returns.join(&falls_off)));
            returned_key = None;
        }
        Some(FunctionSummary {
            id,
            returns: returns?,
            returned_key,
            key_uses: function.key_uses,
        })
    }

    /// A registered function's callback: checked as `FCALL` runs it, its
    /// first parameter standing for KEYS and its second for ARGV, against
    /// the declaration of that function.
    pub(super) fn walk_callback(&mut self, body: &FunctionBody, index: usize) {
        let Some(registration) = self
            .context
            .plan
            .and_then(|plan| plan.registrations.get(index))
        else {
            return;
        };
        let context = Context {
            signature: &registration.signature,
            flags: &registration.flags,
            environment: Environment::FunctionCall,
            tables: [&registration.tables[0], &registration.tables[1]],
            ..self.context
        };
        let unit = self.walk_unit(context, |analyzer| {
            let outer_values = analyzer.scopes.snapshot();
            analyzer.scopes.forget_existing();
            let id = analyzer.next_function_id;
            analyzer.next_function_id = analyzer.next_function_id.wrapping_add(1);
            analyzer.functions.push(Function::new(id));
            analyzer.reply_depth = analyzer.functions.len();
            analyzer.scopes.push();
            for (position, parameter) in body.parameters().iter().enumerate() {
                match parameter {
                    Parameter::Name(name) => {
                        let value = match position {
                            0 => Value::Params(crate::domain::value::Param::Keys),
                            1 => Value::Params(crate::domain::value::Param::Argv),
                            _ => Value::Unknown,
                        };
                        analyzer.declare(identifier(name), offset(name), value);
                    }
                    Parameter::Ellipsis(_) => {
                        if let Some(function) = analyzer.functions.last_mut() {
                            function.vararg = true;
                        }
                    }
                    _ => {}
                }
            }
            if !analyzer.walk_block(body.block()) {
                let end = analyzer.span(body.end_token());
                analyzer.facts.unit.returns.push(ReturnSite {
                    line: end.line,
                    column: end.column,
                    width: end.width,
                    shape: ReturnShape::FallsOffEnd,
                    lone_error_word: None,
                    encoded: None,
                    form: None,
                });
            }
            analyzer.scopes.pop();
            analyzer.functions.pop();
            analyzer.scopes.restore(&outer_values);
            analyzer.observe_key_elements();
            if registration.declaration.is_some() {
                for mut finding in analyzer.param_findings() {
                    finding.function = registration.declaration;
                    // About the declaration rather than a read: placed at
                    // the registration.
                    if finding.parameter.is_some() {
                        finding.line = registration.span.line;
                        finding.column = registration.span.column;
                        finding.width = registration.span.width;
                    }
                    analyzer.facts.diagnostics.push(finding);
                }
            }
        });
        if self.facts.function_walks.len() <= index {
            self.facts
                .function_walks
                .resize_with(index + 1, FunctionWalk::default);
        }
        if let Some(slot) = self.facts.function_walks.get_mut(index) {
            *slot = unit.finish();
        }
    }

    pub(super) fn walk_if(&mut self, statement: &If) -> bool {
        let branches = std::iter::once((statement.condition(), statement.block())).chain(
            statement
                .else_if()
                .into_iter()
                .flatten()
                .map(|branch| (branch.condition(), branch.block())),
        );
        // Where each branch that completes ends; where the conditions
        // tested so far were all false.
        let mut ends = Vec::new();
        let mut all_terminate = true;
        let lone = statement.else_if().is_none() && statement.else_block().is_none();
        for (condition, block) in branches {
            // `if not ttl then ttl = 0 end`: the findings judge its test apart.
            let guard = default_guard(condition, block).filter(|_| lone);
            let outer_guard = std::mem::replace(&mut self.default_guard, guard);
            let (_, terminates, otherwise) = self.guarded_block(condition, block);
            self.default_guard = outer_guard;
            if !terminates {
                ends.push(self.scopes.snapshot());
            }
            all_terminate &= terminates;
            self.scopes.restore(&otherwise);
        }
        let terminates = match statement.else_block() {
            Some(block) => {
                let terminates = self.scoped_block(block);
                if !terminates {
                    ends.push(self.scopes.snapshot());
                }
                terminates && all_terminate
            }
            None => {
                ends.push(self.scopes.snapshot());
                false
            }
        };
        if let Some(joined) = Snapshot::join_all(&ends) {
            self.scopes.restore(&joined);
        }
        terminates
    }

    pub(super) fn walk_numeric_for(&mut self, numeric_for: &NumericFor) {
        let start = self.value_of(numeric_for.start());
        let end = self.value_of(numeric_for.end());
        let step = numeric_for.step().map(|step| self.value_of(step));
        let end_span = self.context.map.expression(numeric_for.end());
        // `math.huge` is a number the analysis does not fold.
        let end = match self
            .context
            .map
            .snippet(end_span)
            .map(|text| text.split_whitespace().collect::<String>())
            .as_deref()
        {
            Some("math.huge") => Value::Number(f64::INFINITY),
            Some("-math.huge") => Value::Number(f64::NEG_INFINITY),
            _ => end,
        };
        let forever = Forever::numeric_range(&start, &end, step.as_ref());
        self.observe_whole_use(&end, Whole::LoopBound, end_span);
        // Integer bounds and step give integer indices.
        let integral = |value: &Value| value.ty().kinds.within(Kinds::INTEGER);
        let index = if integral(&start) && step.as_ref().is_none_or(integral) {
            // `for i = 1, #pairs, 2`: every index has the start's parity.
            let steps_even = step.as_ref().and_then(parity) == Some(true);
            let even = parity(&start).filter(|_| steps_even);
            Value::Typed(Type::integer_with_parity(even))
        } else {
            Value::ComputedNumber
        };
        let variable = numeric_for.index_variable();
        let growing = self
            .count_growth(numeric_for.end(), &end)
            .map(|runs| self.growing_loop(numeric_for.for_token(), &runs));
        self.walk_loop(Exit::AtHead(None), growing, |analyzer| {
            analyzer.scopes.push();
            analyzer.declare(identifier(variable), offset(variable), index.clone());
            let terminates = analyzer.walk_block(numeric_for.block());
            analyzer.scopes.pop();
            terminates
        });
        let endless = self.loop_walked(forever, numeric_for.for_token(), numeric_for.block());
        let last = numeric_for.step().unwrap_or_else(|| numeric_for.end());
        let range = self.context.map.span_between(
            Some(numeric_for.index_variable().token().start_position()),
            span::expression_end(last),
        );
        self.record_loop(numeric_for.for_token(), "for", endless, Some(&end), range);
    }

    pub(super) fn walk_generic_for(&mut self, generic_for: &GenericFor) {
        let operands = self.eval_list(generic_for.expressions().iter(), false);
        if let Some(iterated) = operands.first() {
            self.observe_whole_use(&iterated.value, Whole::Iterated, iterated.span);
        }
        let iterated = match operands.first().map(|operand| &operand.value) {
            Some(Value::ParamIterator(param)) => Some(*param),
            _ => None,
        };
        // The variables of a loop over data are data too, apart from the
        // index `ipairs` counts.
        let data = operands
            .first()
            .map(|operand| operand.value.ty())
            .filter(|ty| ty.read_from.is_some());
        let counted = generic_for
            .expressions()
            .iter()
            .next()
            .is_some_and(calls_ipairs);
        let growing = operands
            .first()
            .and_then(|operand| iterates_growth(&operand.value))
            .map(|runs| self.growing_loop(generic_for.for_token(), &runs));
        self.walk_loop(Exit::AtHead(None), growing, |analyzer| {
            analyzer.scopes.push();
            for (position, name) in generic_for.names().iter().enumerate() {
                let value = match (position, iterated, &data) {
                    (0, Some(_), _) => Value::Typed(Type::of(Kinds::INTEGER)),
                    (1, Some(param), _) => param.element(),
                    (0, None, Some(_)) if counted => Value::Typed(Type::of(Kinds::INTEGER)),
                    (_, None, Some(data)) => Value::Typed(data.part(Type::unknown())),
                    _ => Value::Unknown,
                };
                analyzer.declare(identifier(name), offset(name), value);
            }
            let terminates = analyzer.walk_block(generic_for.block());
            analyzer.scopes.pop();
            terminates
        });
        let expressions = generic_for.expressions();
        let range = self.context.map.span_between(
            expressions.iter().next().and_then(span::expression_start),
            expressions.iter().last().and_then(span::expression_end),
        );
        let driven = operands.first().map(|operand| &operand.value);
        let endless = self.loop_walked(None, generic_for.for_token(), generic_for.block());
        self.record_loop(generic_for.for_token(), "for … in", endless, driven, range);
    }

    pub(super) fn walk_repeat(&mut self, repeat: &Repeat) -> bool {
        let mut until = None;
        let terminates = self.walk_loop(Exit::InPass, None, |analyzer| {
            // The until-condition sees the body's locals: the loop ends
            // where it holds, and goes on where it does not.
            analyzer.scopes.push();
            let terminates = analyzer.walk_block(repeat.block());
            if !terminates {
                let value = analyzer.value_of(repeat.until());
                analyzer.tested(&value);
                let span = analyzer.context.map.expression(repeat.until());
                analyzer.observe_condition(&value, repeat.until(), span, Test::Until, None);
                until = Some(value);
                let end = analyzer.scopes.snapshot();
                analyzer.narrow(repeat.until(), true);
                let exit = analyzer.scopes.snapshot();
                if let Some(innermost) = analyzer.loops.last_mut() {
                    innermost.exits.push(exit);
                }
                analyzer.scopes.restore(&end);
                analyzer.narrow(repeat.until(), false);
            }
            analyzer.scopes.pop();
            terminates
        });
        let forever = until.as_ref().and_then(Forever::until_condition);
        let endless = self.loop_walked(forever, repeat.repeat_token(), repeat.block());
        let condition = self.context.map.expression(repeat.until());
        self.record_loop(repeat.repeat_token(), "repeat", endless, None, condition);
        terminates && !breaks_out(repeat.block())
    }

    pub(super) fn walk_while(&mut self, while_loop: &While) -> bool {
        let mut condition = Value::Unknown;
        self.walk_loop(
            Exit::AtHead(Some(while_loop.condition())),
            None,
            |analyzer| {
                let (value, terminates, _) =
                    analyzer.guarded_block(while_loop.condition(), while_loop.block());
                condition = value;
                terminates
            },
        );
        let forever = Forever::while_condition(&condition);
        let endless = self.loop_walked(forever, while_loop.while_token(), while_loop.block());
        let written = self.context.map.expression(while_loop.condition());
        self.record_loop(while_loop.while_token(), "while", endless, None, written);
        condition == Value::Bool(Some(true)) && !breaks_out(while_loop.block())
    }

    /// Shows the findings the loop opened by `keyword`, with `body`, walked;
    /// `forever` keeps it going when nothing else does. Returns whether it
    /// never ends: `forever`, and nothing in its body leaves it.
    fn loop_walked(
        &mut self,
        forever: Option<Forever>,
        keyword: &TokenReference,
        body: &Block,
    ) -> bool {
        let endless = forever.filter(|_| !may_leave(body));
        let walked = LoopWalked { keyword, endless };
        self.observe(|finding, site| finding.loop_walked(site, &walked));
        endless.is_some()
    }

    /// How often a numeric `for` running to `end` (written `written`) runs,
    /// when the data or an argument sets it: "runs up to `amount`, a count
    /// the script computes". `None` for a literal, a length (of a table
    /// that does not grow, or of `KEYS`, `ARGV`, `...`) and a count the
    /// script caps with `math.min`.
    fn count_growth(&self, written: &Expression, end: &Value) -> Option<String> {
        let ty = end.ty();
        if let Some(read) = &ty.unbounded {
            return Some(once_per_element_of(read));
        }
        if let Some(growth) = &ty.grows {
            return Some(format!(
                "runs up to the length of a table that {}",
                growth.why
            ));
        }
        if matches!(end, Value::Number(_)) || ty.length_of.is_some() || ty.capped {
            return None;
        }
        let text: String = self
            .context
            .map
            .snippet(self.context.map.expression(written))?
            .split_whitespace()
            .collect();
        let bounded = ["#", "table.getn(", "math.min(", "select("]
            .iter()
            .any(|start| text.starts_with(start));
        (!bounded).then(|| format!("runs up to `{text}`, a count the script computes"))
    }

    /// The loop opened by `keyword`, which `runs` as often as the data or
    /// an argument says.
    fn growing_loop(&self, keyword: &TokenReference, runs: &str) -> GrowingLoop {
        let line = self.context.map.token(keyword).line;
        GrowingLoop {
            starts_at: offset(keyword),
            growth: std::rc::Rc::new(Growth {
                why: format!(
                    "gets an element on each pass of the loop at line {line}, which {runs}"
                ),
            }),
        }
    }

    /// The local table `token` gets `element` at a place the loop's pass
    /// decides (`t[#t + 1] = v`, `t[i] = v`, `table.insert(t, v)`): inside
    /// a loop that the data or an argument runs, opened after the table
    /// was declared, the table grows with them. Elements of `KEYS` and
    /// `ARGV` do not: the request holds them already, so the caller sizes
    /// the table.
    pub(super) fn grows_in_loop(&mut self, token: &TokenReference, element: &Value) {
        let from_request = element.ty().read_from.is_some_and(|read| read.in_request);
        if from_request || matches!(element, Value::Key(_) | Value::Arg(_)) {
            return;
        }
        let Some(declared_at) = self.local_declaration(token) else {
            return;
        };
        let Some(growth) = self
            .loops
            .iter()
            .filter_map(|opened| opened.growing.as_ref())
            .find(|growing| growing.starts_at > declared_at)
            .map(|growing| growing.growth.clone())
        else {
            return;
        };
        self.narrow_declared(declared_at, |ty| Type {
            grows: Some(growth.clone()),
            ..ty.clone()
        });
    }

    /// Shows the findings `value` used whole, `how`.
    pub(super) fn observe_whole_use(&mut self, value: &Value, how: Whole, span: Span) {
        let used = WholeUse { value, how, span };
        self.observe(|finding, site| finding.whole_use(site, &used));
    }

    /// Walks a loop whose one pass is `pass` (from the values at the loop's
    /// head; true when the pass cannot complete), until the values at the
    /// head settle: silent passes first, then one that reports. After it,
    /// the values are those where the loop ends (see [`Exit`]) or a
    /// `break` leaves it. Returns whether the last pass cannot complete.
    pub(super) fn walk_loop(
        &mut self,
        exit: Exit<'_>,
        growing: Option<GrowingLoop>,
        mut pass: impl FnMut(&mut Self) -> bool,
    ) -> bool {
        let opened = || Loop {
            exits: Vec::new(),
            growing: growing.clone(),
        };
        let entry = self.scopes.snapshot();
        let mut head = entry.clone();
        let precise = self.loops.len() < PRECISE_LOOP_DEPTH;
        let passes = if precise { LOOP_PASSES } else { 1 };
        for done in 0..passes {
            let reported = self.facts.mark();
            self.loops.push(opened());
            self.scopes.restore(&head);
            let terminates = pass(self);
            let end = (!terminates).then(|| self.scopes.snapshot());
            self.loops.pop();
            self.facts.forget_since(reported);
            let next = match end {
                Some(end) => entry.join(&end),
                None => entry.clone(),
            };
            if next == head {
                break;
            }
            head = if done + 1 == passes {
                entry.widen(&next)
            } else {
                next
            };
        }
        self.loops.push(opened());
        self.scopes.restore(&head);
        let terminates = pass(self);
        let mut exits = self
            .loops
            .pop()
            .map(|innermost| innermost.exits)
            .unwrap_or_default();
        self.scopes.restore(&head);
        if let Exit::AtHead(condition) = exit {
            if let Some(condition) = condition {
                self.narrow(condition, false);
            }
            exits.push(self.scopes.snapshot());
        }
        if let Some(joined) = Snapshot::join_all(&exits) {
            self.scopes.restore(&joined);
        }
        terminates
    }

    /// A block that runs when `condition` holds: the library members the
    /// condition tests exist there, and its locals are narrowed by it.
    /// Returns the condition's value, whether the block never completes
    /// normally, and the values where the condition is false.
    pub(super) fn guarded_block(
        &mut self,
        condition: &Expression,
        block: &Block,
    ) -> (Value, bool, Snapshot) {
        let value = self.value_of(condition);
        self.tested(&value);
        let span = self.context.map.expression(condition);
        self.observe_condition(&value, condition, span, Test::Branch, None);
        let before = self.scopes.snapshot();
        self.narrow(condition, false);
        let otherwise = self.scopes.snapshot();
        self.scopes.restore(&before);
        self.narrow(condition, true);
        let guards = self.guards_of(condition);
        let pushed = self.facts.missing.push_guards(guards);
        let terminates = self.scoped_block(block);
        self.facts.missing.pop_guards(pushed);
        (value, terminates, otherwise)
    }
}

/// Whether `index` is `#table + 1`, the index that appends to `table`.
fn appends_to(index: &Expression, table: &TokenReference) -> bool {
    let Expression::BinaryOperator {
        lhs,
        binop: BinOp::Plus(_),
        rhs,
    } = index
    else {
        return false;
    };
    let is_one = matches!(&**rhs, Expression::Number(token) if token.token().to_string() == "1");
    let is_length = matches!(
        &**lhs,
        Expression::UnaryOperator { unop: UnOp::Hash(_), expression }
            if matches!(&**expression, Expression::Var(Var::Name(name)) if identifier(name) == identifier(table))
    );
    is_one && is_length
}

/// True when the loop body has a `break` of its own (not of a nested loop).
pub(super) fn breaks_out(block: &Block) -> bool {
    if matches!(block.last_stmt(), Some(LastStmt::Break(_))) {
        return true;
    }
    block.stmts().any(|stmt| match stmt {
        Stmt::Do(inner) => breaks_out(inner.block()),
        Stmt::If(branches) => {
            breaks_out(branches.block())
                || branches
                    .else_if()
                    .into_iter()
                    .flatten()
                    .any(|branch| breaks_out(branch.block()))
                || branches.else_block().is_some_and(breaks_out)
        }
        _ => false,
    })
}

/// Whether `expression` is a call of `ipairs`, whose first loop variable
/// is the index it counts.
fn calls_ipairs(expression: &Expression) -> bool {
    let Expression::FunctionCall(call) = expression else {
        return false;
    };
    matches!(call.prefix(), Prefix::Name(name) if identifier(name) == "ipairs")
}

/// `not x` tested, and the block only assigns to `x`: the shape of a
/// default (`if not ttl then ttl = 0 end`). Returns where its `not` is
/// written (the byte offset of the operator).
fn default_guard(condition: &Expression, block: &Block) -> Option<usize> {
    let mut tested = condition;
    while let Expression::Parentheses { expression, .. } = tested {
        tested = expression;
    }
    let Expression::UnaryOperator {
        unop: unop @ UnOp::Not(_),
        expression,
    } = tested
    else {
        return None;
    };
    let Expression::Var(Var::Name(name)) = &**expression else {
        return None;
    };
    let name = identifier(name);
    let only_assigns = block.last_stmt().is_none()
        && block.stmts().next().is_some()
        && block.stmts().all(|statement| match statement {
            Stmt::Assignment(assignment) => assignment.variables().iter().all(
                |variable| matches!(variable, Var::Name(target) if identifier(target) == name),
            ),
            _ => false,
        });
    only_assigns.then(|| offset(unop.token()))
}

/// How often a generic `for` over `iterated` runs, when the data sets it.
fn iterates_growth(iterated: &Value) -> Option<String> {
    let ty = iterated.ty();
    if let Some(read) = &ty.unbounded {
        return Some(once_per_element_of(read));
    }
    ty.grows
        .as_ref()
        .map(|growth| format!("runs once per element of a table that {}", growth.why))
}

/// How often a loop over the whole reply of `read` runs.
fn once_per_element_of(read: &crate::domain::types::UnboundedRead) -> String {
    format!(
        "runs once per element of the reply of `{}` at line {}",
        read.command, read.span.line
    )
}
