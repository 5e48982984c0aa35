//! `key_as_value`: a `KEYS` element that is not a key. Redis Cluster
//! hashes every element of `KEYS` for the slot of the call (`EVAL`,
//! `FCALL`) before the script runs, and refuses a call whose keys hash to
//! several slots with CROSSSLOT. A value the caller passes in `KEYS`
//! hashes to its own slot: a number a command takes, or an empty name that
//! stands for "no key" (slot 0).

use crate::source::text::is_lua_name;
use full_moon::ast::BinOp;

use super::Shown;
use crate::domain::keys::KeyElements;
use crate::domain::value::Value;
use crate::interp::observe::{Certainty, Finding, Operation, Site};

pub(crate) struct KeyAsValue;

impl Finding for KeyAsValue {
    /// `KEYS[n] == ''` or `~= ''`: the caller sometimes passes an empty
    /// name in `KEYS` as a flag.
    fn operation(&self, site: &mut Site<'_>, operation: &Operation<'_>) {
        let Operation::Binary {
            operator: BinOp::TwoEqual(_) | BinOp::TildeEqual(_),
            left,
            right,
            span,
        } = *operation
        else {
            return;
        };
        // At a computed index (`KEYS[i]` in a loop over groups of keys)
        // the element tested may be another than the one passed empty.
        let (element, index) = match (left.value, right.value, left, right) {
            (Value::Key(Some(index)), Value::Str(empty), element, _)
            | (Value::Str(empty), Value::Key(Some(index)), _, element)
                if empty.is_empty() =>
            {
                (element, *index)
            }
            _ => return,
        };
        let [keys, args] = site.tables().map(str::to_owned);
        let named = format!("{keys}[{index}]");
        let comparison = Shown::of(site, span, "this comparison").named();
        let shown = Shown::of(site, element.span, "the element");
        // Through a local naming the element, the line to change is the
        // one that takes the element from KEYS.
        let declared = site.map().snippet(element.span).and_then(|text| {
            let name = text.trim();
            is_lua_name(name)
                .then(|| site.declaration(name).map(|at| (name.to_owned(), at)))
                .flatten()
        });
        let consequence = "an empty name is still a key to Redis Cluster, which hashes it to slot 0, so whenever the caller passes it the call is refused with CROSSSLOT (unless all its other keys are in slot 0 too)";
        let help = format!(
            "always pass the real key in {named} and say whether to use it with an argument (`{args}[n] == '1'`); or, when the script never uses the key, do not pass it in {keys} at all"
        );
        let (at, message) = match declared {
            Some((name, at)) => (
                at,
                format!(
                    "`{name}` holds {named}, which {comparison} (line {}) tests against the empty string: {consequence}",
                    span.line
                ),
            ),
            None => (
                span,
                format!(
                    "{comparison} tests whether the caller passed {} as an empty key name: {consequence}",
                    shown.named()
                ),
            ),
        };
        if site.reported_at(at) {
            return;
        }
        site.report(Certainty::Sometimes, at, message, help);
    }

    /// An element passed only as a number, which no command takes as a
    /// key: every call of the script is refused on Redis Cluster.
    fn key_elements(&self, site: &mut Site<'_>, elements: &KeyElements) {
        let [keys, args] = site.tables().map(str::to_owned);
        for used in elements.numbers_never_keys() {
            let index = used.index;
            let element = format!("{keys}[{index}]");
            let shown = Shown::of(site, used.span, "this argument");
            let subject = match shown.code() {
                text if text == element => format!("`{element}`"),
                _ => format!("{} ({element})", shown.named()),
            };
            // A script that counts its keys may be passed this one by
            // some calls only.
            let (certainty, refused) = if elements.counted {
                (Certainty::Sometimes, "every call that passes it")
            } else {
                (Certainty::Always, "every call")
            };
            site.report(
                certainty,
                used.span,
                format!(
                    "{subject} is the `{}` of `{}`, a number, and no command takes {element} as a key: Redis Cluster hashes every element of {keys} for the call's slot, so this number hashes to a slot of its own and {refused} is refused with CROSSSLOT",
                    used.argument, used.command
                ),
                format!(
                    "pass the number in {args} (`{args}[n]`) and only key names in {keys}: move it out of {element}"
                ),
            );
        }
    }
}

