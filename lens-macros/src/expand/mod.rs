//! Code generation from a [`Checked`] declaration.
//!
//! Generated code names everything through `#krate::__private`, and
//! primitives as `::core::primitive::..`, so it compiles in a crate that
//! depends only on `nemo-lens` and that shadows `Option`, `Some`, `Result`,
//! `std`, `core` or `f64`.
//!
//! For `struct X` the derive emits `XSet` (the instruments, their static
//! attributes and the bound handles) and a hidden `__XBound`, one bound handle
//! per field for one combination of `#[attribute]` values.

mod descriptors;
mod record;
mod setters;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::{DeriveInput, Ident, Path};

use crate::ctxt::Ctxt;
use crate::model::{Kind, Repr};
use crate::parse;
use crate::validate::{self, Checked, Instrument};

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
            tokens.extend(dummy(input, krate));
            tokens
        }
    }
}

/// An impl with no instruments, so that one mistake gives one message rather
/// than one more at every `record` call.
fn dummy(input: &DeriveInput, krate: Option<Path>) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let krate = krate.unwrap_or_else(|| syn::parse_quote!(::nemo_lens));
    let ident = &input.ident;
    quote! {
        const _: () = {
            impl #krate::__private::Instruments for #ident {
                type Set = ();
                const DESCRIPTORS: &'static [#krate::__private::Descriptor] = &[];
                fn build_set(_: &#krate::__private::otel::metrics::Meter) {}
                fn slot() -> &'static #krate::__private::SetSlot {
                    static SLOT: #krate::__private::SetSlot = #krate::__private::SetSlot::new();
                    &SLOT
                }
                fn record_with(&self, _: &()) {}
            }
        };
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
    let Names { p, set, bound } = &names;
    let ident = &container.ident;
    let vis = &container.vis;
    let set_doc = format!("The instruments of [`{ident}`], built once per meter.");
    let set_name = set.to_string();

    let instrument_fields = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let field = instrument_ident(i);
            let ty = instrument_type(instrument, p, false);
            quote!(#field: #ty,)
        });
    let static_fields = checked
        .measures
        .iter()
        .filter(|m| !m.measure.attrs.is_empty())
        .map(|m| {
            let field = static_attrs_ident(&m.field.ident);
            let len = m.measure.attrs.len();
            quote!(#field: [#p::KeyValue; #len],)
        });
    let bound_fields = checked.measures.iter().map(|m| {
        let field = &m.field.ident;
        let ty = instrument_type(&checked.instruments[m.instrument], p, true);
        quote!(#field: #p::OnceLock<#ty>,)
    });
    let bound_inits = checked.measures.iter().map(|m| {
        let field = &m.field.ident;
        quote!(#field: #p::OnceLock::new(),)
    });
    let bound_holder = if checked.attributes.is_empty() {
        quote!(#bound)
    } else {
        quote!(#p::BoundMap<#bound>)
    };

    let build = build_set(checked, &names);
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

    quote! {
        #[doc = #set_doc]
        #vis struct #set {
            #(#instrument_fields)*
            #(#static_fields)*
            __bound: #bound_holder,
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

            #[automatically_derived]
            impl #p::Instruments for #ident {
                type Set = #set;

                const DESCRIPTORS: &'static [#p::Descriptor] = &[#(#descriptors),*];

                fn build_set(meter: &#p::otel::metrics::Meter) -> #set {
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
        };
    }
}

fn instrument_ident(index: usize) -> Ident {
    format_ident!("__i{}", index)
}

fn static_attrs_ident(field: &Ident) -> Ident {
    format_ident!("__attrs_{}", field)
}

fn repr_type(repr: Repr) -> TokenStream {
    match repr {
        Repr::F64 => quote!(::core::primitive::f64),
        Repr::U64 => quote!(::core::primitive::u64),
        Repr::I64 => quote!(::core::primitive::i64),
    }
}

/// `Gauge<f64>`, or `BoundGauge<f64>` when `bound`.
fn instrument_type(instrument: &Instrument, p: &TokenStream, bound: bool) -> TokenStream {
    let kind = match instrument.kind {
        Kind::Counter => "Counter",
        Kind::UpDownCounter => "UpDownCounter",
        Kind::Gauge => "Gauge",
        Kind::Histogram => "Histogram",
    };
    let name = if bound {
        format_ident!("Bound{}", kind)
    } else {
        format_ident!("{}", kind)
    };
    let repr = repr_type(instrument.repr);
    quote!(#p::#name<#repr>)
}

/// The body of `build_set`: every instrument, the static attributes, and the
/// bound handles that can be bound right away.
fn build_set(checked: &Checked, names: &Names) -> TokenStream {
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
        .filter(|m| !m.measure.attrs.is_empty())
        .map(|m| {
            let field = static_attrs_ident(&m.field.ident);
            let pairs = m
                .static_attrs()
                .map(|(k, v)| quote!(#p::KeyValue::new(#k, #v)));
            quote!(#field: [#(#pairs),*],)
        });
    let bound_value = if checked.attributes.is_empty() {
        // A field without any attribute binds the SDK's attribute-less series,
        // which exports nothing until recorded, so it can be bound now. Keyed
        // series are bound on first record: the SDK exports a bound series
        // even when it was never recorded.
        let eager = checked
            .measures
            .iter()
            .filter(|m| m.measure.attrs.is_empty())
            .map(|m| {
                let field = &m.field.ident;
                let handle = instrument_ident(m.instrument);
                quote!(let _ = __bound.#field.set(#handle.bind(&[]));)
            });
        quote! {{
            let __bound = #bound::new(#p::Box::new([]));
            #(#eager)*
            __bound
        }}
    } else {
        quote!(#p::BoundMap::new())
    };
    quote! {
        #(#instruments)*
        #set {
            #(#statics)*
            __bound: #bound_value,
            #(#instrument_names,)*
            __warnings: #p::DropWarnings::new(),
        }
    }
}

fn build_instrument(instrument: &Instrument, p: &TokenStream) -> TokenStream {
    let prefix = match instrument.repr {
        Repr::F64 => "f64",
        Repr::U64 => "u64",
        Repr::I64 => "i64",
    };
    let method = format_ident!("{}_{}", prefix, instrument.kind.attr_name());
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
    quote! {
        meter.#method(#name).with_description(#description)#unit #buckets.build()
    }
}
