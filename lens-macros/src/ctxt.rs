//! Collects errors so one expansion reports all of them at once.

use std::fmt::Display;

use proc_macro2::Span;

/// Error sink threaded through parsing and validation.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records an error spanned on `span`.
    pub fn error(&mut self, span: Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records an error from syn.
    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All recorded errors combined, or `Ok` when there were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
