//! Meters of the global OpenTelemetry provider, one cache per name.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use opentelemetry::metrics::MeterProvider;
use opentelemetry::InstrumentationScope;

use crate::slo::Objectives;
use crate::{Meter, SemconvOptIn, SEMCONV_STABILITY_OPT_IN};

type Provider = dyn MeterProvider + Send + Sync;

/// What the meters of a provider follow: a semantic-convention opt-in and
/// the latency objectives they judge requests against.
#[derive(Default, Clone)]
struct Settings {
    semconv: SemconvOptIn,
    objectives: Option<Objectives>,
}

#[derive(Default)]
struct Registry {
    /// The provider the cached meters were made on, and what they follow.
    provider: Option<(Weak<Provider>, Settings)>,
    meters: HashMap<Cow<'static, str>, Meter>,
    /// What a setup chose for the provider it installed.
    installed: Option<(Weak<Provider>, Settings)>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Notes the opt-in and objectives of a setup that has just installed the
/// global provider: meters from [`get_meter`] follow them while that
/// provider is installed.
pub fn set_installed(opt_in: SemconvOptIn, objectives: Option<Objectives>) {
    let provider = opentelemetry::global::meter_provider();
    let mut guard = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = guard.get_or_insert_with(Registry::default);
    let settings = Settings {
        semconv: opt_in,
        objectives,
    };
    registry.installed = Some((Arc::downgrade(&provider), settings));
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
            .map(|(_, settings)| settings.clone());
        // Read once per provider, not on every look-up.
        let settings = installed.unwrap_or_else(|| Settings {
            semconv: std::env::var(SEMCONV_STABILITY_OPT_IN)
                .map(|value| SemconvOptIn::parse(&value))
                .unwrap_or_default(),
            objectives: None,
        });
        registry.provider = Some((Arc::downgrade(&provider), settings));
    }
    let settings = registry
        .provider
        .as_ref()
        .map(|(_, settings)| settings.clone())
        .unwrap_or_default();
    let follow = move |meter: Meter| match settings.objectives {
        Some(objectives) => meter
            .with_semconv_opt_in(settings.semconv)
            .with_objectives(objectives),
        None => meter.with_semconv_opt_in(settings.semconv),
    };
    registry
        .meters
        .entry(name.clone())
        .or_insert_with(|| {
            if is_noop(&*provider) {
                // Records on OpenTelemetry's no-op provider reach nothing:
                // a disabled meter skips building the set and the calls
                // (a disabled record, not the no-op SDK's per instrument).
                return follow(Meter::noop());
            }
            follow(Meter::new(
                provider.meter_with_scope(InstrumentationScope::builder(name).build()),
            ))
        })
        .clone()
}

/// Whether `provider` is OpenTelemetry's no-op provider, the global one
/// until a provider is installed: the one provider with no state (zero
/// bytes), where the SDK's and any that records hold some.
fn is_noop(provider: &Provider) -> bool {
    std::mem::size_of_val(provider) == 0
}
