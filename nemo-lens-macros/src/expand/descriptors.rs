//! The static `DESCRIPTORS` of a set.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::checked::{Checked, Measured};
use crate::model::GateKind;

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
    let keys = checked.attribute_keys(m);
    let statics = m.static_attrs().map(|(k, v)| quote!((#k, #v)));
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
            attribute_keys: &[#(#keys),*],
            static_attributes: &[#(#statics),*],
            semconv: #semconv,
            aggregation: #aggregation,
        }
    }
}
