//! `#[instruments(observe)]`: `T::observe(&meter, source)` registers the
//! set's instruments as observable ones fed by `source`, called once per
//! collection; each `Some` field of each value it returns is reported with
//! that value's attributes, so a series it stops returning ends.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::attribute;
use super::record::group_path;
use crate::checked::{Checked, Instrument};
use crate::kind::InstrumentKind;

/// The associated function, or nothing without `#[instruments(observe)]`.
pub(super) fn observe(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    if container.observe.is_none() {
        return TokenStream::new();
    }
    let ident = &container.ident;
    let vis = &container.vis;
    let instruments = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let reports = checked
                .measures
                .iter()
                .enumerate()
                .filter(|(_, m)| m.instrument == i)
                .map(|(n, m)| {
                    let field = &m.field.ident;
                    let monotonic = instrument.kind.is_monotonic();
                    let raw = attribute::raw_value(&instrument.unit, m.field_type.duration, p);
                    let attributes = attributes(checked, n, p);
                    quote! {
                        if let #p::Some(__raw) = __item.#field {
                            if let #p::Ok(__v) = #p::checked(#raw, #monotonic) {
                                #attributes
                                __observer.observe(__v, &__attrs);
                            }
                        }
                    }
                });
            let build = observable(
                instrument,
                quote! {
                    move |__observer| {
                        // None while no Observation lives.
                        let #p::Some(__observed) = __slot.current() else {
                            return;
                        };
                        if __refresh {
                            __observed.refresh();
                        }
                        __observed.with(|__items| {
                            for __item in __items {
                                #(#reports)*
                            }
                        });
                    }
                },
            );
            let gate = instrument.gate.as_ref().map(|(kind, value)| {
                let gate = match kind {
                    crate::model::GateKind::OptIn => quote!(#p::SemconvGate::OptIn(#value)),
                    crate::model::GateKind::UntilOptIn => {
                        quote!(#p::SemconvGate::UntilOptIn(#value))
                    }
                };
                quote!(if #gate.is_open(meter.semconv_opt_in()))
            });
            quote! {
                #gate {
                    // The SDK runs callbacks in the order the instruments
                    // were built: the first built calls the source.
                    let __refresh = ::core::mem::replace(&mut __first, false);
                    let __slot = #p::Arc::clone(__slot);
                    let _ = #build;
                }
            }
        });
    let doc = format!(
        "Reports the values `source` returns as [`{ident}`]'s instruments, observed: the SDK \
         calls `source` once per collection, and each `Some` field of each value is reported \
         with that value's attributes (a gauge its last value, a counter its running total). A \
         series `source` stops returning ends.\n\nThe source reports while the returned \
         `Observation` lives (dropping it ends the source; `keep()` keeps it for the meter's \
         life). One source per set and meter: while one reports, a second call is an \
         `ObserveError`. On a meter that records nothing the source is never called."
    );
    quote! {
        #[automatically_derived]
        impl #ident {
            #[doc = #doc]
            #vis fn observe<__S, __I>(
                meter: &#p::Meter,
                source: __S,
            ) -> ::core::result::Result<#p::Observation, #p::ObserveError>
            where
                __S: ::core::ops::Fn() -> __I + ::core::marker::Send + ::core::marker::Sync + 'static,
                __I: ::core::iter::IntoIterator<Item = Self>,
                Self: ::core::marker::Send + 'static,
            {
                if !meter.is_enabled() {
                    return ::core::result::Result::Ok(#p::Observation::inactive());
                }
                let __slot = meter.observed_slot::<Self>(|__slot| {
                    let mut __first = true;
                    #(#instruments)*
                    let _ = __first;
                });
                __slot.install(#p::Observed::new(move || {
                    ::core::iter::Iterator::collect::<#p::Vec<Self>>(
                        ::core::iter::IntoIterator::into_iter(source()),
                    )
                }))
            }
        }
    }
}

/// `meter.otel().u64_observable_gauge(name)..with_callback(callback).build()`.
fn observable(instrument: &Instrument, callback: TokenStream) -> TokenStream {
    let kind = match instrument.kind {
        InstrumentKind::Gauge => "gauge",
        InstrumentKind::Counter => "counter",
        // validate refuses histograms in an observed set.
        InstrumentKind::UpDownCounter | InstrumentKind::Histogram => "up_down_counter",
    };
    let method = format_ident!("{}_observable_{}", instrument.value.primitive(), kind);
    let name = &instrument.name;
    let description = &instrument.description;
    let unit = (!instrument.unit.is_empty()).then(|| {
        let unit = &instrument.unit;
        quote!(.with_unit(#unit))
    });
    quote! {
        {
            let __built = meter.otel().#method(#name).with_description(#description)#unit
                .with_callback(#callback)
                .build();
            // The SDK holds observables: readers that list the meter's
            // instruments learn their names here.
            if let ::core::option::Option::Some(__registry) = meter.registry() {
                __registry.declare_observable(#name);
            }
            __built
        }
    }
}

/// `let __attrs = ..;`: measure `n`'s attributes for `__item`: its
/// attribute fields (or defaults), its flattened groups, scoped by
/// `only(..)`, then its static pairs.
fn attributes(checked: &Checked, n: usize, p: &TokenStream) -> TokenStream {
    let m = &checked.measures[n];
    let pushes = m.attributes.iter().map(|&a| {
        attribute::Field::of(&checked.attributes[a], quote!(__item)).push(&quote!(__attrs), p)
    });
    let groups = m.flattened.iter().map(|&g| {
        let flattened = &checked.flattened[g];
        let ident = &flattened.field.ident;
        let group = group_path(&flattened.field.inner_ty, p);
        quote!(#group::push_key_values(&__item.#ident, &mut __attrs);)
    });
    let statics = m
        .static_attrs()
        .map(|(k, v)| quote!(__attrs.push(#p::KeyValue::new(#k, #v));));
    quote! {
        let mut __attrs: #p::Vec<#p::KeyValue> = #p::Vec::new();
        #(#pushes)*
        #(#groups)*
        #(#statics)*
    }
}
