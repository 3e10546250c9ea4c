//! Code generation from a [`Checked`] declaration.
//!
//! # What an expansion looks like
//!
//! For
//!
//! ```text
//! #[derive(Instruments)]
//! #[instruments(prefix = "app")]
//! struct Step {
//!     /// Training loss.
//!     #[gauge] loss: Option<f64>,
//!     /// Tokens seen.
//!     #[counter(unit = "{token}", attr("phase" = "train"))] tokens: Option<u64>,
//! }
//! ```
//!
//! the derive emits, with `p` standing for `::nemo_lens::__private`:
//!
//! ```text
//! struct StepSet {                         // the instruments, built once per meter
//!     __i0: p::Gauge<f64>,                 // one per distinct instrument, in order;
//!     __i1: p::Counter<u64>,               // p::Option<..> when gated on an opt-in
//!     __attrs1: [p::KeyValue; 1],          // measure 1's attr(..) pairs
//!     __bound: __StepBound,                // the bundle of the instruments no
//!                                          // #[attribute] reaches (absent when
//!                                          // there are none); beside it a
//!                                          // __keyed: p::BoundMap<__StepBound>
//!                                          // for those some #[attribute] does
//!     __warnings: p::DropWarnings,         // counts and rate-limits dropped values
//! }
//! struct __StepBound {                     // bound handles of one attribute combination
//!     __attrs: p::Box<[p::KeyValue]>,      // the #[attribute] values of the combination
//!     __m0: p::OnceLock<p::BoundGauge<f64>>,   // one per measure: a field and
//!     __m1: p::OnceLock<p::BoundCounter<u64>>, // an instrument it feeds
//! }
//! impl p::Instruments for Step {
//!     type Set = StepSet;
//!     const DESCRIPTORS: &[p::Descriptor] = &[/* one per measure */];
//!     fn build_set(meter: &p::Meter) -> StepSet { /* meter.otel().f64_gauge("app.loss")..build() */ }
//!     fn slot() -> &'static p::SetSlot { /* a static per type: the cache key */ }
//!     fn record_with(&self, set: &StepSet) {
//!         if let Some(raw) = self.loss {
//!             match p::checked(raw, false) {          // finite? non-negative counter?
//!                 Ok(v) => set.__bound.__m0.get_or_init(|| set.__i0.bind(..)).record(v),
//!                 Err(why) => set.__warnings.dropped_value("loss", "app.loss", &raw, why),
//!             }
//!         }
//!         /* the same for tokens, binding with __attrs1 */
//!     }
//! }
//! impl Step { fn loss(self, f64) -> Self; fn tokens(self, u64) -> Self }
//! ```
//!
//! A *measure* is one field recording into one instrument: a field with
//! several instrument attributes is several measures. An instrument gated on
//! a semantic-convention opt-in (`opt_in`, `until_opt_in`) is built only
//! when the meter's opt-in opens it; its measures record inside
//! `if let Some(handle) = &set.__iN`.
//!
//! With `#[attribute]` fields, `record_with` records into the instruments
//! none of them reaches (the `only(..)` of each leaves out every field of the
//! instrument) through `__bound`, as above. For the others it borrows each
//! attribute value as a `p::KeyPart` (through `p::AttributeValue::key_part`),
//! looks the combination up in the `BoundMap`, and records through that
//! bundle; when the map is full it records unbound with the list built per
//! call. The full
//! expansion of a small struct is the snapshot in
//! `nemo-lens-macros/snapshots/step.expanded.rs`, checked by a test.
//!
//! Generated code names everything through `#krate::__private`, and
//! primitives as `::core::primitive::..`, so it compiles in a crate that
//! depends only on `nemo-lens` and that shadows `Option`, `Some`, `Result`,
//! `std`, `core` or `f64`.

pub(crate) mod attribute;
mod descriptors;
mod guard;
mod observe;
mod record;
mod set;
pub(crate) mod setters;
mod start_at_zero;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Ident, Path};

use crate::checked::Checked;
use crate::ctxt::Ctxt;
use crate::{messages, parse, validate};

/// The whole derive: parse, validate, expand, or errors plus a dummy impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let container = parse::container(&mut cx, input);
    let checked = container.as_ref().map(|c| validate::check(&mut cx, c));
    match (cx.check(), checked) {
        (Ok(()), Some(checked)) => expand(&checked),
        (result, _) => {
            let mut tokens = result
                .err()
                .map(|e| e.to_compile_error())
                .unwrap_or_default();
            let krate = container.as_ref().map(|c| c.krate.clone());
            // Setters only when the struct asked for them and that much was
            // read: `setters = false` means the user writes their own.
            let setters = container.as_ref().is_some_and(|c| c.setters);
            tokens.extend(dummy(input, krate, setters));
            tokens
        }
    }
}

/// An impl with no instruments, so that one mistake gives one message rather
/// than one more at every `record` call.
fn dummy(input: &DeriveInput, krate: Option<Path>, setters: bool) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let krate = krate.unwrap_or_else(|| syn::parse_quote!(::nemo_lens));
    let ident = &input.ident;
    let setters = if setters {
        dummy_setters(input)
    } else {
        TokenStream::new()
    };
    quote! {
        #setters
        const _: () = {
            impl #krate::__private::Instruments for #ident {
                type Set = ();
                const DESCRIPTORS: &'static [#krate::__private::Descriptor] = &[];
                fn build_set(_: &#krate::__private::Meter) {}
                fn slot() -> &'static #krate::__private::SetSlot {
                    static SLOT: #krate::__private::SetSlot = #krate::__private::SetSlot::new();
                    &SLOT
                }
                fn record_with(&self, _: &()) {}
            }
        };
    }
}

/// The setters of every `Option<T>` field of a rejected struct, so each use
/// of a setter does not add a misleading "field, not a method" error to the
/// one that matters.
fn dummy_setters(input: &DeriveInput) -> TokenStream {
    let syn::Data::Struct(syn::DataStruct {
        fields: syn::Fields::Named(fields),
        ..
    }) = &input.data
    else {
        return TokenStream::new();
    };
    let setters = fields.named.iter().filter_map(|field| {
        let name = field.ident.as_ref()?;
        let inner = option_inner(&field.ty)?;
        let vis = &field.vis;
        // As the real setters: scalars take their own type (so `8000` is a
        // `u16`), everything else anything that converts into it.
        let (param, value) = if setters::is_scalar(inner) {
            (quote!(value: #inner), quote!(value))
        } else {
            (
                quote!(value: impl ::core::convert::Into<#inner>),
                quote!(::core::convert::Into::into(value)),
            )
        };
        let set_name = format_ident!("set_{}", name);
        Some(quote! {
            #[allow(dead_code)]
            #vis fn #name(mut self, #param) -> Self {
                self.#name = ::core::option::Option::Some(#value);
                self
            }
            #[allow(dead_code)]
            #vis fn #set_name(&mut self, #param) -> &mut Self {
                self.#name = ::core::option::Option::Some(#value);
                self
            }
        })
    });
    let ident = &input.ident;
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#setters)*
        }
    }
}

/// `T` of a field typed `Option<T>`.
fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(inner) => Some(inner),
        _ => None,
    }
}

/// Names shared by the generated items.
struct Names {
    /// `#krate::__private`.
    p: TokenStream,
    set: Ident,
    bound: Ident,
}

fn expand(checked: &Checked) -> TokenStream {
    let container = checked.container;
    let krate = &container.krate;
    let names = Names {
        p: quote!(#krate::__private),
        set: format_ident!("{}Set", container.ident),
        bound: format_ident!("__{}Bound", container.ident),
    };
    let Names { p, set, .. } = &names;
    let ident = &container.ident;
    let set_items = set::set_items(checked, &names);
    let build = set::build_set(checked, &names);
    let descriptors = checked
        .measures
        .iter()
        .map(|m| descriptors::descriptor(checked, m, p));
    let record = record::record_with(checked, &names);
    let setters = if container.setters {
        setters::setters(checked, p)
    } else {
        TokenStream::new()
    };
    let start_at_zero = start_at_zero::start_at_zero(checked, p);
    let guard = guard::guard(checked, p);
    let observe = observe::observe(checked, p);
    let none = if start_at_zero::wanted(checked) || container.guard.is_some() {
        start_at_zero::none_constructor(checked, p)
    } else {
        TokenStream::new()
    };
    let disjoint = disjoint_groups(checked, p);

    quote! {
        #set_items

        const _: () = {
            #[automatically_derived]
            impl #p::Instruments for #ident {
                type Set = #set;

                const DESCRIPTORS: &'static [#p::Descriptor] = &[#(#descriptors),*];

                fn build_set(meter: &#p::Meter) -> #set {
                    #build
                }

                #[inline]
                fn slot() -> &'static #p::SetSlot {
                    static SLOT: #p::SetSlot = #p::SetSlot::new();
                    &SLOT
                }

                #[inline]
                fn record_with(&self, set: &#set) {
                    #record
                }
            }

            #setters
            #start_at_zero
            #observe
            #none
            #disjoint
        };
        #guard
    }
}

/// A compile-time check that no attribute key is both flattened and
/// declared by the struct (as a field or an `attr(..)` pair), nor flattened
/// twice: the derive cannot see a group's keys, so the constant compares
/// them, and fails on the `#[flatten]` attribute.
fn disjoint_groups(checked: &Checked, p: &TokenStream) -> TokenStream {
    if checked.flattened.is_empty() {
        return TokenStream::new();
    }
    let mut own: Vec<String> = checked.attributes.iter().map(|a| a.key()).collect();
    for m in &checked.measures {
        for (key, _) in m.static_attrs() {
            if !own.contains(&key) {
                own.push(key);
            }
        }
    }
    let checks = checked.flattened.iter().enumerate().map(|(i, g)| {
        let group = record::group_path(&g.field.inner_ty, p);
        let before = checked.flattened[..i]
            .iter()
            .map(|b| record::group_path(&b.field.inner_ty, p));
        let message = format!(
            "an attribute key of the flattened `{}` (field `{}`) is also declared by this struct \
             or by a group flattened before it: each key may come from one place; remove it \
             from the struct or from the group",
            messages::display_type(&g.field.inner_ty),
            g.field.ident
        );
        quote_spanned! {g.field.ident.span()=>
            const _: () = ::core::assert!(
                #p::keys_disjoint(&[&[#(#own),*], #group::KEYS #(, #before::KEYS)*]),
                #message
            );
        }
    });
    quote!(#(#checks)*)
}

/// `__i{n}`: the set's field holding instrument `n`.
fn instrument_ident(index: usize) -> Ident {
    format_ident!("__i{}", index)
}

/// `__attrs{n}`: the set's field holding measure `n`'s `attr(..)` pairs.
fn static_attrs_ident(measure: usize) -> Ident {
    format_ident!("__attrs{}", measure)
}

/// `__m{n}`: the bound handle of measure `n` (a field and one instrument it
/// feeds) in a bundle.
fn bound_ident(measure: usize) -> Ident {
    format_ident!("__m{}", measure)
}

#[cfg(test)]
mod snapshot;
