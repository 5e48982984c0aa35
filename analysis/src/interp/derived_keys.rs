//! Key provenance in the walk: which key arguments a script builds by
//! appending to a prefix, and which prefixes those are (the data is in
//! [`keys`](crate::domain::keys)).
//!
//! Redis Cluster hashes only the part of a key between the first `{` and
//! the first `}` after it, when there is one. A key built by appending to a
//! prefix that holds a complete hash tag (`bull:{emails}:` .. job id)
//! therefore lives in the prefix's slot, whatever is appended. The
//! analysis proves which prefixes each built key starts with (a KEYS
//! element, an argument declared a key prefix, or a parameter of a local
//! function, resolved at each call); the run time checks that each such
//! prefix holds a hash tag in the call's slot.

use crate::domain::keys::{KeySite, KeyUse, Origin, ParameterId};
use crate::domain::operand::Operand;
use crate::domain::review::{KeyTaken, TakenKey};
use crate::domain::signature::DeclaredBy;
use crate::domain::value::{FunctionSummary, Value};
use crate::interp::Analyzer;
use crate::model::sandbox::Environment;
use crate::source::code::Code;
use crate::source::span::Span;

impl Analyzer<'_> {
    /// Whether keys may come from anywhere: the script's
    /// `allow-cross-slot-keys` flag or the declaration's `dynamic_keys`.
    pub(crate) fn keys_opted_out(&self) -> bool {
        self.context.flags.allow_cross_slot_keys || self.context.signature.dynamic_keys
    }

    /// Checks that a key argument of `command` comes from KEYS, is built
    /// from a KEYS element or a declared key prefix (which the call then
    /// checks), or is a parameter that the function's calls check.
    /// Errors only with `report` (and no opt-out).
    pub(crate) fn check_key(&mut self, value: &Value, span: Span, site: &KeySite, report: bool) {
        let report = report && !self.keys_opted_out();
        self.element_taken(value);
        match value {
            Value::Parameter(parameter) => self.defer_key_use(key_use(*parameter, false, site)),
            Value::Key(index) => self.taken(TakenKey::Key(*index), site),
            Value::DerivedKey(derivation) => {
                for origin in derivation.origins() {
                    self.check_origin(*origin, span, site, report);
                }
            }
            _ => {
                self.taken(TakenKey::Unbounded, site);
                if let Some(what) = value.not_a_key() {
                    self.not_from_keys(span, site, &what, report);
                }
            }
        }
    }

    /// Records for the review the key `key` that `site` takes.
    fn taken(&mut self, key: TakenKey, site: &KeySite) {
        self.facts.unit.review.key(KeyTaken {
            key,
            command: site.command.clone(),
            line: site.line,
            reads: site.reads,
            writes: site.writes,
        });
    }

    /// A key (written at `span`) that comes neither from KEYS nor from a
    /// prefix, being `what`: recorded for the review, and an error unless
    /// `report` is off.
    fn not_from_keys(&mut self, span: Span, site: &KeySite, what: &str, report: bool) {
        self.facts.unit.review.key_outside(site.line);
        if report {
            let shown = self.quote(span, "this argument");
            let message = format!(
                "{} does not come from {keys} ({what})",
                site.of(&shown),
                keys = self.context.tables[0]
            );
            self.key_error(span, message, None);
        }
    }

    /// One prefix a key (written at `span`) is built from.
    fn check_origin(&mut self, origin: Origin, span: Span, site: &KeySite, report: bool) {
        match origin {
            Origin::Key(index) => self.taken(TakenKey::BuiltFromKey(index), site),
            Origin::Arg(index) if self.context.signature.key_prefix_args.contains(&index) => {
                self.taken(TakenKey::BuiltFromArg(index), site);
            }
            Origin::Parameter(_) | Origin::Arg(_) => {}
        }
        match origin {
            Origin::Parameter(parameter) => self.defer_key_use(key_use(parameter, true, site)),
            Origin::Arg(index) if !self.context.signature.key_prefix_args.contains(&index) => {
                self.taken(TakenKey::Unbounded, site);
                self.facts.unit.review.key_outside(site.line);
                if report {
                    let shown = self.quote(span, "this argument");
                    let args = self.context.tables[1];
                    let message = format!(
                        "{} is built from {args}[{index}], an argument not declared a key prefix",
                        site.of(&shown)
                    );
                    let declare = match self.context.signature.declared_by {
                        DeclaredBy::RustFunction => {
                            "mark its Rust parameter `#[key_prefix]`".to_string()
                        }
                        DeclaredBy::Header => {
                            format!("write `-- {args}[{index}] = key prefix` in the header")
                        }
                        DeclaredBy::CommandLine => format!("pass `--key-prefix-args {index}`"),
                        DeclaredBy::Configuration
                        | DeclaredBy::HostCall
                        | DeclaredBy::ScriptReads => {
                            format!("add {index} to `key_prefix_args` in `redis-script.toml`")
                        }
                    };
                    let hint = format!(
                        "if {args}[{index}] is a prefix with a {{hash tag}} such as `queue:{{emails}}:`, {declare}: each call then checks that it holds one in the slot of the call's keys; or pass the key in {keys}",
                        keys = self.context.tables[0]
                    );
                    self.key_error(span, message, Some(hint));
                }
            }
            // Checked by the call, unless the script opted out of checks.
            other if !self.keys_opted_out() => self.facts.unit.key_prefixes.require(other),
            _ => {}
        }
    }

    /// A key that is not proven to be in the slot of the call's keys;
    /// `hint` replaces the general one.
    fn key_error(&mut self, span: Span, message: String, hint: Option<String>) {
        let keys = self.context.tables[0];
        let (routed, opt_out) = if self.context.environment == Environment::FunctionCall {
            (
                "the call by its keys",
                "the function's `flags = {'allow-cross-slot-keys'}`",
            )
        } else {
            ("the script by KEYS", "`#!lua flags=allow-cross-slot-keys`")
        };
        let hint = hint.unwrap_or_else(|| {
            format!(
                "pass the key in {keys}, or build it by appending to a {keys} element (`{keys}[1] .. id`), whose {{hash tag}} each call then checks; or opt out with {opt_out} or the attribute's `dynamic_keys`"
            )
        });
        self.facts.diagnostics.push(span.error(
            Code::KeyNotFromKeys,
            format!(
                "{message}: Redis Cluster routes {routed} only, so this key may live on another node"
            ),
            hint,
        ));
    }

    /// A call (at `call_span`) of a function written in the script: the
    /// keys it builds from its parameters are checked against what this
    /// call passes, and what it returns keeps its provenance.
    pub(crate) fn call_summary(
        &mut self,
        summary: &FunctionSummary,
        operands: &[Operand],
        call_span: Span,
    ) -> Value {
        // What the call passes: nil past the last argument, unknown past a
        // trailing call or `...`.
        let open = operands.last().is_some_and(|operand| operand.many);
        let argument = |index: usize| match operands.get(index) {
            Some(operand) => operand.value.clone(),
            None if open => Value::Unknown,
            None => Value::Nil,
        };
        let report = !self.keys_opted_out();
        for key_use in &summary.key_uses {
            if key_use.parameter.function != summary.id {
                continue;
            }
            let passed = argument(key_use.parameter.index);
            let operand = operands.get(key_use.parameter.index);
            let span = operand.map_or(call_span, |operand| operand.span);
            let site = KeySite {
                in_function: Some(key_use.prefix),
                ..key_use.site.clone()
            };
            match (passed.derivation(), key_use.prefix) {
                (Some(derivation), true) => {
                    self.element_taken(&passed);
                    for origin in derivation.origins() {
                        self.check_origin(*origin, span, &site, report);
                    }
                }
                (_, false) => self.check_key(&passed, span, &site, report),
                // Spread from a call or `...`: unknown, as everywhere.
                (None, true) if operand.map_or(open, |operand| operand.many) => {
                    self.taken(TakenKey::Unbounded, &site);
                }
                (None, true) => {
                    let what = passed
                        .not_a_key()
                        .unwrap_or_else(|| "a value read at run time".to_string());
                    self.not_from_keys(span, &site, &what, report);
                }
            }
        }
        match &summary.returned_key {
            Some(returned) => returned
                .substituted(summary.id, argument)
                .unwrap_or(Value::ComputedString(None)),
            None => Value::Typed(summary.returns.clone()),
        }
    }
}

fn key_use(parameter: ParameterId, prefix: bool, site: &KeySite) -> KeyUse {
    KeyUse {
        parameter,
        prefix,
        site: site.clone(),
    }
}
