//! The `#[derive(Instruments)]` macro of nemo-lens.
//!
//! Use it through the `nemo-lens` crate, which documents every attribute.
//! The macro is split the way serde_derive is:
//!
//! - [`parse`] reads the struct into the declaration [`model`], checking its
//!   form (known keys, each once, literals where literals go);
//! - [`validate`] applies the OpenTelemetry and nemo-lens rules and resolves
//!   the [`checked`] model: distinct instruments and the fields feeding them;
//! - [`expand`] generates code from the checked model alone.
//!
//! [`kind`] holds the vocabulary every stage shares, [`ctxt`] collects errors
//! (each spanned on the whole offending node, all reported together) and
//! [`messages`] the text they share.
//!
//! [`attribute_value`] is the `#[derive(AttributeValue)]` macro, split the
//! same way and sharing [`ctxt`] and [`messages`].

#![warn(missing_docs)]
// The stage links are for maintainers, who read this crate with
// `cargo doc --document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

mod attribute_value;
mod checked;
mod ctxt;
mod expand;
mod group;
mod kind;
mod messages;
mod model;
mod parse;
mod validate;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `nemo_lens::Instruments`; see the `nemo-lens` crate documentation.
#[proc_macro_derive(
    Instruments,
    attributes(
        instruments,
        gauge,
        histogram,
        counter,
        up_down_counter,
        attribute,
        flatten
    )
)]
pub fn derive_instruments(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

/// Derives `nemo_lens::AttributeValue` for a field-less enum; see the
/// `nemo-lens` crate documentation.
#[proc_macro_derive(AttributeValue, attributes(attribute_value))]
pub fn derive_attribute_value(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    attribute_value::derive(&input).into()
}

/// Derives `nemo_lens::Attributes` for a struct of `#[attribute("key")]`
/// fields, which `Instruments` structs `#[flatten]`; see the `nemo-lens`
/// crate documentation.
#[proc_macro_derive(Attributes, attributes(attributes, attribute))]
pub fn derive_attributes(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    group::derive(&input).into()
}
