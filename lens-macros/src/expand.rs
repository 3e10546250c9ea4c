//! Code generation from a [`Checked`] declaration.
//!
//! Generated code names everything through `#krate::__private`, so it compiles
//! in a crate that depends only on `nemo-lens` and that shadows `Option`,
//! `Some`, `Result`, `std` or `core`.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Path};

use crate::ctxt::Ctxt;
use crate::model::{Kind, Repr};
use crate::validate::{self, Checked, Instrument, Measured};
use crate::{model, parse};

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

fn expand(checked: &Checked) -> TokenStream {
    let container = checked.container;
    let krate = &container.krate;
    let p = quote!(#krate::__private);
    let ident = &container.ident;
    let vis = &container.vis;
    let set = format_ident!("{}Set", ident);
    let set_doc = format!("The instruments of [`{ident}`], built once per meter.");

    let set_fields = set_fields(checked, &p);
    let build = build_fields(checked, &p);
    let descriptors = checked.measures.iter().map(|m| descriptor(checked, m, &p));
    let record = record_body(checked, &p);
    let setters = if container.setters {
        setters(checked, &p)
    } else {
        TokenStream::new()
    };
    let set_name = set.to_string();

    quote! {
        #[doc = #set_doc]
        #vis struct #set {
            #set_fields
            __warnings: #p::DropWarnings,
        }

        impl #set {
            /// How many measurements were dropped (non-finite values, negative
            /// counter increments) since this set was built.
            #vis fn dropped_measurements(&self) -> ::core::primitive::u64 {
                self.__warnings.dropped()
            }
        }

        const _: () = {
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
                    #set {
                        #build
                        __warnings: #p::DropWarnings::new(),
                    }
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

fn set_fields(checked: &Checked, p: &TokenStream) -> TokenStream {
    let instruments = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let field = instrument_ident(i);
            let repr = repr_type(instrument.repr);
            let ty = match instrument.kind {
                Kind::Counter => quote!(#p::Counter<#repr>),
                Kind::UpDownCounter => quote!(#p::UpDownCounter<#repr>),
                Kind::Gauge => quote!(#p::Gauge<#repr>),
                Kind::Histogram => quote!(#p::Histogram<#repr>),
            };
            quote!(#field: #ty,)
        });
    let statics = checked
        .measures
        .iter()
        .filter(|m| !m.measure.attrs.is_empty())
        .map(|m| {
            let field = static_attrs_ident(&m.field.ident);
            let len = m.measure.attrs.len();
            quote!(#field: [#p::KeyValue; #len],)
        });
    quote!(#(#instruments)* #(#statics)*)
}

fn build_fields(checked: &Checked, p: &TokenStream) -> TokenStream {
    let instruments = checked
        .instruments
        .iter()
        .enumerate()
        .map(|(i, instrument)| {
            let field = instrument_ident(i);
            let builder = build_instrument(instrument, p);
            quote!(#field: #builder,)
        });
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
    quote!(#(#instruments)* #(#statics)*)
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

fn descriptor(checked: &Checked, m: &Measured, p: &TokenStream) -> TokenStream {
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

fn record_body(checked: &Checked, p: &TokenStream) -> TokenStream {
    if checked.measures.is_empty() {
        return quote!(let _ = set;);
    }
    let has_dynamic = !checked.attributes.is_empty();
    let measures = checked
        .measures
        .iter()
        .map(|m| record_field(checked, m, p, has_dynamic));
    if !has_dynamic {
        return quote!(#(#measures)*);
    }
    let any_value = checked.measures.iter().map(|m| {
        let field = &m.field.ident;
        quote!(self.#field.is_some())
    });
    let capacity = checked.attributes.len()
        + checked
            .measures
            .iter()
            .map(|m| m.measure.attrs.len())
            .max()
            .unwrap_or(0);
    let pushes = checked.attributes.iter().map(|(field, attribute)| {
        let ident = &field.ident;
        let key = attribute.key.value();
        let to_value = quote_spanned!(field.inner_ty.span()=> #p::AttributeValue::to_value);
        let fallback = attribute
            .default
            .as_ref()
            .map(|default| quote!(else { __attrs.push(#p::KeyValue::new(#key, #default)); }));
        quote! {
            if let #p::Some(__value) = self.#ident.as_ref().and_then(#to_value) {
                __attrs.push(#p::KeyValue::new(#key, __value));
            } #fallback
        }
    });
    quote! {
        if !(#(#any_value)||*) {
            return;
        }
        let mut __attrs: #p::Vec<#p::KeyValue> = #p::Vec::with_capacity(#capacity);
        #(#pushes)*
        let __base = __attrs.len();
        #(#measures)*
    }
}

fn record_field(
    checked: &Checked,
    m: &Measured,
    p: &TokenStream,
    has_dynamic: bool,
) -> TokenStream {
    let instrument = &checked.instruments[m.instrument];
    let field = &m.field.ident;
    let field_name = field.to_string();
    let name = &instrument.name;
    let handle = instrument_ident(m.instrument);
    let monotonic = instrument.kind == Kind::Counter;
    let method = match instrument.kind {
        Kind::Counter | Kind::UpDownCounter => quote!(add),
        Kind::Gauge | Kind::Histogram => quote!(record),
    };
    let has_static = !m.measure.attrs.is_empty();
    let statics = static_attrs_ident(field);
    let call = match (has_dynamic, has_static) {
        (false, false) => quote!(set.#handle.#method(__v, &[])),
        (false, true) => quote!(set.#handle.#method(__v, &set.#statics)),
        (true, false) => quote!(set.#handle.#method(__v, &__attrs)),
        (true, true) => quote! {{
            __attrs.extend_from_slice(&set.#statics);
            set.#handle.#method(__v, &__attrs);
            __attrs.truncate(__base);
        }},
    };
    quote! {
        if let #p::Some(__raw) = self.#field {
            match #p::checked(__raw, #monotonic) {
                #p::Ok(__v) => #call,
                #p::Err(__why) => set.__warnings.dropped_value(#field_name, #name, &__raw, __why),
            }
        }
    }
}

fn setters(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    let ident = &container.ident;
    let setters = container.fields.iter().map(|field| {
        let name = &field.ident;
        let vis = &field.vis;
        let ty = &field.inner_ty;
        let what = field.doc.clone().unwrap_or_default();
        let doc = format!("Sets [`{name}`](Self::{name}). {what}");
        let (param, value) = match field.role {
            model::Role::Measure(_) => (quote!(value: #ty), quote!(value)),
            model::Role::Attribute(_) => (
                quote!(value: impl ::core::convert::Into<#ty>),
                quote!(::core::convert::Into::into(value)),
            ),
        };
        quote! {
            #[doc = #doc]
            #[must_use]
            #[inline]
            #vis fn #name(mut self, #param) -> Self {
                self.#name = #p::Some(#value);
                self
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #ident {
            #(#setters)*
        }
    }
}
