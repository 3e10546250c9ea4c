//! `#[instruments(guard)]`: `T::start(&meter) -> TGuard`, which derefs to
//! `T` while it runs and records once when it ends (`finish()`, `fail(e)`,
//! or drop: a panic unwinding through it, a cancelled future).
//!
//! `in_flight` up-down counters get +1 at the start and -1 at the end,
//! both recorded with the struct's attributes unset (their defaults), so
//! the pair always lands on the same series whatever the guarded code sets
//! in between; `elapsed` histograms get the time from start to end.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

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

    let up = in_flight_record(ident, &in_flight, 1, p);
    let down = in_flight_record(ident, &in_flight, -1, p);
    let fail = error_type.map(|(name, ty)| {
        quote! {
            /// Ends the guarded work as failed: sets the error type, then
            /// records as [`finish`](Self::finish) does.
            #[inline]
            #vis fn fail(mut self, error_type: impl ::core::convert::Into<#ty>) {
                self.__metrics.#name = #p::Some(::core::convert::Into::into(error_type));
                self.__end();
            }
        }
    });
    let doc = format!(
        "Records one run of [`{ident}`] when it ends: returned by [`{ident}::start`], it derefs \
         to the struct so fields can be set while it runs, and records exactly once, at \
         [`finish`](Self::finish), `fail` or drop (a panic, a cancelled future)."
    );
    let start_doc = format!(
        "Starts a [`{guard}`] on `meter`: the time is read now (not on a disabled meter), and \
         `in_flight` counters go up by one until it ends."
    );

    quote! {
        #[doc = #doc]
        #[must_use = "the guard records when it ends: call finish(), or bind it to a variable"]
        #vis struct #guard {
            __metrics: #ident,
            __meter: #p::MeterLease,
            __start: #p::Option<#p::Instant>,
            __ended: bool,
        }

        #[automatically_derived]
        impl #ident {
            #[doc = #start_doc]
            #vis fn start(meter: &#p::Meter) -> #guard {
                let __start = meter.is_enabled().then(#p::Instant::now);
                #up
                #guard {
                    __metrics: Self::__none(),
                    __meter: meter.lease(),
                    __start,
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
                    #(self.__metrics.#elapsed = #p::Some(__elapsed);)*
                }
                // The counts go back on the series they went up on.
                #(self.__metrics.#in_flight = #p::None;)*
                let meter: &#p::Meter = &self.__meter;
                #p::Instruments::record(&self.__metrics, meter);
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

/// Records `delta` on every `in_flight` counter, attributes unset.
fn in_flight_record(
    ident: &syn::Ident,
    fields: &[&syn::Ident],
    delta: i8,
    p: &TokenStream,
) -> TokenStream {
    if fields.is_empty() {
        return TokenStream::new();
    }
    quote! {{
        let mut __count = #ident::__none();
        #(__count.#fields = #p::Some(::core::convert::From::from(#delta));)*
        #p::Instruments::record(&__count, meter);
    }}
}
