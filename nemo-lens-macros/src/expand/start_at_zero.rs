//! `T::start_at_zero(&meter)`: every series of the `start_at_zero` counters
//! recorded once at 0, so that `rate()` and `increase()` see the first event
//! of each and `absent()` alerts stay quiet before it.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::checked::Checked;
use crate::model::Role;

/// Whether some instrument asks for it.
pub(super) fn wanted(checked: &Checked) -> bool {
    checked
        .measures
        .iter()
        .any(|m| m.decl.start_at_zero.is_some())
}

/// `Self::__none()`: the struct with every field unset (a flattened group
/// at its defaults), from which zero records and guards start.
pub(super) fn none_constructor(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    let ident = &container.ident;
    let nones = container.fields.iter().map(|f| {
        let name = &f.ident;
        match f.role {
            Role::Flatten(_) => quote!(#name: ::core::default::Default::default(),),
            _ => quote!(#name: #p::None,),
        }
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #[inline]
            #[doc(hidden)]
            fn __none() -> Self {
                Self { #(#nones)* }
            }
        }
    }
}

/// The associated function, or nothing when no instrument asks for it.
pub(super) fn start_at_zero(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    let starts: Vec<TokenStream> = checked
        .measures
        .iter()
        .filter(|m| m.decl.start_at_zero.is_some())
        .map(|m| {
            // One record per combination of the measure's attribute values:
            // a struct with only the counter (at 0) and those attributes set
            // goes through `record`, so scoping, defaults and static
            // attributes apply exactly as for a real measurement.
            let field = &m.field.ident;
            let values: Vec<_> = (0..m.attributes.len())
                .map(|i| format_ident!("__v{}", i))
                .collect();
            let sets = m.attributes.iter().zip(&values).map(|(&a, value)| {
                let ident = &checked.attributes[a].field.ident;
                quote!(__zero.#ident = #p::Some(*#value);)
            });
            let mut body = quote! {
                let mut __zero = Self::__none();
                __zero.#field = #p::Some(::core::default::Default::default());
                #(#sets)*
                #p::Instruments::record(&__zero, meter);
            };
            for (&a, value) in m.attributes.iter().zip(&values).rev() {
                let ty = &checked.attributes[a].field.inner_ty;
                // Spanned on the attribute's type: a type with no fixed set
                // of values is reported there.
                let all = quote_spanned!(ty.span()=> <#ty as #p::FixedAttributeValue>::ALL);
                body = quote! {
                    for #value in #all {
                        #body
                    }
                };
            }
            body
        })
        .collect();
    if starts.is_empty() {
        return TokenStream::new();
    }
    let vis = &container.vis;
    let ident = &container.ident;
    let doc = format!(
        "Records 0 on every series of the `start_at_zero` instruments of [`{ident}`]: one per \
         combination of their attribute values. Call it once at start-up, so that the series \
         exist before their first event (`rate()` and `increase()` then count that event, and \
         `absent()` alerts do not fire)."
    );
    quote! {
        #[automatically_derived]
        impl #ident {
            #[doc = #doc]
            #vis fn start_at_zero(meter: &#p::Meter) {
                // Pinned: these series never end of idleness while the
                // set lives, or `absent()` would fire after all.
                #p::pinned(|| { #(#starts)* });
            }
        }
    }
}
