//! Setters, one pair per field: `field(value) -> Self` to chain on a value
//! and `set_field(value) -> &mut Self` to set through a borrow; none for a
//! field a guard sets itself whatever was set (its `in_flight` count),
//! which a setter could only pretend to set. The guard
//! gets the same pair, setting its set's field, so one style works on a set,
//! a guard and a borrowed guard.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::checked::Checked;
use crate::kind::FieldType;
use crate::model::Role;

/// One field's setter, before it is written on a set or a guard.
pub(crate) struct Setter<'a> {
    name: &'a syn::Ident,
    vis: &'a syn::Visibility,
    doc: String,
    param: TokenStream,
    /// What the field is set to, from `value`.
    value: TokenStream,
}

impl Setter<'_> {
    /// Both setters, writing `self.#path.#name`: `path` is empty on the set
    /// and the set's field on a guard (whose type is `#[must_use]` already).
    fn pair(&self, path: &TokenStream) -> TokenStream {
        let must_use = path.is_empty().then(|| quote!(#[must_use]));
        let Setter {
            name,
            vis,
            doc,
            param,
            value,
        } = self;
        let by_borrow = self.by_borrow(path);
        quote! {
            #[doc = #doc]
            #must_use
            #[inline]
            #vis fn #name(mut self, #param) -> Self {
                self #path.#name = #value;
                self
            }

            #by_borrow
        }
    }

    /// `set_name(&mut self, value) -> &mut Self` alone.
    fn by_borrow(&self, path: &TokenStream) -> TokenStream {
        let Setter {
            name,
            vis,
            doc,
            param,
            value,
        } = self;
        let set_name = format_ident!("set_{}", name);
        let set_doc = format!("{doc}\n\nThe same through a borrow, for a value in place.");
        quote! {
            #[doc = #set_doc]
            #[inline]
            #vis fn #set_name(&mut self, #param) -> &mut Self {
                self #path.#name = #value;
                self
            }
        }
    }
}

/// `impl Struct { fn field(..) -> Self; fn set_field(..) -> &mut Self }`.
pub(super) fn setters(checked: &Checked, p: &TokenStream) -> TokenStream {
    let ident = &checked.container.ident;
    let pairs = specs(checked, p).map(|setter| setter.pair(&TokenStream::new()));
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#pairs)*
        }
    }
}

/// The guard's own methods, which a field's by-value setter would clash
/// with: such a field is set on the guard with `set_field` alone.
const GUARD_METHODS: [&str; 4] = ["finish", "fail", "discard", "elapsed"];

/// The same pairs as items of the guard's impl, setting its set's fields.
pub(super) fn guard_setters(checked: &Checked, p: &TokenStream) -> TokenStream {
    let path = quote!(.__metrics);
    specs(checked, p)
        .map(|setter| {
            if GUARD_METHODS.iter().any(|m| setter.name == m) {
                setter.by_borrow(&path)
            } else {
                setter.pair(&path)
            }
        })
        .collect()
}

/// Whether the guard sets `field` itself, overriding whatever was set (an
/// `in_flight` count): such a field gets no setter. (An `elapsed` time set
/// by hand is kept, so it keeps its setter.)
pub(super) fn guard_owned(checked: &Checked, field: &crate::model::Field) -> bool {
    checked.container.guard.is_some()
        && matches!(&field.role, Role::Instruments(decls)
            if decls.iter().any(|d| d.in_flight.is_some()))
}

fn specs<'a>(checked: &'a Checked, p: &'a TokenStream) -> impl Iterator<Item = Setter<'a>> {
    let fields = checked.container.fields.iter();
    fields
        .filter(|field| !guard_owned(checked, field))
        .map(move |field| {
            let name = &field.ident;
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
                    into(ty, p)
                }
                Role::Instruments(_) => (quote!(value: #ty), quote!(#p::Some(value))),
                // The group itself, set whole (its own setters build it).
                Role::Flatten(_) => (quote!(value: #ty), quote!(value)),
                Role::Attribute(_) => attribute_param(ty, p),
            };
            Setter {
                name,
                vis: &field.vis,
                doc,
                param,
                value,
            }
        })
}

/// The setters of an attribute field holding `Option<ty>`, in
/// `#[derive(Attributes)]` groups.
pub(crate) fn attribute_setter(
    name: &syn::Ident,
    vis: &syn::Visibility,
    ty: &syn::Type,
    doc: &str,
    p: &TokenStream,
) -> TokenStream {
    let (param, value) = attribute_param(ty, p);
    Setter {
        name,
        vis,
        doc: doc.to_owned(),
        param,
        value,
    }
    .pair(&TokenStream::new())
}

/// A literal such as `8000` is an i32 until told otherwise, and
/// `u16: From<i32>` does not exist: scalars take their own type, the rest
/// anything that converts into it.
fn attribute_param(ty: &syn::Type, p: &TokenStream) -> (TokenStream, TokenStream) {
    if is_scalar(ty) {
        (quote!(value: #ty), quote!(#p::Some(value)))
    } else {
        into(ty, p)
    }
}

fn into(ty: &syn::Type, p: &TokenStream) -> (TokenStream, TokenStream) {
    (
        quote!(value: impl ::core::convert::Into<#ty>),
        quote!(#p::Some(::core::convert::Into::into(value))),
    )
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
