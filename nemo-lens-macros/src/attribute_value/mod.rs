//! The `#[derive(AttributeValue)]` macro: a field-less enum as the fixed set
//! of values of an attribute.
//!
//! Split as the `Instruments` derive is: [`parse`] reads the enum and its
//! `#[attribute_value(..)]` attributes into an [`Enum`], resolving every
//! variant's wire value (with [`case`] for `rename_all`) and checking them;
//! [`expand`] generates code from that model alone.
//!
//! For
//!
//! ```text
//! #[derive(AttributeValue, Clone, Copy)]
//! #[attribute_value(rename_all = "snake_case")]
//! enum Outcome { Success, TimedOut }
//! ```
//!
//! the derive emits, with `p` standing for `::nemo_lens::__private`:
//!
//! ```text
//! const _: () = {
//!     const fn wire(value: &Outcome) -> &'static str {
//!         match *value { Outcome::Success => "success", Outcome::TimedOut => "timed_out" }
//!     }
//!     impl Outcome {
//!         pub const ALL: &'static [Outcome] = &[Outcome::Success, Outcome::TimedOut];
//!         pub const fn as_str(self) -> &'static str { wire(&self) }
//!     }
//!     impl p::Display for Outcome { /* wire(self) */ }
//!     impl p::AttributeValue for Outcome {
//!         const FIXED_VALUES: p::Option<&'static [&'static str]> = p::Some(&["success", "timed_out"]);
//!         /* key_part and to_value: KeyPart::Str and Value::from of wire(self) */
//!     }
//!     impl p::FixedAttributeValue for Outcome { const ALL: &'static [Self] = Outcome::ALL; }
//! };
//! ```
//!
//! The full expansion is the snapshot in
//! `nemo-lens-macros/snapshots/outcome.expanded.rs`. Every wire string comes
//! from the one list of variants in the model, so `as_str`, `FIXED_VALUES`
//! and the exported values cannot disagree.

mod case;
mod expand;
mod parse;

#[cfg(test)]
mod snapshot;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Ident, Path};

use crate::ctxt::Ctxt;

/// The enum as read. When `parse` reported no error, its variants are unit
/// variants with distinct, non-empty wire values.
pub struct Enum {
    pub ident: Ident,
    /// The path of the `nemo_lens` crate (`crate = ".."`).
    pub krate: Path,
    pub variants: Vec<Variant>,
}

/// One variant and the string it exports.
pub struct Variant {
    pub ident: Ident,
    pub wire: String,
}

/// The whole derive: the code, or the errors plus a dummy impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let parsed = parse::enumeration(&mut cx, input);
    match cx.check() {
        Ok(()) => expand::expand(&parsed),
        Err(errors) => {
            let mut tokens = errors.to_compile_error();
            tokens.extend(dummy(input, &parsed.krate));
            tokens
        }
    }
}

/// The generated API with no values, so that one mistake gives one message
/// rather than one more at every use of `as_str`, `ALL` or the attribute.
/// `FixedAttributeValue` is left out: it needs `Copy`, which a rejected type
/// may not be.
fn dummy(input: &DeriveInput, krate: &Path) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let p = quote!(#krate::__private);
    let ident = &input.ident;
    quote! {
        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            pub const ALL: &'static [#ident] = &[];
            pub const fn as_str(self) -> &'static ::core::primitive::str {
                // A rejected type may own data, which a const fn cannot drop.
                #p::forget(self);
                ""
            }
        }

        #[automatically_derived]
        impl #p::Display for #ident {
            fn fmt(&self, _: &mut #p::Formatter<'_>) -> #p::FmtResult {
                #p::Ok(())
            }
        }

        #[automatically_derived]
        impl #p::AttributeValue for #ident {
            fn key_part(&self) -> #p::Option<#p::KeyPart<'_>> {
                #p::None
            }

            fn to_value(&self) -> #p::Option<#p::Value> {
                #p::None
            }
        }
    }
}
