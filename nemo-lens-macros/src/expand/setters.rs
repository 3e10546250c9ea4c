//! Chainable setters, one per field.

use proc_macro2::TokenStream;
use quote::quote;

use crate::checked::Checked;
use crate::kind::FieldType;
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
        let (param, value) = match &field.role {
            // A `Vec` of values takes anything that converts into it: an
            // array literal, a `Vec`, a slice of `f64` ...
            Role::Instruments(decls)
                if decls
                    .iter()
                    .any(|d| d.field_type.is_some_and(|t| t.repeated)) =>
            {
                (
                    quote!(value: impl ::core::convert::Into<#ty>),
                    quote!(::core::convert::Into::into(value)),
                )
            }
            Role::Instruments(_) => (quote!(value: #ty), quote!(value)),
            // The group itself, set whole (its own setters build it).
            Role::Flatten(_) => {
                return quote! {
                    #[doc = #doc]
                    #[must_use]
                    #[inline]
                    #vis fn #name(mut self, value: #ty) -> Self {
                        self.#name = value;
                        self
                    }
                };
            }
            Role::Attribute(_) => return attribute_setter(name, vis, ty, &doc, p),
        };
        optional_setter(name, vis, &doc, param, value, p)
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#setters)*
        }
    }
}

/// The setter of an attribute field holding `Option<ty>`, here and in
/// `#[derive(Attributes)]` groups. A literal such as `8000` is an i32 until
/// told otherwise, and `u16: From<i32>` does not exist: scalars take their
/// own type, the rest anything that converts into it.
pub(crate) fn attribute_setter(
    name: &syn::Ident,
    vis: &syn::Visibility,
    ty: &syn::Type,
    doc: &str,
    p: &TokenStream,
) -> TokenStream {
    let (param, value) = if is_scalar(ty) {
        (quote!(value: #ty), quote!(value))
    } else {
        (
            quote!(value: impl ::core::convert::Into<#ty>),
            quote!(::core::convert::Into::into(value)),
        )
    };
    optional_setter(name, vis, doc, param, value, p)
}

/// `fn name(mut self, param) -> Self` setting the field to `Some(value)`.
fn optional_setter(
    name: &syn::Ident,
    vis: &syn::Visibility,
    doc: &str,
    param: TokenStream,
    value: TokenStream,
    p: &TokenStream,
) -> TokenStream {
    quote! {
        #[doc = #doc]
        #[must_use]
        #[inline]
        #vis fn #name(mut self, #param) -> Self {
            self.#name = #p::Some(#value);
            self
        }
    }
}

/// `bool` or a primitive number, written as a bare name.
pub(crate) fn is_scalar(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    path.qself.is_none()
        && path.path.get_ident().is_some_and(|ident| {
            ident == "bool" || FieldType::SUPPORTED.iter().any(|number| ident == number)
        })
}
