//! Meters of the global OpenTelemetry provider, one cache per name.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use opentelemetry::metrics::MeterProvider;
use opentelemetry::InstrumentationScope;

use crate::{Meter, SemconvOptIn, SEMCONV_STABILITY_OPT_IN};

type Provider = dyn MeterProvider + Send + Sync;

#[derive(Default)]
struct Registry {
    provider: Option<Weak<Provider>>,
    meters: HashMap<Cow<'static, str>, Meter>,
    /// The opt-in of the setup that installed the global provider.
    semconv: Option<SemconvOptIn>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Notes the opt-in of a setup that installs the global provider: meters
/// from [`get_meter`] follow it.
pub(crate) fn set_semconv_opt_in(opt_in: SemconvOptIn) {
    let mut guard = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = guard.get_or_insert_with(Registry::default);
    registry.semconv = Some(opt_in);
    // Meters built under the previous provider are dropped on the next
    // look-up, which sees the new provider.
}

/// The meter named `name` of the global OpenTelemetry provider.
///
/// It follows the semantic-convention opt-in of the `setup_telemetry` that
/// installed the provider, or, when the provider was installed some other
/// way, `OTEL_SEMCONV_STABILITY_OPT_IN` from the process environment.
///
/// Calls with the same name share one instrument cache until the global
/// provider is replaced (for example by a new
/// [`setup_telemetry`](../nemo_lens/fn.setup_telemetry.html)); after that the
/// next call starts a fresh cache on the new provider. The look-up takes a
/// lock: keep the handle rather than calling this per measurement.
///
/// ```
/// let a = nemo_lens::get_meter("nemo.lens");
/// let b = nemo_lens::get_meter("nemo.lens");
/// assert!(a.same_cache(&b));
/// ```
pub fn get_meter(name: impl Into<Cow<'static, str>>) -> Meter {
    let name = name.into();
    let provider = opentelemetry::global::meter_provider();
    // A poisoned registry only means another thread panicked mid-insert; the
    // map itself is still consistent, so keep serving it.
    let mut guard = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = guard.get_or_insert_with(Registry::default);
    let same_provider = registry
        .provider
        .as_ref()
        .is_some_and(|known| Weak::ptr_eq(known, &Arc::downgrade(&provider)));
    if !same_provider {
        registry.meters.clear();
        registry.provider = Some(Arc::downgrade(&provider));
    }
    let semconv = registry.semconv.clone().unwrap_or_else(|| {
        std::env::var(SEMCONV_STABILITY_OPT_IN)
            .map(|value| SemconvOptIn::parse(&value))
            .unwrap_or_default()
    });
    registry
        .meters
        .entry(name.clone())
        .or_insert_with(|| {
            Meter::new(provider.meter_with_scope(InstrumentationScope::builder(name).build()))
                .with_semconv_opt_in(semconv)
        })
        .clone()
}
