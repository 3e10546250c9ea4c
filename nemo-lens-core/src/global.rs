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
    /// The provider the cached meters were made on, and the opt-in they
    /// follow.
    provider: Option<(Weak<Provider>, SemconvOptIn)>,
    meters: HashMap<Cow<'static, str>, Meter>,
    /// The opt-in a setup chose for the provider it installed.
    installed: Option<(Weak<Provider>, SemconvOptIn)>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Notes the opt-in of a setup that has just installed the global provider:
/// meters from [`get_meter`] follow it while that provider is installed.
pub fn set_semconv_opt_in(opt_in: SemconvOptIn) {
    let provider = opentelemetry::global::meter_provider();
    let mut guard = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = guard.get_or_insert_with(Registry::default);
    registry.installed = Some((Arc::downgrade(&provider), opt_in));
    // A look-up between the install and this call may have cached a meter
    // with the environment's opt-in.
    registry.provider = None;
    registry.meters.clear();
}

/// The meter named `name` of the global OpenTelemetry provider.
///
/// It follows the semantic-convention opt-in of the `setup_telemetry` that
/// installed the provider, or, when the provider was installed some other
/// way, `OTEL_SEMCONV_STABILITY_OPT_IN` from the process environment.
///
/// Before any provider is installed (OpenTelemetry's global provider is
/// then its no-op one), the meter records nothing, at the cost of a
/// disabled meter (`is_enabled()` is false); as with OpenTelemetry's own
/// meters, it stays so after a provider is installed: call `get_meter`
/// again then.
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
        .is_some_and(|(known, _)| Weak::ptr_eq(known, &Arc::downgrade(&provider)));
    if !same_provider {
        registry.meters.clear();
        let installed = registry
            .installed
            .as_ref()
            .filter(|(known, _)| Weak::ptr_eq(known, &Arc::downgrade(&provider)))
            .map(|(_, opt_in)| opt_in.clone());
        // Read once per provider, not on every look-up.
        let opt_in = installed.unwrap_or_else(|| {
            std::env::var(SEMCONV_STABILITY_OPT_IN)
                .map(|value| SemconvOptIn::parse(&value))
                .unwrap_or_default()
        });
        registry.provider = Some((Arc::downgrade(&provider), opt_in));
    }
    let opt_in = registry
        .provider
        .as_ref()
        .map(|(_, opt_in)| opt_in.clone())
        .unwrap_or_default();
    registry
        .meters
        .entry(name.clone())
        .or_insert_with(|| {
            if is_noop(&*provider) {
                // Records on OpenTelemetry's no-op provider reach nothing:
                // a disabled meter skips building the set and the calls
                // (a disabled record, not the no-op SDK's per instrument).
                return Meter::noop().with_semconv_opt_in(opt_in);
            }
            Meter::new(provider.meter_with_scope(InstrumentationScope::builder(name).build()))
                .with_semconv_opt_in(opt_in)
        })
        .clone()
}

/// Whether `provider` is OpenTelemetry's no-op provider, the global one
/// until a provider is installed: the one provider with no state (zero
/// bytes), where the SDK's and any that records hold some.
fn is_noop(provider: &Provider) -> bool {
    std::mem::size_of_val(provider) == 0
}
