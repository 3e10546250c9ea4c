//! The set (`XSet`: instruments, static attributes, bound handles) and the
//! body of `build_set`.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{bound_ident, instrument_ident, static_attrs_ident, Names};
use crate::checked::{Checked, Instrument};
use crate::model::GateKind;

/// `struct XSet`, the hidden `struct __XBound` and their impls.
pub(super) fn set_items(checked: &Checked, names: &Names) -> TokenStream {
    let Names { p, set, bound } = names;
    let container = checked.container;
    let vis = &container.vis;
    let set_doc = format!(
        "The instruments of [`{}`], built once per meter.",
        container.ident
    );
    let set_name = set.to_string();

    let instrument_fields = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let field = instrument_ident(i);
            let ty = instrument.kind.instrument_type(instrument.value, p, false);
            match instrument.gate {
                Some(_) => quote!(#field: #p::Option<#ty>,),
                None => quote!(#field: #ty,),
            }
        });
    let static_fields = checked
        .measures
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.decl.attrs.is_empty())
        .map(|(n, m)| {
            let field = static_attrs_ident(n);
            let len = m.decl.attrs.len();
            quote!(#field: [#p::KeyValue; #len],)
        });
    let bound_fields = checked.measures.iter().enumerate().map(|(n, m)| {
        let field = bound_ident(n);
        let instrument = checked.instrument_of(m);
        let ty = instrument.kind.instrument_type(instrument.value, p, true);
        quote!(#field: #p::OnceLock<#ty>,)
    });
    let bound_inits = (0..checked.measures.len()).map(|n| {
        let field = bound_ident(n);
        quote!(#field: #p::OnceLock::new(),)
    });
    // Measures of instruments no attribute value reaches record through one
    // bundle the set holds; the others through bundles looked up by the
    // values (`Checked::is_keyed`).
    let fixed_holder = if checked.has_fixed_measures() {
        quote!(__bound: #bound,)
    } else {
        TokenStream::new()
    };
    let keyed_holder = if checked.has_keyed_measures() {
        quote!(__keyed: #p::BoundMap<#bound>,)
    } else {
        TokenStream::new()
    };

    quote! {
        #[doc = #set_doc]
        #vis struct #set {
            #(#instrument_fields)*
            #(#static_fields)*
            #fixed_holder
            #keyed_holder
            __warnings: #p::DropWarnings,
        }

        /// Bound handles of one combination of attribute values, each bound
        /// on its field's first measurement.
        #[doc(hidden)]
        struct #bound {
            __attrs: #p::Box<[#p::KeyValue]>,
            #(#bound_fields)*
        }

        impl #set {
            /// How many measurements were dropped (non-finite values, negative
            /// counter increments) since this set was built.
            #vis fn dropped_measurements(&self) -> ::core::primitive::u64 {
                self.__warnings.dropped()
            }
        }

        const _: () = {
            impl #bound {
                fn new(__attrs: #p::Box<[#p::KeyValue]>) -> Self {
                    #bound { __attrs, #(#bound_inits)* }
                }
            }

            impl ::core::fmt::Debug for #set {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(#set_name)
                        .field("dropped", &self.__warnings.dropped())
                        .finish_non_exhaustive()
                }
            }
        };
    }
}

/// The body of `build_set`: every instrument, the static attributes, and the
/// bound handles that can be bound right away.
pub(super) fn build_set(checked: &Checked, names: &Names) -> TokenStream {
    let Names { p, set, bound } = names;
    let instruments = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let field = instrument_ident(i);
            let builder = build_instrument(instrument, p);
            quote!(let #field = #builder;)
        });
    let instrument_names = (0..checked.instruments.len()).map(instrument_ident);
    let statics = checked
        .measures
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.decl.attrs.is_empty())
        .map(|(n, m)| {
            let field = static_attrs_ident(n);
            let pairs = m
                .static_attrs()
                .map(|(k, v)| quote!(#p::KeyValue::new(#k, #v)));
            quote!(#field: [#(#pairs),*],)
        });
    let fixed_value = checked.has_fixed_measures().then(|| {
        // A field without any attribute binds the SDK's attribute-less series,
        // which exports nothing until recorded, so it can be bound now. Keyed
        // series are bound on first record: the SDK exports a bound series
        // even when it was never recorded.
        let eager = checked
            .measures
            .iter()
            .enumerate()
            .filter(|(_, m)| !checked.is_keyed(m) && m.decl.attrs.is_empty())
            .map(|(n, m)| {
                let field = bound_ident(n);
                let handle = instrument_ident(m.instrument);
                match checked.instrument_of(m).gate {
                    Some(_) => quote! {
                        if let #p::Some(__h) = &#handle {
                            let _ = __bound.#field.set(__h.bind(&[]));
                        }
                    },
                    None => quote!(let _ = __bound.#field.set(#handle.bind(&[]));),
                }
            });
        quote! {
            __bound: {
                let __bound = #bound::new(#p::Box::new([]));
                #(#eager)*
                __bound
            },
        }
    });
    let keyed_value = if checked.has_keyed_measures() {
        quote!(__keyed: #p::BoundMap::for_meter(meter),)
    } else {
        TokenStream::new()
    };
    quote! {
        #(#instruments)*
        #set {
            #(#statics)*
            #fixed_value
            #keyed_value
            #(#instrument_names,)*
            __warnings: #p::DropWarnings::new(),
        }
    }
}

/// The instrument built on `meter`, or, when gated, built only if the
/// meter's opt-in opens the gate.
fn build_instrument(instrument: &Instrument, p: &TokenStream) -> TokenStream {
    let build = build_ungated(instrument, p);
    // A pinned aggregation goes to the provider's view before the
    // instrument exists, since the view runs when it is built.
    let build = match instrument.aggregation {
        Some(aggregation) => {
            let name = &instrument.name;
            let variant = aggregation.variant();
            quote! {{
                #p::pin_histogram_aggregation(#name, #p::HistogramAggregation::#variant);
                #build
            }}
        }
        None => build,
    };
    let Some((kind, value)) = &instrument.gate else {
        return build;
    };
    let gate = match kind {
        GateKind::OptIn => quote!(#p::SemconvGate::OptIn(#value)),
        GateKind::UntilOptIn => quote!(#p::SemconvGate::UntilOptIn(#value)),
    };
    quote! {
        if #gate.is_open(meter.semconv_opt_in()) {
            #p::Some(#build)
        } else {
            #p::None
        }
    }
}

fn build_ungated(instrument: &Instrument, p: &TokenStream) -> TokenStream {
    let method = instrument.kind.builder_method(instrument.value);
    let name = &instrument.name;
    let description = &instrument.description;
    let unit = (!instrument.unit.is_empty()).then(|| {
        let unit = &instrument.unit;
        quote!(.with_unit(#unit))
    });
    let buckets = instrument.buckets.as_ref().map(|b| {
        let bounds = b.iter().map(|v| Literal::f64_suffixed(*v));
        quote!(.with_boundaries(#p::Vec::from([#(#bounds),*])))
    });
    // nemo-lens's meter keeps the series in its own cells when it can.
    quote! {
        meter.#method(#name).with_description(#description)#unit #buckets.build()
    }
}
