//! `nil_value`: arithmetic, concatenation, comparison, indexing or calling
//! a value that may be nil or false. Always nil or false: an error on every
//! call that gets there. Sometimes: a warning that says when (a missing
//! key, a non-numeric input).

use super::{Certainty, Sink};
use crate::domain::types::Kinds;
use crate::domain::value::Value;
use crate::source::code::Code;
use crate::source::span::Span;

impl Sink<'_> {
    /// `value` (at `value_span`) is used by `operation` ("perform
    /// arithmetic on", "concatenate", "compare", "index", "call", "get the
    /// length of") in the expression at `span`.
    pub(crate) fn check_nil_use(
        &mut self,
        value: &Value,
        value_span: Span,
        operation: &str,
        span: Span,
    ) {
        // Missing library members have findings of their own.
        if matches!(value, Value::Missing(_)) {
            return;
        }
        let ty = value.ty();
        if ty.is_unknown() || !ty.kinds.intersects(Kinds::FALSY) {
            return;
        }
        let shown = self.shown(value_span, "this value");
        let (shown_named, shown_code) = (shown.named(), shown.code().to_owned());
        let expression = self.shown(span, "the expression").named();
        let absent = ty.kinds.intersection(Kinds::FALSY);
        let (what, lua_type) = if absent == Kinds::FALSE {
            ("false", "a boolean value")
        } else if absent == Kinds::NIL {
            ("nil", "a nil value")
        } else {
            ("nil or false", "a nil value")
        };
        let lua_error = if operation == "compare" {
            "attempt to compare".to_owned()
        } else {
            format!("attempt to {operation} … ({lua_type})")
        };
        if ty.kinds.within(Kinds::FALSY) {
            self.report(
                Code::NilValue,
                Certainty::Always,
                span,
                format!("{shown_named} is always {what} here: {expression} raises \"{lua_error}\" on every call that gets here"),
                "use a value that exists here",
            );
            return;
        }
        // Sometimes: only when the analysis knows when.
        let Some(absence) = ty
            .absence
            .as_ref()
            .filter(|absence| !absence.is_unset_on_some_path())
        else {
            return;
        };
        self.report(
            Code::NilValue,
            Certainty::Sometimes,
            span,
            format!(
                "{shown_named} may be {what}: {} {}, and {expression} then raises \"{lua_error}\"",
                absence.source, absence.when
            ),
            format!("give it a default (`({shown_code} or 0)`), or test it before this line"),
        );
    }
}
