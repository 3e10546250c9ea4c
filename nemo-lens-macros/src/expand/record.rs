//! The body of `record_with`.
//!
//! Each `Some` field is checked, then recorded through its bound handle. A
//! measure of an instrument no attribute value reaches (a struct without
//! `#[attribute]` fields, or an `only(..)` on each that leaves out every
//! field of the instrument: [`Checked::is_keyed`]) records through the
//! bundle the set holds. The others' handles come from the set's
//! `BoundMap`, keyed by the attribute values, looked up only when one of
//! them holds a value; when that map is full the call falls back to unbound
//! records with the attribute list built per call in a `Vec`, which exports
//! exactly the same series.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::attribute;
use super::{bound_ident, instrument_ident, static_attrs_ident, Names};
use crate::checked::{Checked, Measured};
use crate::kind::InstrumentKind;

pub(super) fn record_with(checked: &Checked, names: &Names) -> TokenStream {
    let p = &names.p;
    if checked.measures.is_empty() {
        return quote!(let _ = set;);
    }
    let span = span(checked, p);
    let (keyed, fixed): (Vec<usize>, Vec<usize>) =
        (0..checked.measures.len()).partition(|&n| checked.is_keyed(&checked.measures[n]));
    let has_fixed = !fixed.is_empty();
    let fixed = fixed.iter().map(|&n| bound_field(checked, n, p));
    let fixed = quote! {
        let __b = &set.__bound;
        #(#fixed)*
    };
    if keyed.is_empty() {
        return quote! {
            #span
            #fixed
        };
    }

    // The record returns before its attribute values are looked at when no
    // field they reach holds a value.
    let any_keyed = any_value(checked, &keyed);
    let keys = checked.attributes.iter().map(|a| a.key());
    let parts = checked
        .attributes
        .iter()
        .map(|a| attribute::Field::of(a, quote!(self)).key_part(p));
    let bound = &names.bound;
    let fields = keyed.iter().map(|&n| bound_field(checked, n, p));
    let unbound = unbound(checked, &keyed, p);
    let (keys, parts) = if checked.flattened.is_empty() {
        (quote!(&[#(#keys),*]), quote!(let __parts = [#(#parts),*];))
    } else {
        // The groups' keys and look-up values follow the struct's own, in
        // one constant and one array whose lengths the groups' types give.
        let own = checked.attributes.len();
        let groups: Vec<TokenStream> = checked
            .flattened
            .iter()
            .map(|g| group_path(&g.field.inner_ty, p))
            .collect();
        let fills = checked.flattened.iter().zip(&groups).map(|(g, group)| {
            let ident = &g.field.ident;
            quote! {
                let __next = __at + #group::KEYS.len();
                #group::key_parts(&self.#ident, &mut __parts[__at..__next]);
                __at = __next;
            }
        });
        let sets = parts
            .enumerate()
            .map(|(i, part)| quote!(__parts[#i] = #part;));
        (
            quote!(&__KEYS),
            quote! {
                const __LEN: usize = #own #(+ #groups::KEYS.len())*;
                const __KEYS: [&'static str; __LEN] =
                    #p::concat_keys(&[&[#(#keys),*] #(, #groups::KEYS)*]);
                let mut __parts: [#p::Option<#p::KeyPart<'_>>; __LEN] = [#p::None; __LEN];
                #(#sets)*
                let mut __at = #own;
                #(#fills)*
                let _ = __at;
            },
        )
    };
    let set_name = checked.container.ident.to_string();
    let required: Vec<TokenStream> = checked
        .attributes
        .iter()
        .filter(|a| a.decl.required.is_some())
        .map(|a| {
            let field = &a.field.ident;
            let key = a.decl.key.value();
            let setter = field.to_string();
            quote! {
                if self.#field.is_none() {
                    static __MISSING: #p::MissingAttribute =
                        #p::MissingAttribute::new(#set_name, #key, #setter);
                    __MISSING.note();
                }
            }
        })
        .collect();
    // A required attribute left unset is noted by any record with a value,
    // as before the look-up: with fixed measures, before those.
    let (required_first, required_keyed) = if has_fixed && !required.is_empty() {
        let any = any_value(checked, &(0..checked.measures.len()).collect::<Vec<_>>());
        let first = quote! {
            if !(#any) {
                return;
            }
            #(#required)*
        };
        (first, TokenStream::new())
    } else {
        (TokenStream::new(), quote!(#(#required)*))
    };
    let keyed_span = if has_fixed {
        TokenStream::new()
    } else {
        span.clone()
    };
    let keyed = quote! {
        if !(#any_keyed) {
            return;
        }
        #required_keyed
        #parts
        #keyed_span
        let __recorded = set.__keyed.with(
            #keys,
            &__parts,
            #bound::new,
            |__b: &#bound| { #(#fields)* },
        );
        if __recorded.is_none() {
            #unbound
        }
    };
    if has_fixed {
        // Recorded first, so that a record of these fields alone returns
        // before the look-up; all the histograms share `__span`.
        quote! {
            #required_first
            #span
            { #fixed }
            #keyed
        }
    } else {
        keyed
    }
}

/// Whether some field of `measures` (indices into the checked measures)
/// holds a value: each field tested once, however many instruments it
/// feeds.
fn any_value(checked: &Checked, measures: &[usize]) -> TokenStream {
    let mut fields: Vec<&syn::Ident> = Vec::new();
    for &n in measures {
        let field = &checked.measures[n].field.ident;
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    let tests = fields.iter().map(|field| quote!(self.#field.is_some()));
    quote!(#(#tests)||*)
}

/// `__span`, the record call's span for exemplars, when measures record
/// into two histograms or more: they share one read. A lone histogram
/// reads it itself, only where a span may be current (a shared one would
/// cost every record its store, span or not).
fn span(checked: &Checked, p: &TokenStream) -> TokenStream {
    if shares_span(checked) {
        quote!(let __span = #p::SpanOnce::new();)
    } else {
        TokenStream::new()
    }
}

fn shares_span(checked: &Checked) -> bool {
    let histograms = checked
        .measures
        .iter()
        .filter(|m| checked.instrument_of(m).kind == InstrumentKind::Histogram)
        .count();
    histograms > 1
}

/// Checks measure `n`'s field and records it through `__b`, binding on
/// first use.
fn bound_field(checked: &Checked, n: usize, p: &TokenStream) -> TokenStream {
    let m = &checked.measures[n];
    let instrument = checked.instrument_of(m);
    let field = bound_ident(n);
    let attributes = field_attributes(checked, n, p, quote!(&__b.__attrs));
    let handle = handle(checked, m);
    // Two histograms or more share the record call's span, read at most
    // once.
    let record = if instrument.kind == InstrumentKind::Histogram && shares_span(checked) {
        quote!(record_in(__v, &__span))
    } else {
        let method = instrument.kind.record_method();
        quote!(#method(__v))
    };
    let call = quote! {
        __b.#field
            .get_or_init(|| #handle.bind(&#attributes))
            .#record
    };
    checked_record(checked, m, p, call)
}

/// The instrument `m` records into, as `record_with` names it: `set.__iN`,
/// or `__h` inside the `if let` that a gated instrument needs.
fn handle(checked: &Checked, m: &Measured) -> TokenStream {
    match checked.instrument_of(m).gate {
        Some(_) => quote!(__h),
        None => {
            let field = instrument_ident(m.instrument);
            quote!(set.#field)
        }
    }
}

/// The attributes measure `n` records with, from the struct's attribute
/// list `all`: those its `only(..)` scoping keeps, then its static pairs.
fn field_attributes(checked: &Checked, n: usize, p: &TokenStream, all: TokenStream) -> TokenStream {
    let m = &checked.measures[n];
    let statics = if m.decl.attrs.is_empty() {
        quote!(&[])
    } else {
        let statics = static_attrs_ident(n);
        quote!(&set.#statics)
    };
    let only = if m.is_scoped(checked) {
        let keys = m.attributes.iter().map(|&a| checked.attributes[a].key());
        if m.flattened.is_empty() {
            quote!(#p::Some(&[#(#keys),*]))
        } else {
            let own = m.attributes.len();
            let groups: Vec<TokenStream> = m
                .flattened
                .iter()
                .map(|&g| group_path(&checked.flattened[g].field.inner_ty, p))
                .collect();
            quote!(#p::Some({
                const __ONLY: [&'static str; #own #(+ #groups::KEYS.len())*] =
                    #p::concat_keys(&[&[#(#keys),*] #(, #groups::KEYS)*]);
                &__ONLY
            }))
        }
    } else {
        quote!(#p::None)
    };
    quote!(#p::field_attributes(#all, #only, #statics))
}

/// The unbound path of the `keyed` measures: the attribute list built per
/// call, as the SDK docs show.
fn unbound(checked: &Checked, keyed: &[usize], p: &TokenStream) -> TokenStream {
    let groups: Vec<TokenStream> = checked
        .flattened
        .iter()
        .map(|g| group_path(&g.field.inner_ty, p))
        .collect();
    let group_pushes = checked.flattened.iter().zip(&groups).map(|(g, group)| {
        let ident = &g.field.ident;
        quote!(#group::push_key_values(&self.#ident, &mut __attrs);)
    });
    let capacity = checked.attributes.len()
        + keyed
            .iter()
            .map(|&n| checked.measures[n].decl.attrs.len())
            .max()
            .unwrap_or(0);
    let pushes = checked
        .attributes
        .iter()
        .map(|a| attribute::Field::of(a, quote!(self)).push(&quote!(__attrs), p));
    let fields = keyed.iter().map(|&n| {
        let m = &checked.measures[n];
        let instrument = checked.instrument_of(m);
        let method = instrument.kind.record_method();
        let handle = handle(checked, m);
        let call = if m.is_scoped(checked) {
            // Rare (past the bound limit) and scoped: a list of its own.
            let attributes = field_attributes(checked, n, p, quote!(&__attrs));
            quote!(#handle.#method(__v, &#attributes))
        } else if m.decl.attrs.is_empty() {
            quote!(#handle.#method(__v, &__attrs))
        } else {
            let statics = static_attrs_ident(n);
            quote! {{
                __attrs.extend_from_slice(&set.#statics);
                #handle.#method(__v, &__attrs);
                __attrs.truncate(__base);
            }}
        };
        checked_record(checked, m, p, call)
    });
    quote! {
        let mut __attrs: #p::Vec<#p::KeyValue> =
            #p::Vec::with_capacity(#capacity #(+ #groups::KEYS.len())*);
        #(#pushes)*
        #(#group_pushes)*
        let __base = __attrs.len();
        #(#fields)*
    }
}

/// `if let Some(raw) = self.field`, checked, then `call` with `__v`, or the
/// drop counted and warned about. A gated instrument that the meter's
/// opt-in left unbuilt records nothing.
fn checked_record(
    checked: &Checked,
    m: &Measured,
    p: &TokenStream,
    call: TokenStream,
) -> TokenStream {
    let instrument = checked.instrument_of(m);
    let field = &m.field.ident;
    let field_name = field.to_string();
    let name = &instrument.name;
    let monotonic = instrument.kind.is_monotonic();
    let handle = instrument_ident(m.instrument);
    let raw = attribute::raw_value(&instrument.unit, m.field_type.duration, p);
    let one = quote! {
        match #p::checked(#raw, #monotonic) {
            #p::Ok(__v) => #call,
            #p::Err(__why) => set.__warnings.dropped_value(#field_name, #name, &__raw, __why),
        }
    };
    let record = if m.field_type.repeated {
        // Several values of one histogram: each checked and recorded, with
        // the attributes looked up once for all of them.
        quote! {
            if let #p::Some(__values) = &self.#field {
                for __raw in __values.iter().copied() {
                    #one
                }
            }
        }
    } else {
        quote! {
            if let #p::Some(__raw) = self.#field {
                #one
            }
        }
    };
    match instrument.gate {
        Some(_) => quote! {
            if let #p::Some(__h) = &set.#handle {
                #record
            }
        },
        None => record,
    }
}

/// `<Group as p::Attributes>` for a flattened field's type, spanned on the
/// type so that a type not deriving `Attributes` is reported there.
pub(super) fn group_path(ty: &syn::Type, p: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> <#ty as #p::Attributes>)
}
