//! The static `DESCRIPTORS` of a set.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::attribute;
use crate::checked::{Checked, Measured};
use crate::model::{GateKind, Role};

/// One `Descriptor` literal for a measure (a field and an instrument it feeds).
pub(super) fn descriptor(checked: &Checked, m: &Measured, p: &TokenStream) -> TokenStream {
    let instrument = checked.instrument_of(m);
    let field = m.field.ident.to_string();
    let name = &instrument.name;
    let kind = format_ident!("{}", instrument.kind.type_name());
    let value_type = m.field_type.value.variant();
    let unit = &instrument.unit;
    let description = &instrument.description;
    let buckets = match &instrument.buckets {
        Some(b) => {
            let bounds = b.iter().map(|v| Literal::f64_suffixed(*v));
            quote!(#p::Some(&[#(#bounds),*]))
        }
        None => quote!(#p::None),
    };
    let statics = m.static_attrs().map(|(k, v)| quote!((#k, #v)));
    let (attribute_keys, attributes) = attribute_lists(checked, m, p);
    let aggregation = match instrument.aggregation {
        Some(a) => {
            let variant = a.variant();
            quote!(#p::Some(#p::HistogramAggregation::#variant))
        }
        None => quote!(#p::None),
    };
    let semconv = match &instrument.gate {
        None => quote!(#p::SemconvGate::Always),
        Some((GateKind::OptIn, value)) => quote!(#p::SemconvGate::OptIn(#value)),
        Some((GateKind::UntilOptIn, value)) => quote!(#p::SemconvGate::UntilOptIn(#value)),
    };
    quote! {
        #p::Descriptor {
            field: #field,
            name: #name,
            kind: #p::InstrumentKind::#kind,
            value_type: #p::ValueType::#value_type,
            unit: #unit,
            description: #description,
            buckets: #buckets,
            attribute_keys: #attribute_keys,
            attributes: #attributes,
            static_attributes: &[#(#statics),*],
            semconv: #semconv,
            aggregation: #aggregation,
        }
    }
}

/// Where a measure's attributes come from, in declaration order.
enum Segment {
    /// The struct's `#[attribute]` field `checked.attributes[i]`.
    Own(usize),
    /// The flattened group `checked.flattened[i]`.
    Group(usize),
}

/// `attribute_keys` and `attributes` of a measure's descriptor: its
/// attribute fields and flattened groups in declaration order, then its
/// static pairs. A group's keys are known only to its type, so with groups
/// each list is a constant concatenated at compile time.
fn attribute_lists(checked: &Checked, m: &Measured, p: &TokenStream) -> (TokenStream, TokenStream) {
    let mut segments = Vec::new();
    for field in &checked.container.fields {
        match &field.role {
            Role::Attribute(_) => {
                let a = checked
                    .attributes
                    .iter()
                    .position(|a| a.field.ident == field.ident);
                segments.extend(a.filter(|a| m.attributes.contains(a)).map(Segment::Own));
            }
            Role::Flatten(_) => {
                let g = checked
                    .flattened
                    .iter()
                    .position(|g| g.field.ident == field.ident);
                segments.extend(g.filter(|g| m.flattened.contains(g)).map(Segment::Group));
            }
            Role::Instruments(_) => {}
        }
    }
    let own_descriptor =
        |a: usize| attribute::Field::of(&checked.attributes[a], quote!(self)).descriptor(p);
    let static_keys: Vec<String> = m.static_attrs().map(|(k, _)| k).collect();
    let static_descriptors: Vec<TokenStream> = m
        .static_attrs()
        .map(|(k, v)| {
            quote!(#p::AttributeDescriptor {
                key: #k,
                values: #p::Some(&[#v]),
                default: #p::Some(#v),
            })
        })
        .collect();
    if m.flattened.is_empty() {
        let keys = segments.iter().filter_map(|s| match s {
            Segment::Own(a) => Some(checked.attributes[*a].key()),
            Segment::Group(_) => None,
        });
        let descriptors = segments.iter().filter_map(|s| match s {
            Segment::Own(a) => Some(own_descriptor(*a)),
            Segment::Group(_) => None,
        });
        return (
            quote!(&[#(#keys,)* #(#static_keys),*]),
            quote!(&[#(#descriptors,)* #(#static_descriptors),*]),
        );
    }
    let mut key_parts = Vec::new();
    let mut descriptor_parts = Vec::new();
    let mut len = Vec::new();
    for segment in &segments {
        match segment {
            Segment::Own(a) => {
                let key = checked.attributes[*a].key();
                key_parts.push(quote!(&[#key]));
                descriptor_parts.push({
                    let d = own_descriptor(*a);
                    quote!(&[#d])
                });
                len.push(quote!(1));
            }
            Segment::Group(g) => {
                let group = super::record::group_path(&checked.flattened[*g].field.inner_ty, p);
                key_parts.push(quote!(#group::KEYS));
                descriptor_parts.push(quote!(#group::ATTRIBUTES));
                len.push(quote!(#group::KEYS.len()));
            }
        }
    }
    let statics = static_keys.len();
    (
        quote!(&#p::concat_keys::<{ #(#len +)* #statics }>(&[#(#key_parts,)* &[#(#static_keys),*]])),
        quote!(&#p::concat_attributes::<{ #(#len +)* #statics }>(
            &[#(#descriptor_parts,)* &[#(#static_descriptors),*]]
        )),
    )
}
