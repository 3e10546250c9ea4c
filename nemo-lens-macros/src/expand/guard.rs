//! `#[instruments(guard)]`: `T::start(&meter) -> TGuard` (or `start` on a
//! prepared set, through `Guarded`), which derefs to `T` while it runs and
//! records once when it ends (`finish()`, `fail(e)`, or drop: a panic
//! unwinding through it, a cancelled future).
//!
//! `in_flight` up-down counters get +1 at the start and -1 at the end, both
//! with the attributes they carry as they were at the start (kept aside for
//! the guard's life), so the pair always lands on one series whatever the
//! guarded code sets in between; `elapsed` histograms get the time from
//! start to end.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::checked::Checked;
use crate::model::Role;

/// The guard type and `start`, or nothing without `#[instruments(guard)]`.
pub(super) fn guard(checked: &Checked, p: &TokenStream) -> TokenStream {
    let container = checked.container;
    if container.guard.is_none() {
        return TokenStream::new();
    }
    let ident = &container.ident;
    let vis = &container.vis;
    let guard = format_ident!("{}Guard", ident);

    let mut elapsed = Vec::new();
    let mut in_flight = Vec::new();
    let mut on_drop = Vec::new();
    let mut error_type = None;
    for field in &container.fields {
        let name = &field.ident;
        match &field.role {
            Role::Instruments(decls) => {
                if decls.iter().any(|d| d.elapsed.is_some()) {
                    elapsed.push(name);
                }
                if decls.iter().any(|d| d.in_flight.is_some()) {
                    in_flight.push(name);
                }
            }
            Role::Attribute(decl) => {
                if let Some(value) = &decl.on_drop {
                    on_drop.push(quote! {
                        if self.__metrics.#name.is_none() {
                            self.__metrics.#name = #p::Some(::core::convert::From::from(#value));
                        }
                    });
                }
                if decl.error_type.is_some() {
                    error_type = Some((name, &field.inner_ty));
                }
            }
            Role::Flatten(_) => {}
        }
    }

    let (count, count_field, count_init, down) = if in_flight.is_empty() {
        Default::default()
    } else {
        (
            in_flight_count(checked, &in_flight, p),
            quote! {
                /// The `in_flight` counts with the attributes they went up with.
                __in_flight: #ident,
            },
            quote!(__in_flight,),
            quote! {
                // The counts go back on the series they went up on (none
                // went up on a disabled meter, which has no start time).
                if self.__start.is_some() {
                    #(self.__in_flight.#in_flight = #p::Some(::core::convert::From::from(-1i8));)*
                    #p::Instruments::record(&self.__in_flight, meter);
                }
            },
        )
    };
    let setters = if container.setters {
        super::setters::guard_setters(checked, p)
    } else {
        TokenStream::new()
    };
    let fail = match error_type {
        Some((name, ty)) => quote! {
            /// Ends the guarded work as failed: sets the error type, then
            /// records as [`finish`](Self::finish) does.
            #[inline]
            #vis fn fail(mut self, error_type: impl ::core::convert::Into<#ty>) {
                self.__metrics.#name = #p::Some(::core::convert::Into::into(error_type));
                self.__end();
            }
        },
        // So that `fail` names what is missing instead of "no method".
        None => quote! {
            #[doc(hidden)]
            #vis fn fail<E>(self, error_type: E)
            where
                #ident: #p::ErrorTypeAttribute<E>,
            {
                let _ = error_type;
                self.finish();
            }
        },
    };
    let (doc, start_doc) = docs(checked, error_type.is_some());

    quote! {
        #[doc = #doc]
        #[must_use = "the guard records when it ends: call finish(), or bind it to a variable"]
        #vis struct #guard {
            __metrics: #ident,
            #count_field
            __meter: #p::MeterLease,
            __start: #p::Option<#p::Instant>,
            __span: #p::ExemplarSpan,
            __ended: bool,
        }

        #[automatically_derived]
        impl #ident {
            #[doc = #start_doc]
            #vis fn start(meter: &#p::Meter) -> #guard {
                #p::Guarded::start(Self::__none(), meter)
            }
        }

        #[automatically_derived]
        impl #p::Guarded for #ident {
            type Guard = #guard;

            fn start(self, meter: &#p::Meter) -> #guard {
                let __start = meter.is_enabled().then(#p::Instant::now);
                // The span current now links what the guard records at its
                // end, wherever that runs.
                let __span = match __start {
                    #p::Some(_) => #p::ExemplarSpan::now(),
                    #p::None => #p::ExemplarSpan::none(),
                };
                let __metrics = self;
                #count
                #guard {
                    __metrics,
                    #count_init
                    __meter: meter.lease(),
                    __start,
                    __span,
                    __ended: false,
                }
            }
        }

        #[automatically_derived]
        impl #guard {
            /// Ends the guarded work: records every field that is set, the
            /// `elapsed` times, and takes the `in_flight` counts back.
            #[inline]
            #vis fn finish(mut self) {
                self.__end();
            }

            #fail

            /// Ends the guarded work without recording it: nothing of the
            /// set is recorded (the work's outcome is not to be measured,
            /// as NeMo-Gym records no startup time for a sandbox create
            /// that failed), though `in_flight` counts still come back down.
            #[inline]
            #vis fn discard(mut self) {
                self.__ended = true;
                let meter: &#p::Meter = &self.__meter;
                let _ = meter;
                #down
            }

            #setters

            /// Time since the start; zero on a disabled meter, which reads
            /// no clock.
            #vis fn elapsed(&self) -> ::core::time::Duration {
                self.__start.map(|s| s.elapsed()).unwrap_or_default()
            }

            fn __end(&mut self) {
                if ::core::mem::replace(&mut self.__ended, true) {
                    return;
                }
                if let #p::Some(__start) = self.__start {
                    let __elapsed = __start.elapsed();
                    // A duration set by hand (measured elsewhere) is kept.
                    #(
                        if self.__metrics.#elapsed.is_none() {
                            self.__metrics.#elapsed = #p::Some(__elapsed);
                        }
                    )*
                }
                // The guard owns the counts: a value set on the way is not one.
                #(self.__metrics.#in_flight = #p::None;)*
                let meter: &#p::Meter = &self.__meter;
                let __metrics = &self.__metrics;
                self.__span.scope(|| #p::Instruments::record(__metrics, meter));
                #down
            }
        }

        #[automatically_derived]
        impl ::core::ops::Deref for #guard {
            type Target = #ident;
            #[inline]
            fn deref(&self) -> &#ident {
                &self.__metrics
            }
        }

        #[automatically_derived]
        impl ::core::ops::DerefMut for #guard {
            #[inline]
            fn deref_mut(&mut self) -> &mut #ident {
                &mut self.__metrics
            }
        }

        #[automatically_derived]
        impl ::core::ops::Drop for #guard {
            fn drop(&mut self) {
                if !self.__ended {
                    #(#on_drop)*
                    self.__end();
                }
            }
        }
    }
}

/// The guard's doc and `start`'s, saying what this guard does: which
/// instruments it times and counts, whether it can `fail`, what a drop
/// records, which attributes it needs.
fn docs(checked: &Checked, can_fail: bool) -> (String, String) {
    let ident = &checked.container.ident;
    let guard = format_ident!("{}Guard", ident);
    let names = |flag: fn(&crate::model::InstrumentDecl) -> bool| -> Vec<String> {
        let mut names: Vec<String> = checked
            .measures
            .iter()
            .filter(|m| flag(m.decl))
            .map(|m| format!("`{}`", checked.instrument_of(m).name))
            .collect();
        names.dedup();
        names
    };
    let elapsed = names(|d| d.elapsed.is_some());
    let in_flight = names(|d| d.in_flight.is_some());
    let ends = if can_fail {
        "[`finish`](Self::finish), [`fail`](Self::fail) or drop"
    } else {
        "[`finish`](Self::finish) or drop"
    };
    let mut doc = format!(
        "Records one run of [`{ident}`] when it ends: returned by [`{ident}::start`] (or by \
         `start` on a prepared set, through `Guarded`), it derefs to the struct so fields can \
         be set while it runs, and records exactly once, at {ends} (a panic, a cancelled \
         future)."
    );
    let mut what = Vec::new();
    if !elapsed.is_empty() {
        what.push(format!(
            "the time from its start to its end into {} (a duration set on the guard is kept \
             instead)",
            elapsed.join(", ")
        ));
    }
    if !in_flight.is_empty() {
        what.push(format!(
            "{} up by one from its start to its end, on the series of the attributes set \
             before it started",
            in_flight.join(", ")
        ));
    }
    doc.push_str(&format!(
        "\n\nIt records {}, and at its end every other field that is set.",
        what.join("; and ")
    ));
    if !can_fail {
        doc.push_str(" It has no `fail`: the set has no attribute marked `error_type`.");
    }
    for a in &checked.attributes {
        if let Some(value) = &a.decl.on_drop {
            let value = quote::ToTokens::to_token_stream(value)
                .to_string()
                .replace(' ', "");
            doc.push_str(&format!(
                "\n\nDropped before it ends, it records `{}` = `{value}` unless that attribute \
                 was set: a value set explicitly wins over both the drop value and the default.",
                a.decl.key.value()
            ));
        }
    }
    let required: Vec<String> = checked
        .attributes
        .iter()
        .filter(|a| a.decl.required.is_some())
        .map(|a| format!("`{}` (`.{}(..)`)", a.decl.key.value(), a.field.ident))
        .collect();
    if !required.is_empty() {
        doc.push_str(&format!(
            "\n\nIt needs {}: set before `start`, on the prepared set. Recorded without it, \
             the series go out without that label, and a warning names it once.",
            required.join(", ")
        ));
    }
    let counted = if in_flight.is_empty() {
        String::new()
    } else {
        format!(
            ", and {} go up by one until it ends. To set the attributes they carry, prepare the \
             set and start that: `{ident}::default().field(..).start(&meter)` (the trait \
             `Guarded`, in `nemo_lens::prelude`)",
            in_flight.join(", ")
        )
    };
    let prepared = if required.is_empty() || !in_flight.is_empty() {
        String::new()
    } else {
        format!(
            ". It starts with no attribute set: to set {}, prepare the set and start that, \
             `{ident}::default().field(..).start(&meter)` (the trait `Guarded`, in \
             `nemo_lens::prelude`)",
            required.join(", ")
        )
    };
    let start_doc = format!(
        "Starts a [`{guard}`] on `meter` with every field unset: the time is read now (not on a \
         disabled meter){counted}{prepared}."
    );
    (doc, start_doc)
}

/// Takes the `in_flight` counts out of the set into a set of their own
/// (`__in_flight`), with clones of the attributes they carry, and records +1.
fn in_flight_count(checked: &Checked, fields: &[&syn::Ident], p: &TokenStream) -> TokenStream {
    debug_assert!(!fields.is_empty());
    let mut attributes = Vec::new();
    let mut groups = Vec::new();
    for m in checked
        .measures
        .iter()
        .filter(|m| m.decl.in_flight.is_some())
    {
        attributes.extend(m.attributes.iter().copied());
        groups.extend(m.flattened.iter().copied());
    }
    attributes.sort_unstable();
    attributes.dedup();
    groups.sort_unstable();
    groups.dedup();
    // Spanned on the field, so a type that cannot be cloned is named there.
    let copies = attributes
        .iter()
        .map(|&a| checked.attributes[a].field)
        .chain(groups.iter().map(|&g| checked.flattened[g].field))
        .map(|field| {
            let name = &field.ident;
            quote_spanned! {field.inner_ty.span()=>
                __in_flight.#name = ::core::clone::Clone::clone(&__metrics.#name);
            }
        });
    let ident = &checked.container.ident;
    quote! {
        let mut __metrics = __metrics;
        #(__metrics.#fields = #p::None;)*
        let mut __in_flight = #ident::__none();
        // A disabled meter records nothing: no clone, no count.
        if __start.is_some() {
            #(#copies)*
            #(__in_flight.#fields = #p::Some(::core::convert::From::from(1i8));)*
            #p::Instruments::record(&__in_flight, meter);
        }
    }
}
