//! Where the elements of KEYS go (the data is in
//! [`KeyElements`](crate::domain::keys::KeyElements)): each read of
//! `KEYS[n]`, or of a local naming it, and whether the walk follows it to
//! its end. A KEYS element is hashed for the call's slot on Redis Cluster
//! whatever the script does with it, so one that no command takes as a key
//! is a value the caller passes where keys go.

use crate::domain::keys::{NumberUse, Origin};
use crate::domain::operand::{Operand, after_name};
use crate::domain::value::Value;
use crate::interp::Analyzer;
use crate::interp::observe::KnownCommand;
use crate::model::argument_grammar;
use crate::model::commands::shapes::{self, ArgumentKind};
use crate::source::span::Span;

impl Analyzer<'_> {
    /// `value` read at `span`: a KEYS element (or a local naming one) is
    /// a read to follow; one at a computed index may be any element.
    pub(crate) fn element_read(&mut self, value: &Value, span: Span) {
        match value {
            Value::Key(Some(index)) => self.facts.unit.key_elements.read(*index, span),
            Value::Key(None) => self.facts.unit.key_elements.opaque = true,
            _ => {}
        }
    }

    /// The value read at `span` ends here, where the walk sees all that
    /// becomes of it (an `==`, a local that names it).
    pub(crate) fn element_followed(&mut self, value: &Value, span: Span) {
        if let Value::Key(Some(index)) = value {
            self.facts.unit.key_elements.follow(*index, span);
        }
    }

    /// A command takes `value` as a key, or builds one from it.
    pub(crate) fn element_taken(&mut self, value: &Value) {
        let Some(derivation) = value.derivation() else {
            return;
        };
        for origin in derivation.origins() {
            match origin {
                Origin::Key(Some(index)) => {
                    self.facts.unit.key_elements.take(*index);
                }
                Origin::Key(None) => {
                    self.facts.unit.key_elements.opaque = true;
                }
                _ => {}
            }
        }
    }

    /// The arguments of a command the model knows (`known`), `shown` as
    /// messages name it: each KEYS element among them goes to the server
    /// (whether as a key, the key checks record), and one that every form
    /// of the command takes as a number is recorded as such.
    pub(crate) fn command_elements(
        &mut self,
        known: Option<KnownCommand>,
        shown: &str,
        operands: &[Operand],
        words: &[Option<&str>],
    ) {
        // A command the model does not know may take any argument as a
        // key: its KEYS elements escape.
        let Some((name, releases)) = known else {
            return;
        };
        for operand in operands.iter().skip(1).filter(|operand| !operand.many) {
            self.element_followed(&operand.value, operand.span);
        }
        let Some(forms) = shapes::shape(name).and_then(|shape| shape.forms_covering(releases))
        else {
            return;
        };
        let (after, words, spread_from) = after_name(name, operands, words);
        let numbers = argument_grammar::placed_in_every_form(
            &forms,
            words,
            spread_from,
            &[
                ArgumentKind::Integer,
                ArgumentKind::Double,
                ArgumentKind::UnixTime,
            ],
        );
        for (at, argument) in numbers {
            let Some(operand) = after.get(at) else {
                continue;
            };
            if let Value::Key(Some(index)) = operand.value {
                self.facts.unit.key_elements.number(NumberUse {
                    index,
                    span: operand.span,
                    command: shown.to_owned(),
                    argument,
                });
            }
        }
    }
}
