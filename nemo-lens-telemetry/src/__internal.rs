//! What the bridges use of setup that users do not. Not public API: the
//! `nemo-lens` facade never re-exports this module.

use std::sync::Weak;

use opentelemetry::metrics::MeterProvider as _;

use nemo_lens_core::__internal::bridge::{register, BridgeState};
use nemo_lens_core::__internal::meter_with_scope;
use nemo_lens_core::Meter;

use crate::TelemetryHandle;

/// The meter a bridge builds its instruments on: `handle`'s provider under
/// the bridge scope, where the exposition finds `state` for as long as it
/// lives; `None` when the handle records nothing.
pub fn bridge_meter(handle: &TelemetryHandle, state: Weak<dyn BridgeState>) -> Option<Meter> {
    let active = handle.active.as_ref()?;
    let scope = register(state);
    let otel = active.provider.meter_with_scope(scope.clone());
    // Histograms in nemo-lens's cells when the handle's exporters read them.
    Some(meter_with_scope(&handle.meter, otel, scope))
}
