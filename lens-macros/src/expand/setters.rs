//! Chainable setters, one per field.

use proc_macro2::TokenStream;
use quote::quote;

use crate::checked::Checked;
use crate::model::Role;

/// `impl Struct { fn field(mut self, value) -> Self }` for every field.
pub(super) fn setters(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    let ident = &container.ident;
    let setters = container.fields.iter().map(|field| {
        let name = &field.ident;
        let vis = &field.vis;
        let ty = &field.inner_ty;
        let what = field.doc.clone().unwrap_or_default();
        let doc = format!("Sets [`{name}`](Self::{name}). {what}");
        let (param, value) = match field.role {
            Role::Instrument(_) => (quote!(value: #ty), quote!(value)),
            Role::Attribute(_) => (
                quote!(value: impl ::core::convert::Into<#ty>),
                quote!(::core::convert::Into::into(value)),
            ),
        };
        quote! {
            #[doc = #doc]
            #[must_use]
            #[inline]
            #vis fn #name(mut self, #param) -> Self {
                self.#name = #p::Some(#value);
                self
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#setters)*
        }
    }
}
