//! Collects errors so one expansion reports all of them at once.

use std::fmt::Display;

use quote::ToTokens;

/// Error sink threaded through parsing and validation.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records an error spanned on the whole of `node`, from its first token
    /// to its last (`Span::join` does not join on stable, so a bare span
    /// would underline the first token only).
    pub fn error(&mut self, node: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(node, message));
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
