//! Code generation from a checked [`Enum`].

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use super::Enum;

pub fn expand(parsed: &Enum) -> TokenStream {
    let Enum {
        ident,
        krate,
        variants,
    } = parsed;
    let p = quote!(#krate::__private);
    let variant_idents: Vec<_> = variants.iter().map(|v| &v.ident).collect();
    // Spanned on the variant, so a lint on the string points at it.
    let wires: Vec<_> = variants
        .iter()
        .map(|v| LitStr::new(&v.wire, v.ident.span()))
        .collect();
    let str_ty = quote!(::core::primitive::str);

    quote! {
        const _: () = {
            // Borrows, so that the impls taking `&self` do not need `Copy`:
            // an enum without it gets one error, from `FixedAttributeValue`.
            // `*value` (which binds nothing, so moves nothing) lets an enum
            // without variants match no arm.
            const fn wire(value: &#ident) -> &'static #str_ty {
                match *value {
                    #(#ident::#variant_idents => #wires,)*
                }
            }

            #[automatically_derived]
            impl #ident {
                /// Every value, in declaration order.
                pub const ALL: &'static [#ident] = &[#(#ident::#variant_idents),*];

                /// The value as exported.
                pub const fn as_str(self) -> &'static #str_ty {
                    wire(&self)
                }
            }

            #[automatically_derived]
            impl #p::Display for #ident {
                fn fmt(&self, f: &mut #p::Formatter<'_>) -> #p::FmtResult {
                    #p::Formatter::write_str(f, wire(self))
                }
            }

            #[automatically_derived]
            impl #p::AttributeValue for #ident {
                const FIXED_VALUES: #p::Option<&'static [&'static #str_ty]> =
                    #p::Some(&[#(#wires),*]);

                #[inline]
                fn key_part(&self) -> #p::Option<#p::KeyPart<'_>> {
                    #p::Some(#p::KeyPart::Str(wire(self)))
                }

                #[inline]
                fn to_value(&self) -> #p::Option<#p::Value> {
                    #p::Some(#p::Value::from(wire(self)))
                }
            }

            #[automatically_derived]
            impl #p::FixedAttributeValue for #ident {
                const ALL: &'static [#ident] = #ident::ALL;
            }
        };
    }
}
