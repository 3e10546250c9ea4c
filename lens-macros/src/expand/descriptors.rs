//! The static `DESCRIPTORS` of a set.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::model::{Kind, Repr};
use crate::validate::{Checked, Measured};

/// One `Descriptor` literal for a measured field.
pub(super) fn descriptor(checked: &Checked, m: &Measured, p: &TokenStream) -> TokenStream {
    let instrument = &checked.instruments[m.instrument];
    let field = m.field.ident.to_string();
    let name = &instrument.name;
    let kind = match instrument.kind {
        Kind::Counter => quote!(Counter),
        Kind::UpDownCounter => quote!(UpDownCounter),
        Kind::Gauge => quote!(Gauge),
        Kind::Histogram => quote!(Histogram),
    };
    let value_type = match m.value.repr {
        Repr::F64 => quote!(F64),
        Repr::U64 => quote!(U64),
        Repr::I64 => quote!(I64),
    };
    let unit = &instrument.unit;
    let description = &instrument.description;
    let buckets = match &instrument.buckets {
        Some(b) => {
            let bounds = b.iter().map(|v| Literal::f64_suffixed(*v));
            quote!(#p::Some(&[#(#bounds),*]))
        }
        None => quote!(#p::None),
    };
    let keys = checked
        .attributes
        .iter()
        .map(|(_, a)| a.key.value())
        .chain(m.static_attrs().map(|(k, _)| k));
    let statics = m.static_attrs().map(|(k, v)| quote!((#k, #v)));
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
        }
    }
}
