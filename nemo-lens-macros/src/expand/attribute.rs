//! The code of one `#[attribute]` field, written once for every place that
//! reads it: the bound-handle look-up and the unbound list in `record_with`,
//! observed sets, descriptors, and `#[derive(Attributes)]` groups.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Type};

/// One attribute field: where its value is read from and what it declares.
pub(crate) struct Field<'a> {
    /// The struct holding the field: `self`, or `__item` in an observer.
    pub receiver: TokenStream,
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub key: String,
    pub default: Option<&'a LitStr>,
}

impl<'a> Field<'a> {
    /// The `#[attribute]` field `attached` of an `Instruments` struct, read
    /// from `receiver`.
    pub fn of(attached: &'a crate::checked::Attached, receiver: TokenStream) -> Self {
        Field {
            receiver,
            ident: &attached.field.ident,
            ty: &attached.field.inner_ty,
            key: attached.key(),
            default: attached.decl.default.as_ref(),
        }
    }

    /// The value borrowed for the bound-handle look-up, its default when
    /// unset (`p::Option<p::KeyPart>`).
    pub fn key_part(&self, p: &TokenStream) -> TokenStream {
        let Field {
            receiver,
            ident,
            ty,
            default,
            ..
        } = self;
        // Spanned on the type: a type that is no attribute value is
        // reported there.
        let key_part = quote_spanned!(ty.span()=> #p::AttributeValue::key_part);
        let default = default.map(|d| quote!(.or(#p::Some(#p::KeyPart::Str(#d)))));
        quote!(#receiver.#ident.as_ref().and_then(#key_part)#default)
    }

    /// Pushes the attribute (or its default) onto the `Vec<KeyValue>` `list`.
    pub fn push(&self, list: &TokenStream, p: &TokenStream) -> TokenStream {
        let Field {
            receiver,
            ident,
            ty,
            key,
            default,
        } = self;
        let to_value = quote_spanned!(ty.span()=> #p::AttributeValue::to_value);
        let fallback = default.map(|d| quote!(else { #list.push(#p::KeyValue::new(#key, #d)); }));
        quote! {
            if let #p::Some(__value) = #receiver.#ident.as_ref().and_then(#to_value) {
                #list.push(#p::KeyValue::new(#key, __value));
            } #fallback
        }
    }

    /// Its `p::AttributeDescriptor`: key, fixed values of its type, default.
    pub fn descriptor(&self, p: &TokenStream) -> TokenStream {
        let Field {
            ty, key, default, ..
        } = self;
        let values = quote_spanned!(ty.span()=> <#ty as #p::AttributeValue>::FIXED_VALUES);
        let default = match default {
            Some(d) => quote!(#p::Some(#d)),
            None => quote!(#p::None),
        };
        quote!(#p::AttributeDescriptor { key: #key, values: #values, default: #default })
    }
}

/// `__raw` as the instrument records it: a `Duration` field converted to the
/// instrument's unit (validate checked it is a duration unit).
pub(crate) fn raw_value(unit: &str, duration: bool, p: &TokenStream) -> TokenStream {
    match nemo_lens_naming::nanos_per(unit).filter(|_| duration) {
        Some(nanos) => quote!(#p::duration_in(__raw, #nanos)),
        None => quote!(__raw),
    }
}
