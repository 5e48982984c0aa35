//! Accumulating `syn` errors, so one build reports every mistake.

use proc_macro2::TokenStream;

/// Collects errors; each phase pushes what it finds and goes on.
#[derive(Debug, Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(existing) => existing.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// `Err` with every collected error, or `Ok` when there were none.
    pub fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }

    /// The collected errors as `compile_error!` invocations, if any.
    pub fn into_tokens(self) -> Option<TokenStream> {
        self.0.map(|error| error.to_compile_error())
    }
}
