//! Key provenance: which key arguments a script builds by appending to a
//! prefix, and which prefixes those are.
//!
//! Redis Cluster hashes only the part of a key between the first `{` and
//! the first `}` after it, when there is one. A key built by appending to a
//! prefix that holds a complete hash tag (`bull:{emails}:` .. job id)
//! therefore lives in the prefix's slot, whatever is appended. The
//! analysis proves which prefixes each built key starts with (a KEYS
//! element, an argument declared a key prefix, or a parameter of a local
//! function, resolved at each call); the run time checks that each such
//! prefix holds a hash tag in the call's slot.

use std::collections::BTreeSet;

use super::DeclaredBy;
use super::sandbox::Environment;
use super::span::Span;
use super::value::{FunctionSummary, Value};
use super::walker::{Analyzer, Operand};

/// A parameter of a function written in the script: the function's walk
/// (each walk of a function body gets its own number) and the parameter's
/// position, from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ParameterId {
    pub function: u32,
    pub index: usize,
}

/// What a built key starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Origin {
    /// `KEYS[n]` (1-based), or an element of KEYS at an index computed at
    /// run time (`None`).
    Key(Option<usize>),
    /// `ARGV[n]` (1-based).
    Arg(usize),
    /// A parameter of a local function: what the caller passes.
    Parameter(ParameterId),
}

/// The prefixes a built key may start with (one per way it may be built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Derivation(Vec<Origin>);

impl Derivation {
    pub fn of(origin: Origin) -> Self {
        Self(vec![origin])
    }

    pub fn origins(&self) -> &[Origin] {
        &self.0
    }

    /// Either of two derivations: the prefixes of both.
    pub fn union(&self, other: &Derivation) -> Derivation {
        Derivation::from_origins(self.0.iter().chain(&other.0).copied())
            .unwrap_or_else(|| self.clone())
    }

    fn from_origins(origins: impl IntoIterator<Item = Origin>) -> Option<Derivation> {
        let mut collected: Vec<Origin> = origins.into_iter().collect();
        collected.sort_unstable();
        collected.dedup();
        (!collected.is_empty()).then_some(Derivation(collected))
    }
}

impl Value {
    /// The prefixes a string starting with this value starts with, when
    /// it is a key, a key built from a prefix, a literal `ARGV` element or
    /// a function's parameter: what `self .. suffix` derives from.
    pub fn derivation(&self) -> Option<Derivation> {
        match self {
            Value::Key(index) => Some(Derivation::of(Origin::Key(*index))),
            Value::DerivedKey(derivation) => Some(derivation.clone()),
            Value::Arg(Some(index)) => Some(Derivation::of(Origin::Arg(*index))),
            Value::Parameter(parameter) => Some(Derivation::of(Origin::Parameter(*parameter))),
            _ => None,
        }
    }

    /// `self` with the parameters of function `function` replaced by what a
    /// call passes (`argument(index)`): a key or built key keeps its
    /// provenance through a helper such as `local function job_key(id)
    /// return KEYS[1] .. id end`. `None` when a parameter is passed
    /// something that is no key prefix.
    pub fn substituted(&self, function: u32, argument: impl Fn(usize) -> Value) -> Option<Value> {
        match self {
            Value::Parameter(parameter) if parameter.function == function => {
                Some(argument(parameter.index))
            }
            Value::DerivedKey(derivation) => {
                let mut origins = Vec::new();
                for origin in derivation.origins() {
                    match origin {
                        Origin::Parameter(parameter) if parameter.function == function => {
                            origins.extend(argument(parameter.index).derivation()?.0);
                        }
                        other => origins.push(*other),
                    }
                }
                Derivation::from_origins(origins).map(Value::DerivedKey)
            }
            other => Some(other.clone()),
        }
    }
}

/// The prefixes a script builds keys from, which each call must check: a
/// prefix must hold a complete `{hash tag}` in the slot of the call's keys,
/// or the keys built from it may hash to another slot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPrefixes {
    /// The positions (1-based) of the KEYS elements used as prefixes.
    pub keys: BTreeSet<usize>,
    /// Some key is built from a KEYS element whose index is computed at
    /// run time (`KEYS[i] .. suffix`): every key is a prefix.
    pub any_key: bool,
    /// The positions (1-based) of the ARGV elements used as prefixes; the
    /// declaration names each of them a key prefix.
    pub args: BTreeSet<usize>,
}

impl KeyPrefixes {
    /// No key is built from a prefix.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && !self.any_key && self.args.is_empty()
    }

    pub(crate) fn require(&mut self, origin: Origin) {
        match origin {
            Origin::Key(Some(index)) => {
                self.keys.insert(index);
            }
            Origin::Key(None) => self.any_key = true,
            Origin::Arg(index) => {
                self.args.insert(index);
            }
            Origin::Parameter(_) => {}
        }
    }
}

/// A key a function builds from one of its parameters (or uses as it is):
/// checked at each call, against what the call passes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeyUse {
    pub parameter: ParameterId,
    /// The parameter is the start of a built key (`p .. suffix`), not the
    /// whole key.
    pub prefix: bool,
    pub site: KeySite,
}

/// Where a key goes: the command, as displayed, and the line of its call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeySite {
    pub command: String,
    pub line: usize,
    /// The key is used in a function the call at hand calls, not here:
    /// as a whole key, or (`Some(true)`) as the start of one.
    pub in_function: Option<bool>,
}

impl KeySite {
    /// The subject of a message about the value `shown` written here.
    fn of(&self, shown: &str) -> String {
        let (command, line) = (&self.command, self.line);
        match self.in_function {
            Some(true) => format!(
                "`{shown}`, which the function called here appends to for a key of `{command}` (line {line}),"
            ),
            Some(false) => format!(
                "`{shown}`, which the function called here passes as a key of `{command}` (line {line}),"
            ),
            None => format!("key argument `{shown}` of `{command}`"),
        }
    }
}

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
        match value {
            Value::Parameter(parameter) => self.defer_key_use(key_use(*parameter, false, site)),
            Value::DerivedKey(derivation) => {
                for origin in derivation.origins() {
                    self.check_origin(*origin, span, site, report);
                }
            }
            _ => {
                if let Some(what) = value.not_a_key() {
                    self.not_from_keys(span, site, &what, report);
                }
            }
        }
    }

    /// A key (written at `span`) that comes neither from KEYS nor from a
    /// prefix, being `what`: recorded for the review, and an error unless
    /// `report` is off.
    fn not_from_keys(&mut self, span: Span, site: &KeySite, what: &str, report: bool) {
        self.review.key_outside(site.line);
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
            Origin::Parameter(parameter) => self.defer_key_use(key_use(parameter, true, site)),
            Origin::Arg(index) if !self.context.signature.key_prefix_args.contains(&index) => {
                self.review.key_outside(site.line);
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
                    };
                    let hint = format!(
                        "if {args}[{index}] is a prefix with a {{hash tag}} such as `queue:{{emails}}:`, {declare}: each call then checks that it holds one in the slot of the call's keys; or pass the key in {keys}",
                        keys = self.context.tables[0]
                    );
                    self.key_error(span, message, Some(hint));
                }
            }
            // Checked by the call, unless the script opted out of checks.
            other if !self.keys_opted_out() => self.key_prefixes.require(other),
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
        self.diagnostics.push(span.error(
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
                    for origin in derivation.origins() {
                        self.check_origin(*origin, span, &site, report);
                    }
                }
                (_, false) => self.check_key(&passed, span, &site, report),
                // Spread from a call or `...`: unknown, as everywhere.
                (None, true) if operand.map_or(open, |operand| operand.many) => {}
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
