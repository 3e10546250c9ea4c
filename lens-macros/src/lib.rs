//! The `#[derive(Instruments)]` macro of nemo-lens.
//!
//! Use it through the `nemo-lens` crate, which documents every attribute.
//! The macro is split the way serde_derive is: [`parse`] turns attributes into
//! the typed [`model`], [`validate`] applies the OpenTelemetry and nemo-lens
//! rules, and [`expand`] generates code. Every error is spanned on the
//! offending token and all of them are reported together.

mod ctxt;
mod expand;
mod model;
mod parse;
mod suggest;
mod validate;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `nemo_lens::Instruments`; see the `nemo-lens` crate documentation.
#[proc_macro_derive(
    Instruments,
    attributes(instruments, gauge, histogram, counter, up_down_counter, attribute)
)]
pub fn derive_instruments(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
