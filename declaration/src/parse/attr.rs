//! One argument of an attribute, given at most once.

use proc_macro2::Span;

use crate::errors::Errors;

/// An attribute argument: unset, or set where it was first given. Giving
/// it again is reported where the repeat is written, and the first value
/// stays (serde_derive's `Attr` does the same for its attributes).
pub(super) struct Attr<T> {
    /// How messages name it: "`keys` argument", "`ttl_secs` in
    /// `exactly_once(…)`".
    what: String,
    value: Option<T>,
}

impl<T> Attr<T> {
    /// An argument of the attribute itself.
    pub(super) fn argument(name: &str) -> Self {
        Self::named(format!("`{name}` argument"))
    }

    /// An argument named by `what` in messages.
    pub(super) fn named(what: String) -> Self {
        Self { what, value: None }
    }

    pub(super) fn is_set(&self) -> bool {
        self.value.is_some()
    }

    /// Sets the value, or reports a duplicate at `span`.
    pub(super) fn set(&mut self, span: Span, value: T, errors: &mut Errors) {
        if self.value.is_some() {
            errors.push(syn::Error::new(
                span,
                format!("duplicate {}: give it once", self.what),
            ));
        } else {
            self.value = Some(value);
        }
    }

    pub(super) fn get(self) -> Option<T> {
        self.value
    }
}

/// A flag such as `allow_unused`: set where it is written.
pub(super) type Flag = Attr<()>;

impl Flag {
    /// Whether the flag was given.
    pub(super) fn given(&self) -> bool {
        self.is_set()
    }
}
